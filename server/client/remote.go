package client

import (
	"context"
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server/internal/lcwire"
)

// RemoteOptions configure [Remote]. Nil options, and every zero field, are the defaults.
type RemoteOptions struct {
	// Config and Context are sent with every run of the remote assistant.
	Config  map[string]any
	Context map[string]any
	// Thread names the remote thread a run of the node uses; nil derives one from the local
	// thread and the node's name (created on first use), so that a conversation held by the
	// remote assistant goes on across the local graph's turns. It returns "" for a stateless
	// run, which is also what a local graph run without a thread gets.
	Thread func(ctx context.Context, info graph.Info) string
}

// Remote returns a graph node for state S that runs an assistant of another server (trellis or
// the LangGraph API) through c, as LangGraph's RemoteGraph does: the node's state is the run's
// input (its messages in LangChain's shape), and the run's final values, read back into S, are
// the node's update. The remote run's message tokens and custom events stream into the local
// graph's messages and custom modes as they arrive. When the remote run pauses on an interrupt,
// the local graph pauses with the same value; the answer it is resumed with resumes the remote
// thread (which needs a local thread, so that the node can find its remote thread again).
//
//	g.AddNode("research", client.Remote[State](c, "researcher", nil))
func Remote[S any](c *Client, assistantID string, o *RemoteOptions) graph.NodeFunc[S] {
	var opts RemoteOptions
	if o != nil {
		opts = *o
	}
	if opts.Thread == nil {
		opts.Thread = derivedThread(c.t.base, assistantID)
	}
	r := &remote[S]{c: c, assistant: assistantID, opts: opts}
	return r.run
}

type remote[S any] struct {
	c         *Client
	assistant string
	opts      RemoteOptions
}

// Metadata keys on the remote thread: which local task last used it, and how many answers to
// its interrupts that task has passed on, so that a task run again after the local graph's
// resume replays the answers it already sent and sends only the new one.
const (
	metaTask    = "trellis_remote_task"
	metaAnswers = "trellis_remote_answers"
)

func (r *remote[S]) run(ctx context.Context, s S) (S, error) {
	var zero S
	info, _ := graph.InfoFrom(ctx)
	thread := r.opts.Thread(ctx, info)
	req := &RunRequest{AssistantID: r.assistant, Config: r.opts.Config, Context: r.opts.Context,
		StreamMode: []string{"values", "messages-tuple", "custom"}}
	sent := 0
	if thread != "" {
		req.IfNotExists = "create"
		th, err := r.c.Threads.Get(ctx, thread)
		switch {
		case IsNotFound(err):
		case err != nil:
			return zero, fmt.Errorf("client: remote %q: %w", r.assistant, err)
		case th.Status == "interrupted" && th.Metadata[metaTask] == info.TaskID:
			// The local graph was resumed: replay the answers this task already passed on, and
			// pass on the new one.
			if n, ok := th.Metadata[metaAnswers].(float64); ok {
				sent = int(n)
			}
			for range sent {
				if _, err := graph.Interrupt(ctx, nil); err != nil {
					return zero, err
				}
			}
			st, err := r.c.Threads.State(ctx, thread, "")
			if err != nil {
				return zero, fmt.Errorf("client: remote %q: %w", r.assistant, err)
			}
			answer, err := graph.Interrupt(ctx, interruptValue(st.Pending()))
			if err != nil {
				return zero, err
			}
			req.Command = &Command{Resume: answer}
			sent++
		}
	}
	if req.Command == nil {
		req.Input = lcwire.Value(s)
	}
	for {
		values, err := r.stream(ctx, thread, req)
		if err != nil {
			return zero, err
		}
		var pending []Interrupt
		if thread != "" {
			st, err := r.c.Threads.State(ctx, thread, "")
			if err != nil {
				return zero, fmt.Errorf("client: remote %q: reading its state: %w", r.assistant, err)
			}
			values, pending = st.Values, st.Pending()
		}
		if len(pending) == 0 {
			return decodeState[S](values)
		}
		if _, err := r.c.Threads.Update(ctx, thread, map[string]any{metaTask: info.TaskID, metaAnswers: sent}); err != nil {
			return zero, fmt.Errorf("client: remote %q: %w", r.assistant, err)
		}
		answer, err := graph.Interrupt(ctx, interruptValue(pending))
		if err != nil {
			return zero, err // the local graph pauses; its resume runs this node again
		}
		req.Input, req.Command = nil, &Command{Resume: answer}
		sent++
	}
}

// stream runs once, passing the remote tokens and custom events on, and returns the last values.
func (r *remote[S]) stream(ctx context.Context, thread string, req *RunRequest) (json.RawMessage, error) {
	var values json.RawMessage
	for part, err := range r.c.Runs.Stream(ctx, thread, req) {
		if err != nil {
			return nil, fmt.Errorf("client: remote %q: %w", r.assistant, err)
		}
		event, _, _ := strings.Cut(part.Event, "|")
		switch event {
		case "values":
			values = part.Data
		case "custom":
			var v any
			if json.Unmarshal(part.Data, &v) == nil {
				graph.Emit(ctx, v)
			}
		case "messages":
			var tuple []json.RawMessage
			if json.Unmarshal(part.Data, &tuple) != nil || len(tuple) == 0 {
				continue
			}
			var raw map[string]any
			if json.Unmarshal(tuple[0], &raw) != nil {
				continue
			}
			msg, err := lcwire.ToMessage(raw)
			if err != nil {
				continue
			}
			md := map[string]any{"remote_assistant": r.assistant}
			if len(tuple) > 1 {
				_ = json.Unmarshal(tuple[1], &md)
				md["remote_assistant"] = r.assistant
			}
			graph.EmitMessage(ctx, graph.MessageChunk{Message: msg, Metadata: md})
		case "error":
			return nil, &RemoteRunError{Assistant: r.assistant, Body: string(part.Data)}
		}
	}
	return values, nil
}

// RemoteRunError is a remote run that ended with an error event.
type RemoteRunError struct {
	Assistant string
	Body      string
}

func (e *RemoteRunError) Error() string {
	return fmt.Sprintf("client: the remote assistant %q failed: %s", e.Assistant, e.Body)
}

// interruptValue is what the local graph pauses with: the remote interrupt's value, or the list
// of values when the remote run waits on several.
func interruptValue(pending []Interrupt) any {
	vals := make([]any, len(pending))
	for i, p := range pending {
		var v any
		_ = json.Unmarshal(p.Value, &v)
		vals[i] = v
	}
	if len(vals) == 1 {
		return vals[0]
	}
	return vals
}

// decodeState reads the remote values (messages in either shape) into S.
func decodeState[S any](values json.RawMessage) (S, error) {
	var out S
	if len(values) == 0 {
		return out, nil
	}
	raw, err := lcwire.Input(reflect.TypeFor[S](), values)
	if err != nil {
		return out, fmt.Errorf("client: the remote values do not fit %T: %w", out, err)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("client: the remote values do not fit %T: %w", out, err)
	}
	return out, nil
}

// derivedThread names the remote thread of a local thread's node: a UUID made from the server,
// the assistant, the local thread and the node, so the same node of the same conversation always
// finds its remote thread again.
func derivedThread(base, assistant string) func(context.Context, graph.Info) string {
	return func(_ context.Context, info graph.Info) string {
		if info.ThreadID == "" {
			return ""
		}
		sum := sha1.Sum([]byte(strings.Join([]string{base, assistant, info.ThreadID, info.NS, info.Node}, "\x00")))
		sum[6] = sum[6]&0x0f | 0x50 // version 5
		sum[8] = sum[8]&0x3f | 0x80 // RFC 4122 variant
		return fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
	}
}
