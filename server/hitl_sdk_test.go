package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/tool"
)

// reviewedGraph is a ReAct agent whose send_email calls wait for a person's review in LangChain
// v1's human-in-the-loop format (react.HumanInTheLoop); the SDK end-to-end test answers its
// interrupts with Command({resume: {decisions: [...]}}). Its model asks for two emails, then
// reports the tools' results.
var reviewedGraph = GraphSpec{ID: "reviewed", Build: func(d Deps) (graph.Runnable, error) {
	type email struct {
		To   string `json:"to"`
		Body string `json:"body"`
	}
	send := tool.Must(tool.New("send_email", "Send an email.", func(_ context.Context, e email) (string, error) {
		return "sent to " + e.To + ": " + e.Body, nil
	}))
	m := scripted.New(scripted.Rule(func(req *model.Request) *model.Response {
		var results []string
		for _, msg := range req.Messages {
			if msg.Role == message.RoleTool {
				results = append(results, msg.Text())
			}
		}
		if len(results) > 0 {
			return &model.Response{Message: message.Assistant(strings.Join(results, "; ")), FinishReason: model.FinishStop}
		}
		call := func(id, to string) message.ToolCall {
			return message.ToolCall{ID: id, Name: "send_email", Arguments: json.RawMessage(fmt.Sprintf(`{"to":%q,"body":"hello"}`, to))}
		}
		return &model.Response{Message: message.Assistant("", call("e1", "team@example.com"), call("e2", "all@example.com")), FinishReason: model.FinishToolCalls}
	}))
	m.Repeat = true
	hitl, err := react.HumanInTheLoop(react.HumanInTheLoopOptions{Tools: map[string]*react.ToolReview{"send_email": {Description: "Email about to be sent"}}})
	if err != nil {
		return nil, err
	}
	return graph.Erase(react.New(m, &react.Options{Tools: []tool.Tool{send}, Middleware: []react.Middleware{hitl},
		Compile: graph.CompileOptions{Name: "reviewed", Saver: d.Saver}}))
}}
