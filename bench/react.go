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
// calls, one per turn, then answers. Its tool runs with no timeout, as LangGraph's ToolNode runs
// tools, so that both sides of the comparison do the same work: the executor then calls it on the
// node's goroutine.
func ReactAgent(n int, saver checkpoint.Saver) (*graph.Compiled[react.State], error) {
	return ReactAgentWith(n, saver, &tool.ExecutorOptions{Timeout: -1})
}

// ReactAgentWith is [ReactAgent] with the tool executor's options: nil gives trellis's defaults,
// where each call has a timeout (tool.DefaultTimeout) and runs on a goroutine of its own so that
// a call past it can be abandoned.
func ReactAgentWith(n int, saver checkpoint.Saver, exec *tool.ExecutorOptions) (*graph.Compiled[react.State], error) {
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
		Executor: exec,
		MaxTurns: 1 << 30,
		Compile:  graph.CompileOptions{Saver: saver},
	})
}
