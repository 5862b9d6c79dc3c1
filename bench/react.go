package bench

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/tool"
)

// cyclingModel replays its responses in order and starts over after the last, like the fake
// chat model of LangGraph's react_agent benchmark.
type cyclingModel struct {
	mu        sync.Mutex
	responses []message.Message
	i         int
}

func (m *cyclingModel) next() message.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.responses[m.i]
	m.i = (m.i + 1) % len(m.responses)
	return r
}

func (m *cyclingModel) Generate(_ context.Context, _ *model.Request) (*model.Response, error) {
	return &model.Response{Message: m.next()}, nil
}

func (m *cyclingModel) Stream(_ context.Context, _ *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		r := m.next()
		if r.Content != "" && !yield(model.Chunk{Text: r.Content}, nil) {
			return
		}
		for i := range r.ToolCalls {
			if !yield(model.Chunk{ToolCall: &r.ToolCalls[i]}, nil) {
				return
			}
		}
		yield(model.Chunk{FinishReason: model.FinishStop}, nil)
	}
}

// ReactAgent builds react_agent_N: the prebuilt ReAct agent whose scripted model makes n tool
// calls, one per turn, then answers.
func ReactAgent(n int, saver checkpoint.Saver) (*graph.Compiled[react.State], error) {
	type args struct {
		Query string `json:"query"`
	}
	search, err := tool.New(uuid.NewString(), "", func(_ context.Context, a args) (string, error) {
		return strings.Repeat("result for query: "+a.Query, 10), nil
	})
	if err != nil {
		return nil, err
	}
	var responses []message.Message
	for range n {
		q, _ := json.Marshal(args{Query: strings.Repeat(uuid.NewString(), 100)})
		call := message.ToolCall{ID: uuid.NewString(), Name: search.Spec().Name, Arguments: q}
		m := message.Assistant("", call)
		m.ID = uuid.NewString()
		responses = append(responses, m)
	}
	final := message.Assistant(strings.Repeat("answer", 100))
	final.ID = uuid.NewString()
	responses = append(responses, final)
	return react.New(&cyclingModel{responses: responses}, &react.Options{
		Tools:    []tool.Tool{search},
		MaxTurns: 1 << 30,
		Compile:  graph.CompileOptions{Saver: saver},
	})
}
