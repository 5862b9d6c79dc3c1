package graph_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

// chatty: a model node that streams two chunks and emits a progress value, then a tool node.
func chatty(t *testing.T) *graph.Compiled[S] {
	g := graph.New[S]()
	g.AddNode("model", func(ctx context.Context, s S) (S, error) {
		graph.Emit(ctx, map[string]any{"progress": 0.5})
		for _, part := range []string{"Hel", "lo"} {
			graph.EmitMessage(ctx, graph.MessageChunk{Message: message.Message{ID: "m1", Role: message.RoleAssistant, Content: part}, Metadata: map[string]any{"model": "scripted"}})
		}
		return S{Messages: []message.Message{{ID: "m1", Role: message.RoleAssistant, Content: "Hello"}}}, nil
	}, graph.NodeMetadata(map[string]any{"kind": "llm"}))
	g.AddNode("tool", func(ctx context.Context, s S) (S, error) { return S{Count: 1}, nil })
	g.AddSequence(graph.START, "model", "tool", graph.END)
	c, _ := withSaver(t, g)
	return c
}

func TestStreamValuesByDefault(t *testing.T) {
	c := chatty(t)
	evs, err := collect(c.Stream(bg, S{Answer: "in"}, graph.WithThread("t")))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3 values events (input, model, tool): %+v", len(evs), evs)
	}
	for i, ev := range evs {
		if ev.Mode != graph.ModeValues || ev.Step != i || ev.NS != nil {
			t.Fatalf("event %d: %+v", i, ev)
		}
		if ev.Data.(S).Answer != "in" {
			t.Fatalf("event %d lacks the input: %+v", i, ev.Data)
		}
	}
	if got := evs[2].Data.(S); got.Count != 1 || len(got.Messages) != 1 {
		t.Fatalf("final values %+v", got)
	}
	// Invoke is the same run consumed to the end.
	out, err := c.Invoke(bg, S{Answer: "in"}, graph.WithThread("u"))
	if err != nil || !reflect.DeepEqual(out, evs[2].Data.(S)) {
		t.Fatalf("Invoke returned %+v, %v; the stream ended with %+v", out, err, evs[2].Data)
	}
}

func TestStreamUpdates(t *testing.T) {
	evs, err := collect(chatty(t).Stream(bg, S{}, graph.WithThread("t"), graph.WithStreamModes(graph.ModeUpdates)))
	if err != nil {
		t.Fatal(err)
	}
	if got := updatedNodes(evs); !slices.Equal(got, []string{"model", "tool"}) {
		t.Fatalf("updates from %q", got)
	}
	if up := evs[1].Data.(S); up.Count != 1 || up.Messages != nil {
		t.Fatalf("tool's update %+v, want only its write", up)
	}
	if evs[0].TaskID == "" || evs[0].TaskID == evs[1].TaskID {
		t.Fatalf("task IDs %q %q", evs[0].TaskID, evs[1].TaskID)
	}
}

func TestStreamMessagesAndCustom(t *testing.T) {
	c := chatty(t)
	evs, err := collect(c.Stream(bg, S{}, graph.WithThread("t"), graph.WithStreamModes(graph.ModeMessages, graph.ModeCustom)))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 {
		t.Fatalf("%d events, want 1 custom and 2 messages: %+v", len(evs), evs)
	}
	if evs[0].Mode != graph.ModeCustom || !reflect.DeepEqual(evs[0].Data, map[string]any{"progress": 0.5}) || evs[0].Node != "model" {
		t.Fatalf("custom event %+v", evs[0])
	}
	var text string
	for _, ev := range evs[1:] {
		chunk := ev.Data.(graph.MessageChunk)
		if ev.Mode != graph.ModeMessages || ev.Node != "model" || ev.Step != 1 || ev.TaskID == "" || chunk.Metadata["model"] != "scripted" {
			t.Fatalf("message event %+v", ev)
		}
		text += chunk.Message.Content
	}
	if text != "Hello" {
		t.Fatalf("chunks say %q", text)
	}
}

func TestStreamOnlyTheModesAskedFor(t *testing.T) {
	for _, mode := range graph.AllModes {
		t.Run(string(mode), func(t *testing.T) {
			evs, err := collect(chatty(t).Stream(bg, S{}, graph.WithThread("t"), graph.WithStreamModes(mode)))
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) == 0 {
				t.Fatalf("no %s events", mode)
			}
			for _, ev := range evs {
				if ev.Mode != mode {
					t.Fatalf("asked for %s, got a %s event: %+v", mode, ev.Mode, ev)
				}
			}
		})
	}
}

func TestStreamTasksAndDebug(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("ok", func(ctx context.Context, s S) (S, error) { return S{Count: 2}, nil })
	g.AddNode("bad", func(ctx context.Context, s S) (S, error) { return S{}, errors.New("broken tool") })
	g.AddEdge(graph.START, "ok").AddEdge("ok", "bad")
	c, _ := withSaver(t, g)
	evs, err := collect(c.Stream(bg, S{}, graph.WithThread("t"), graph.WithStreamModes(graph.ModeTasks, graph.ModeDebug)))
	wantErr(t, err, "broken tool")
	tasks := ofMode(evs, graph.ModeTasks)
	if len(tasks) != 4 {
		t.Fatalf("%d task events, want start and finish for ok and bad", len(tasks))
	}
	start, done := tasks[0].Data.(graph.TaskEvent), tasks[1].Data.(graph.TaskEvent)
	if start.Name != "ok" || start.Finished || done.Name != "ok" || !done.Finished || done.Result.(S).Count != 2 || start.ID != done.ID {
		t.Fatalf("ok's task events %+v %+v", start, done)
	}
	failed := tasks[3].Data.(graph.TaskEvent)
	if failed.Name != "bad" || !failed.Finished || failed.Error == "" || failed.Result != nil {
		t.Fatalf("bad's finish %+v", failed)
	}
	var types []string
	for _, ev := range ofMode(evs, graph.ModeDebug) {
		types = append(types, ev.Data.(graph.DebugEvent).Type)
	}
	// The input checkpoint, then the one where the input applied (its __start__ task is
	// hidden, as in LangGraph), then ok's superstep and bad's.
	want := []string{"checkpoint", "checkpoint", "task", "task_result", "checkpoint", "task", "task_result"}
	if !slices.Equal(types, want) {
		t.Fatalf("debug events %q, want %q", types, want)
	}
}

func TestStreamTaskEventCarriesInterrupts(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("ask", func(ctx context.Context, s S) (S, error) {
		_, err := graph.Interrupt(ctx, "?")
		return S{}, err
	})
	g.AddEdge(graph.START, "ask")
	c, _ := withSaver(t, g)
	evs, err := collect(c.Stream(bg, S{}, graph.WithThread("t"), graph.WithStreamModes(graph.ModeTasks)))
	interrupted(t, err)
	if done := evs[len(evs)-1].Data.(graph.TaskEvent); len(done.Interrupts) != 1 || done.Interrupts[0].Value != "?" {
		t.Fatalf("finish event %+v", done)
	}
}

func TestStreamFromConcurrentNodesLosesNothing(t *testing.T) {
	g := graph.New[S]()
	for i := range 5 {
		name := fmt.Sprint("n", i)
		g.AddNode(name, func(ctx context.Context, s S) (S, error) {
			for j := range 100 {
				graph.Emit(ctx, fmt.Sprint(name, "/", j))
			}
			return S{}, nil
		})
		g.AddEdge(graph.START, name)
	}
	evs, err := collect(compile(t, g).Stream(bg, S{}, graph.WithStreamModes(graph.ModeCustom)))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 500 {
		t.Fatalf("%d custom events, want 500", len(evs))
	}
	// Per node, events keep their order.
	lastSeen := map[string]int{}
	for _, ev := range evs {
		var node string
		var j int
		fmt.Sscanf(ev.Data.(string), "n%1s/%d", &node, &j)
		if prev, ok := lastSeen[ev.Node]; ok && j != prev+1 {
			t.Fatalf("%s: event %d after %d", ev.Node, j, prev)
		}
		lastSeen[ev.Node] = j
	}
}

func TestStreamEndsWithTheRunsError(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("bad", func(ctx context.Context, s S) (S, error) { return S{}, errors.New("nope") })
	g.AddEdge(graph.START, "bad")
	var errs []error
	n := 0
	for _, err := range compile(t, g).Stream(bg, S{}) {
		n++
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) != 1 || n != 2 {
		t.Fatalf("%d events, errors %v; want the input's values then one error", n, errs)
	}
}

func TestParseStreamMode(t *testing.T) {
	for _, m := range graph.AllModes {
		got, err := graph.ParseStreamMode(string(m))
		if err != nil || got != m {
			t.Fatalf("ParseStreamMode(%q) = %q, %v", m, got, err)
		}
	}
	_, err := graph.ParseStreamMode("value")
	wantErr(t, err, `"value"`, "values, updates")
}

func TestInfoFrom(t *testing.T) {
	g := graph.New[S]()
	var info graph.Info
	g.AddNode("who", func(ctx context.Context, s S) (S, error) {
		info, _ = graph.InfoFrom(ctx)
		return S{}, nil
	})
	g.AddEdge(graph.START, "who")
	c, _ := withSaver(t, g)
	if _, err := c.Invoke(bg, S{}, graph.WithThread("th"), graph.WithConfig(map[string]any{"user": "ada"})); err != nil {
		t.Fatal(err)
	}
	if info.Node != "who" || info.ThreadID != "th" || info.Step != 1 || info.Config["user"] != "ada" || info.TaskID == "" {
		t.Fatalf("info %+v", info)
	}
	if _, ok := graph.InfoFrom(bg); ok {
		t.Fatal("InfoFrom outside a node reports ok")
	}
}

func TestUpdatesCarryTheMessageIDsTheStateGot(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("say", func(ctx context.Context, s S) (S, error) {
		return S{Messages: []message.Message{message.Assistant("no id given")}}, nil
	})
	g.AddEdge(graph.START, "say")
	evs, err := collect(compile(t, g).Stream(bg, S{}, graph.WithStreamModes(graph.ModeUpdates, graph.ModeValues)))
	if err != nil {
		t.Fatal(err)
	}
	up := ofMode(evs, graph.ModeUpdates)[0].Data.(S).Messages[0]
	vals := ofMode(evs, graph.ModeValues)
	final := vals[len(vals)-1].Data.(S).Messages[0]
	if up.ID == "" || up.ID != final.ID {
		t.Fatalf("the update reports message ID %q, the state holds %q: a client cannot match them", up.ID, final.ID)
	}
}

// A node's messages without IDs get them when the task finishes: the task's result as the tasks
// stream reports it and the state hold the same IDs, so a client can tell a node's whole message
// from one it already has.
func TestTaskResultMessagesCarryTheStatesIDs(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("reply", func(ctx context.Context, s S) (S, error) {
		return S{Messages: []message.Message{message.Assistant("done")}}, nil
	})
	g.AddEdge(graph.START, "reply")
	c, _ := withSaver(t, g)
	evs, err := collect(c.Stream(bg, S{}, graph.WithThread("t"), graph.WithStreamModes(graph.ModeTasks, graph.ModeValues)))
	if err != nil {
		t.Fatal(err)
	}
	var result []message.Message
	for _, ev := range ofMode(evs, graph.ModeTasks) {
		if te := ev.Data.(graph.TaskEvent); te.Finished {
			result = te.Result.(S).Messages
		}
	}
	final := ofMode(evs, graph.ModeValues)
	state := final[len(final)-1].Data.(S).Messages
	if len(result) != 1 || len(state) != 1 || result[0].ID == "" || result[0].ID != state[0].ID {
		t.Fatalf("task result %+v, state %+v: want one message with the same ID", result, state)
	}
}
