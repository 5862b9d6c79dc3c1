package graph_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

func TestReducerLastValueKeepsLastWrite(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("first", func(ctx context.Context, s S) (S, error) { return S{Answer: "one"}, nil })
	g.AddNode("second", func(ctx context.Context, s S) (S, error) { return S{Answer: s.Answer + " two"}, nil })
	g.AddSequence(graph.START, "first", "second", graph.END)
	out, err := compile(t, g).Invoke(bg, S{Answer: "zero"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Answer != "one two" {
		t.Fatalf("answer = %q, want %q", out.Answer, "one two")
	}
}

func TestReducerLastValueTwoWritersIsAnError(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("left", func(ctx context.Context, s S) (S, error) { return S{Answer: "l"}, nil })
	g.AddNode("right", func(ctx context.Context, s S) (S, error) { return S{Answer: "r"}, nil })
	g.AddNode("after", note("after"))
	g.AddEdge(graph.START, "left").AddEdge(graph.START, "right").AddJoin([]string{"left", "right"}, "after")
	_, err := compile(t, g).Invoke(bg, S{})
	wantErr(t, err, `"answer"`, `"left"`, `"right"`, "superstep 1")
}

// TestReducerLastValueTwoWritersWithCheckpoints: as LangGraph, the failed superstep changes
// nothing that was saved, its tasks' outcomes stay recorded, and reading the thread's newest
// state refuses with the same invalid-update error (LangGraph.js's getState throws
// InvalidUpdateError there) rather than showing a state that silently drops both writes.
func TestReducerLastValueTwoWritersWithCheckpoints(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("left", func(ctx context.Context, s S) (S, error) { return S{Answer: "l"}, nil })
	g.AddNode("right", func(ctx context.Context, s S) (S, error) { return S{Answer: "r"}, nil })
	g.AddEdge(graph.START, "left").AddEdge(graph.START, "right")
	c, _ := withSaver(t, g)
	_, err := c.Invoke(bg, S{Answer: "before"}, graph.WithThread("t"))
	wantErr(t, err, `"answer"`, `"left"`, `"right"`)
	if !errors.Is(err, graph.ErrInvalidUpdate) {
		t.Fatalf("run error %v, want ErrInvalidUpdate", err)
	}
	_, err = c.State(bg, refOf("t"))
	if !errors.Is(err, graph.ErrInvalidUpdate) {
		t.Fatalf("State: %v, want ErrInvalidUpdate", err)
	}
	hist := history(t, c, "t")
	last := hist[len(hist)-1]
	if last.Values.Answer != "before" || !slices.Equal(last.Next, []string{"left", "right"}) {
		t.Fatalf("the failed superstep changed the saved state: answer %q next %q", last.Values.Answer, last.Next)
	}
}

// TestReducerLastValueOneNodeWritingTwice: two writes from one node (graph.Write and the returned
// update) are two values for a key without a reducer in one superstep, which LangGraph refuses
// as it refuses two nodes' writes.
func TestReducerLastValueOneNodeWritingTwice(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("a", func(ctx context.Context, s S) (S, error) {
		if err := graph.Write(ctx, "answer", "one"); err != nil {
			return s, err
		}
		return S{Answer: "two"}, nil
	})
	g.AddSequence(graph.START, "a", graph.END)
	_, err := compile(t, g).Invoke(bg, S{})
	if !errors.Is(err, graph.ErrInvalidUpdate) {
		t.Fatalf("run error %v, want ErrInvalidUpdate", err)
	}
	wantErr(t, err, `"answer"`, `"a" twice`)
}

func TestReducerAppend(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("a", func(ctx context.Context, s S) (S, error) { return S{Notes: []string{"a1", "a2"}}, nil })
	g.AddNode("b", note("b"))
	g.AddSequence(graph.START, "a", "b", graph.END)
	out, err := compile(t, g).Invoke(bg, S{Notes: []string{"in"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"in", "a1", "a2", "b"}; !slices.Equal(out.Notes, want) {
		t.Fatalf("notes = %q, want %q", out.Notes, want)
	}
}

func TestReducerAppendSnapshotsDoNotAlias(t *testing.T) {
	// Two parallel nodes append to the slice they were given; neither may see the other's
	// element, and the state must hold both exactly once.
	g := graph.New[S]()
	seen := make(chan []string, 2)
	for _, name := range []string{"a", "b"} {
		g.AddNode(name, func(ctx context.Context, s S) (S, error) {
			mine := append(s.Notes, name) // would scribble on shared capacity if snapshots aliased
			seen <- mine
			return S{Notes: []string{name}}, nil
		})
		g.AddEdge(graph.START, name)
	}
	g.AddNode("seed", note("seed"))
	c := compile(t, g)
	out, err := c.Invoke(bg, S{Notes: make([]string, 1, 16)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"", "a", "b"}; !slices.Equal(out.Notes, want) {
		t.Fatalf("notes = %q, want %q", out.Notes, want)
	}
	close(seen)
	for s := range seen {
		if len(s) != 2 {
			t.Fatalf("a node saw %q", s)
		}
	}
}

func TestReducerMessages(t *testing.T) {
	step := 0
	g := graph.New[S]()
	g.AddNode("chat", func(ctx context.Context, s S) (S, error) {
		step++
		switch step {
		case 1: // replace the user's message in place, append a new one
			return S{Messages: []message.Message{
				{ID: "u1", Role: message.RoleUser, Content: "hello (edited)"},
				{ID: "a1", Role: message.RoleAssistant, Content: "hi"},
			}}, nil
		case 2: // remove one by ID, add one without an ID
			return S{Messages: []message.Message{message.Remove("s1"), message.Assistant("no id")}}, nil
		}
		return S{}, nil
	})
	g.AddEdge(graph.START, "chat").AddEdge("chat", graph.END)
	c, _ := withSaver(t, g)
	in := S{Messages: []message.Message{
		{ID: "s1", Role: message.RoleSystem, Content: "be brief"},
		{ID: "u1", Role: message.RoleUser, Content: "hello"},
	}}
	out, err := c.Invoke(bg, in, graph.WithThread("m"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"be brief", "hello (edited)", "hi"}; !slices.Equal(texts(out.Messages), want) {
		t.Fatalf("after replace+append: %q, want %q", texts(out.Messages), want)
	}
	out, err = c.Invoke(bg, S{}, graph.WithThread("m"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"hello (edited)", "hi", "no id"}; !slices.Equal(texts(out.Messages), want) {
		t.Fatalf("after remove: %q, want %q", texts(out.Messages), want)
	}
	if out.Messages[2].ID == "" {
		t.Fatal("a message added without an ID did not get one")
	}
	// The stored state replays to the same list, IDs included.
	snap, err := c.State(bg, refOf("m"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(snap.Values.Messages, out.Messages) {
		t.Fatalf("stored messages %+v differ from the output %+v", snap.Values.Messages, out.Messages)
	}
}

func TestReducerMessagesRemoveAll(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("reset", func(ctx context.Context, s S) (S, error) {
		return S{Messages: []message.Message{message.RemoveAll(), message.User("fresh start")}}, nil
	})
	g.AddEdge(graph.START, "reset")
	out, err := compile(t, g).Invoke(bg, S{Messages: []message.Message{message.User("a"), message.User("b")}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"fresh start"}; !slices.Equal(texts(out.Messages), want) {
		t.Fatalf("messages = %q, want %q", texts(out.Messages), want)
	}
}

func TestReducerMessagesRemoveUnknownIDFails(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("rm", func(ctx context.Context, s S) (S, error) {
		return S{Messages: []message.Message{message.Remove("ghost")}}, nil
	})
	g.AddEdge(graph.START, "rm")
	_, err := compile(t, g).Invoke(bg, S{Messages: []message.Message{message.User("a")}})
	wantErr(t, err, `"messages"`, `"ghost"`)
}

func TestReducerSumAndMerge(t *testing.T) {
	g := graph.New[S]()
	for _, name := range []string{"a", "b", "c"} {
		g.AddNode(name, func(ctx context.Context, s S) (S, error) {
			return S{Count: 2, Scores: map[string]int{name: len(name), "shared": 1}}, nil
		})
		g.AddEdge(graph.START, name)
	}
	out, err := compile(t, g).Invoke(bg, S{Count: 1, Scores: map[string]int{"in": 7, "shared": 0}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 7 {
		t.Fatalf("count = %d, want 7", out.Count)
	}
	if want := map[string]int{"in": 7, "shared": 1, "a": 1, "b": 1, "c": 1}; !reflect.DeepEqual(out.Scores, want) {
		t.Fatalf("scores = %v, want %v", out.Scores, want)
	}
}

type floatState struct {
	Total float64 `json:"total" reduce:"sum"`
	Small uint8   `json:"small" reduce:"sum"`
	Best  int     `json:"best"`
}

func TestReducerSumFloatAndUint(t *testing.T) {
	g := graph.New[floatState]()
	g.AddNode("a", func(ctx context.Context, s floatState) (floatState, error) {
		return floatState{Total: 0.5, Small: 3}, nil
	})
	g.AddNode("b", func(ctx context.Context, s floatState) (floatState, error) {
		return floatState{Total: 0.25, Small: 4}, nil
	})
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "b")
	out, err := compile(t, g).Invoke(bg, floatState{Total: 1})
	if err != nil {
		t.Fatal(err)
	}
	if out.Total != 1.75 || out.Small != 7 {
		t.Fatalf("got %+v, want total 1.75 and small 7", out)
	}
}

func TestSetReducerCustomOperator(t *testing.T) {
	g := graph.New[floatState]()
	graph.SetReducer(g, "best", func(cur, upd int) int { return max(cur, upd) })
	for i, name := range []string{"a", "b", "c"} {
		g.AddNode(name, func(ctx context.Context, s floatState) (floatState, error) {
			return floatState{Best: []int{5, 9, 2}[i]}, nil
		})
		g.AddEdge(graph.START, name)
	}
	c, saver := withSaver(t, g)
	out, err := c.Invoke(bg, floatState{Best: 3}, graph.WithThread("t"))
	if err != nil {
		t.Fatalf("a custom reducer must accept several writers in one superstep: %v", err)
	}
	if out.Best != 9 {
		t.Fatalf("best = %d, want 9", out.Best)
	}
	// The stored state rebuilds through the same operator.
	snap, err := c.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if snap.Values.Best != 9 {
		t.Fatalf("stored best = %d, want 9 (blobs: %+v)", snap.Values.Best, blobsOf(t, saver, "t", "best"))
	}
}

func TestSetReducerBadKeyOrType(t *testing.T) {
	g := graph.New[floatState]()
	graph.SetReducer(g, "nope", func(a, b int) int { return a })
	graph.SetReducer(g, "total", func(a, b int) int { return a })
	g.AddNode("a", func(ctx context.Context, s floatState) (floatState, error) { return s, nil })
	g.AddEdge(graph.START, "a")
	_, err := g.Compile()
	wantErr(t, err, `no key "nope"`, `"total" is float64`, "takes int")
}

type badReducer struct {
	Name string `json:"name" reduce:"append"`
}

type unknownReducer struct {
	Items []string `json:"items" reduce:"concat"`
}

func TestReducerTagErrors(t *testing.T) {
	g := graph.New[badReducer]()
	g.AddNode("a", func(ctx context.Context, s badReducer) (badReducer, error) { return s, nil })
	g.AddEdge(graph.START, "a")
	_, err := g.Compile()
	wantErr(t, err, `"name"`, `"append"`, "a slice", "string")

	g2 := graph.New[unknownReducer]()
	g2.AddNode("a", func(ctx context.Context, s unknownReducer) (unknownReducer, error) { return s, nil })
	g2.AddEdge(graph.START, "a")
	_, err = g2.Compile()
	wantErr(t, err, `"items"`, `unknown reducer "concat"`, "SetReducer")

	g3 := graph.New[int]()
	_, err = g3.Compile()
	wantErr(t, err, "must be a struct")
}

func TestOverwriteBypassesReducer(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("replace", func(ctx context.Context, s S) (S, error) {
		if err := graph.Overwrite(ctx, "notes", []string{"only"}); err != nil {
			return S{}, err
		}
		if err := graph.Overwrite(ctx, "count", 100); err != nil {
			return S{}, err
		}
		return S{}, nil
	})
	g.AddEdge(graph.START, "replace")
	c, _ := withSaver(t, g)
	out, err := c.Invoke(bg, S{Notes: []string{"x", "y"}, Count: 5}, graph.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Notes, []string{"only"}) || out.Count != 100 {
		t.Fatalf("got notes %q count %d, want [only] and 100", out.Notes, out.Count)
	}
	snap, err := c.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(snap.Values.Notes, []string{"only"}) || snap.Values.Count != 100 {
		t.Fatalf("stored notes %q count %d, want [only] and 100", snap.Values.Notes, snap.Values.Count)
	}
}

func TestOverwriteByTwoNodesIsAnError(t *testing.T) {
	g := graph.New[S]()
	for _, name := range []string{"a", "b"} {
		g.AddNode(name, func(ctx context.Context, s S) (S, error) {
			return S{}, graph.Overwrite(ctx, "notes", []string{name})
		})
		g.AddEdge(graph.START, name)
	}
	_, err := compile(t, g).Invoke(bg, S{})
	wantErr(t, err, `"notes"`, "overwritten", `"a"`, `"b"`)
}

func TestWriteZeroValue(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("clear", func(ctx context.Context, s S) (S, error) {
		if err := graph.Write(ctx, "answer", ""); err != nil {
			return S{}, err
		}
		if err := graph.Write(ctx, "flag", nil); err != nil { // nil means the zero value
			return S{}, err
		}
		return S{Count: 1}, nil
	})
	g.AddEdge(graph.START, "clear")
	out, err := compile(t, g).Invoke(bg, S{Answer: "old", Flag: true, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	if out.Answer != "" || out.Flag || out.Count != 2 {
		t.Fatalf("got %+v, want answer and flag cleared and count 2", out)
	}
}

func TestWriteBadInput(t *testing.T) {
	g := graph.New[S]()
	var errs []error
	g.AddNode("w", func(ctx context.Context, s S) (S, error) {
		errs = append(errs,
			graph.Write(ctx, "nope", 1),
			graph.Write(ctx, "answer", 42),
			graph.Overwrite(ctx, "notes", "not a list"),
		)
		return S{}, nil
	})
	g.AddEdge(graph.START, "w")
	if _, err := compile(t, g).Invoke(bg, S{}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, errs[0], `"w"`, `unknown state key "nope"`)
	wantErr(t, errs[1], `"w"`, "int", `"answer"`, "string")
	wantErr(t, errs[2], `"notes"`, "[]string")
	wantErr(t, graph.Write(context.Background(), "answer", "x"), "outside a running node")
}

func TestPartialUpdateLeavesOtherKeys(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("inc", func(ctx context.Context, s S) (S, error) { return S{Count: 1}, nil })
	g.AddEdge(graph.START, "inc")
	in := S{Answer: "keep", Notes: []string{"n"}, Flag: true, Scores: map[string]int{"k": 1}}
	out, err := compile(t, g).Invoke(bg, in)
	if err != nil {
		t.Fatal(err)
	}
	in.Count = 1
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("got %+v, want %+v", out, in)
	}
}

func TestDeterministicMergeOrder(t *testing.T) {
	// The slow node finishes last and was added first; writes apply in LangGraph's order, by node
	// name, every time, whatever the order of finishing or of adding.
	g := graph.New[S]()
	g.AddNode("slow", func(ctx context.Context, s S) (S, error) {
		time.Sleep(20 * time.Millisecond)
		return S{Notes: []string{"slow"}}, nil
	})
	g.AddNode("fast", note("fast"))
	g.AddNode("fast2", note("fast2"))
	g.AddEdge(graph.START, "fast2").AddEdge(graph.START, "slow").AddEdge(graph.START, "fast")
	c := compile(t, g)
	for range 3 {
		out, err := c.Invoke(bg, S{})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"fast", "fast2", "slow"}; !slices.Equal(out.Notes, want) {
			t.Fatalf("notes = %q, want the nodes' names in order %q", out.Notes, want)
		}
	}
}
