package server

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trellis-go/trellis/graph"
)

type essayIn struct {
	Topic string `json:"topic"`
}

type essayOut struct {
	Essay    string `json:"essay"`
	Approved bool   `json:"approved"`
}

// TestServeEntrypoint: an entrypoint of the functional API is served like any graph: its run
// streams task updates, pauses at an interrupt, resumes with a command without running its
// finished task again, and its thread's state holds its return value.
func TestServeEntrypoint(t *testing.T) {
	t.Parallel()
	var writes atomic.Int64
	write := graph.NewTask("write", func(ctx context.Context, topic string) (string, error) {
		writes.Add(1)
		return "an essay about " + topic, nil
	})
	build := func(deps Deps) (graph.Runnable, error) {
		ep, err := graph.NewEntrypoint("essay", func(ctx context.Context, in essayIn) (essayOut, error) {
			essay, err := write.Call(ctx, in.Topic).Get()
			if err != nil {
				return essayOut{}, err
			}
			ok, err := graph.InterruptAs[bool](ctx, map[string]any{"essay": essay, "question": "approve?"})
			if err != nil {
				return essayOut{}, err
			}
			return essayOut{Essay: essay, Approved: ok}, nil
		}, graph.CompileOptions{Saver: deps.Saver, Store: deps.Store})
		if err != nil {
			return nil, err
		}
		return ep.Runnable(), nil
	}
	b := setup(t, setupOpts{extra: []GraphSpec{{ID: "essay", Build: build}}})
	tid := b.newThread(nil)
	body := map[string]any{"assistant_id": "essay", "input": map[string]any{"topic": "cats"}, "stream_mode": []string{"updates"}}
	resp, evs := b.stream("POST", "/threads/"+tid+"/runs/stream", body, nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	var updates []string
	for _, e := range evs {
		if e.Event == "updates" {
			updates = append(updates, string(e.Data))
		}
	}
	if len(updates) != 2 || !strings.Contains(updates[0], `"write":"an essay about cats"`) || !strings.Contains(updates[1], "__interrupt__") {
		t.Fatalf("updates %q", updates)
	}
	var st ThreadState
	b.mustDo("GET", "/threads/"+tid+"/state", nil, &st, 200)
	if !slices.Equal(st.Next, []string{"essay"}) || len(st.Interrupts) != 1 {
		t.Fatalf("state: next %v interrupts %v", st.Next, st.Interrupts)
	}
	var out essayOut
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "essay", "command": map[string]any{"resume": true}}, &out, 200)
	if out.Essay != "an essay about cats" || !out.Approved {
		t.Fatalf("resumed output %+v", out)
	}
	if writes.Load() != 1 {
		t.Fatalf("the write task ran %d times, want once", writes.Load())
	}
	var after struct {
		Values json.RawMessage `json:"values"`
	}
	b.mustDo("GET", "/threads/"+tid+"/state", nil, &after, 200)
	if !strings.Contains(string(after.Values), `"approved":true`) {
		t.Fatalf("thread values %s", after.Values)
	}
}
