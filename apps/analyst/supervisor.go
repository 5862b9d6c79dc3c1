package analyst

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// The supervisors' tools, as the specification gives them.
var (
	researchSupervisorTools = []string{"rag_tool", "web_search_tool", "memory_search_tool", "write_memory_tool", "Question", "Done"}
	reportSupervisorTools   = []string{"memory_search_tool", "write_memory_tool", "Question", "Done"}
)

// supervisorTurns bounds the model calls of one supervisor loop.
const supervisorTurns = 6

// loopCall is one tool call a supervisor made, with what it returned.
type loopCall struct {
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args"`
	Result  string          `json:"result"`
	IsError bool            `json:"is_error,omitempty"`
}

// loopResult is what a supervisor's tool loop did.
type loopResult struct {
	Calls   []loopCall
	Answers []string // the user's answers to Question, in order
	Done    bool     // the model called Done
	Text    string   // the model's last text
}

// results returns the results of the successful calls of one tool.
func (r loopResult) results(tool string) []string {
	var out []string
	for _, c := range r.Calls {
		if c.Tool == tool && !c.IsError {
			out = append(out, c.Result)
		}
	}
	return out
}

// supervise runs a supervisor as a tool-calling agent: the supervisor model (the strong role)
// gets the system prompt, the brief and the named tools, and calls them until it calls Done,
// answers without a tool call, or reaches supervisorTurns. Tool failures go back to the model as
// error results; Question pauses the run through an inbox interrupt, and on resume the node runs
// again from its start (the model is asked again, and the Question call returns the answer).
//
// With the offline model the brief is written as steps ("search ... memory for ..., then write
// to episodic_memory memory "...", then done"), which the offline model follows from the tools'
// schemas, so the loop is deterministic.
func (a *Analyst) supervise(ctx context.Context, user, system, brief string, tools []string) (loopResult, error) {
	ctx = context.WithValue(ctx, userKey{}, user)
	m := a.superModel
	if m == nil {
		m = a.strong
	}
	return a.toolLoop(ctx, m, system, brief, tools)
}

// toolLoop runs m as a tool-calling agent over the named tools (see supervise). The calls of
// one turn run concurrently unless one of them is Question.
func (a *Analyst) toolLoop(ctx context.Context, m model.Model, system, brief string, tools []string) (loopResult, error) {
	var out loopResult
	specs := make([]model.ToolSpec, 0, len(tools))
	for _, name := range tools {
		t, ok := a.tools[name]
		if !ok {
			return out, fmt.Errorf("analyst: the supervisor's tool %q is not built", name)
		}
		specs = append(specs, t.Spec())
	}
	msgs := []message.Message{message.System(system), message.User(brief)}
	for turn := 0; turn < supervisorTurns && !out.Done; turn++ {
		resp, err := m.Generate(ctx, &model.Request{Messages: msgs, Tools: specs})
		if err != nil {
			return out, fmt.Errorf("analyst: the supervisor's model: %w", err)
		}
		msgs = append(msgs, resp.Message)
		if len(resp.Message.ToolCalls) == 0 {
			out.Text = resp.Message.Text()
			break
		}
		calls := resp.Message.ToolCalls
		done := make([]loopCall, len(calls))
		errs := make([]error, len(calls))
		run := func(i int) {
			call := calls[i]
			c := loopCall{Tool: call.Name, Args: call.Arguments}
			t, ok := a.tools[call.Name]
			if !ok || !contains(tools, call.Name) {
				c.Result, c.IsError = fmt.Sprintf("there is no tool %q here; use one of %s", call.Name, strings.Join(tools, ", ")), true
			} else {
				res, err := t.Call(ctx, call.Arguments)
				var ie *graph.InterruptedError
				switch {
				case errors.As(err, &ie):
					errs[i] = err // Question: the run pauses here
				case err != nil:
					c.Result, c.IsError = err.Error(), true
				default:
					c.Result, c.IsError = toolText(res.Text()), res.IsError
				}
			}
			done[i] = c
		}
		asks := false
		for _, call := range calls {
			asks = asks || call.Name == "Question"
		}
		if asks || len(calls) == 1 {
			for i := range calls {
				if run(i); errs[i] != nil {
					return out, errs[i]
				}
			}
		} else {
			var wg sync.WaitGroup
			for i := range calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					run(i)
				}()
			}
			wg.Wait()
		}
		for i, call := range calls {
			c := done[i]
			if !c.IsError {
				switch call.Name {
				case "Question":
					out.Answers = append(out.Answers, c.Result)
				case "Done":
					out.Done = true
				}
			}
			out.Calls = append(out.Calls, c)
			tm := message.ToolResult(call.ID, call.Name, c.Result)
			tm.IsError = c.IsError
			msgs = append(msgs, tm)
		}
	}
	return out, nil
}

// userKey carries the user the supervisors' tools act for: the state's, which in dev mode is the
// input's user_id rather than the run's principal.
type userKey struct{}

// toolText unquotes a tool's JSON string result.
func toolText(s string) string {
	var v string
	if json.Unmarshal([]byte(s), &v) == nil {
		return v
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// quote puts s in double quotes for a supervisor's brief, so that the offline model takes it
// as one argument (inner double quotes become single ones).
func quote(s string) string { return `"` + quotable(s) + `"` }

// quotable is s as quote puts it between the quotes.
func quotable(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), `"`, "'")
}

// vague reports whether a sub-question is too vague to research: fewer than two content words.
func vague(q string) bool { return len(contentWords(q)) < 2 }

// researchBrief is the research supervisor's brief for a round: ask about the first vague task
// the user wrote (never about a question the analyst wrote itself),
// then look up the user's preferences on the topic, then Done.
func researchBrief(topic string, tasks []Task) (brief string, asked int) {
	ask := ""
	asked = -1
	for i, t := range tasks {
		if t.FromUser && vague(t.Question) {
			ask = quote(sentence("question_too_vague", map[string]any{"Question": t.Question}))
			asked = i
			break
		}
	}
	return sentence("research_supervisor_brief", map[string]any{"Ask": ask, "Topic": clip(topic, 80)}), asked
}
