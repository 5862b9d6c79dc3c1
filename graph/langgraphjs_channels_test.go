package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

// chanState is the state of testdata/langgraphjs/channels.mjs's graphs: an appended log, an
// EphemeralValue and an UntrackedValue.
type chanState struct {
	Log    []string `json:"log" reduce:"append"`
	Hint   string   `json:"hint" channel:"ephemeral"`
	APIKey string   `json:"api_key" channel:"untracked"`
}

// chanTwins are the trellis twins of channels.mjs's graphs, with their inputs and resume values.
func chanTwins(t *testing.T) map[string]struct {
	c      *graph.Compiled[chanState]
	in     chanState
	resume any
} {
	seen := func(who string, s chanState) chanState {
		return chanState{Log: []string{fmt.Sprintf("%s hint=%s key=%s", who, s.Hint, s.APIKey)}}
	}
	logs := func(who string) graph.NodeFunc[chanState] {
		return func(_ context.Context, s chanState) (chanState, error) { return seen(who, s), nil }
	}
	fixed := func(line string) graph.NodeFunc[chanState] {
		return func(context.Context, chanState) (chanState, error) { return chanState{Log: []string{line}}, nil }
	}
	plan := func(context.Context, chanState) (chanState, error) {
		return chanState{Log: []string{"plan"}, Hint: "brief", APIKey: "k1"}, nil
	}
	out := map[string]struct {
		c      *graph.Compiled[chanState]
		in     chanState
		resume any
	}{}
	add := func(name string, g *graph.Graph[chanState], in chanState, resume any) {
		c, err := g.Compile(graph.CompileOptions{Saver: checkpoint.NewMemorySaver()})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = struct {
			c      *graph.Compiled[chanState]
			in     chanState
			resume any
		}{c, in, resume}
	}

	g := graph.New[chanState]()
	g.AddNode("plan", plan).AddNode("think", logs("think")).AddNode("check", logs("check"))
	g.AddSequence(graph.START, "plan", "think", "check", graph.END)
	add("ephemeral", g, chanState{}, nil)

	g = graph.New[chanState]()
	g.AddNode("first", logs("first")).AddNode("second", logs("second"))
	g.AddSequence(graph.START, "first", "second", graph.END)
	add("ephemeral_input", g, chanState{Hint: "from input", APIKey: "k0"}, nil)

	g = graph.New[chanState]()
	g.AddNode("plan", plan).AddNode("done", logs("done"))
	g.AddNode("ask", func(ctx context.Context, s chanState) (chanState, error) {
		v, err := graph.Interrupt(ctx, "ok?")
		if err != nil {
			return chanState{}, err
		}
		return seen(fmt.Sprint("ask:", v), s), nil
	})
	g.AddSequence(graph.START, "plan", "ask", "done", graph.END)
	add("ephemeral_interrupt", g, chanState{}, "yes")

	g = graph.New[chanState]()
	g.AddNode("a", fixed("a")).AddNode("b", fixed("b")).AddNode("b2", fixed("b2")).AddNode("c", fixed("c"))
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "b").AddEdge("b", "b2").AddEdge("c", graph.END)
	g.AddJoin([]string{"a", "b2"}, "c")
	add("barrier", g, chanState{}, nil)

	g = graph.New[chanState]()
	g.AddNode("a", fixed("a")).AddNode("c", fixed("c"))
	g.AddNode("b", func(ctx context.Context, _ chanState) (chanState, error) {
		v, err := graph.Interrupt(ctx, "go?")
		if err != nil {
			return chanState{}, err
		}
		return chanState{Log: []string{fmt.Sprint("b:", v)}}, nil
	})
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "b").AddEdge("c", graph.END)
	g.AddJoin([]string{"a", "b"}, "c")
	add("barrier_interrupt", g, chanState{}, "go")
	return out
}

// chanNorm gives a state or an update one shape on both sides: a key LangGraph leaves out (an
// empty channel) and trellis's zero value are both absent; an absent log is empty.
func chanNorm(m map[string]any) string {
	out := map[string]any{"log": []any{}}
	for k, v := range m {
		if v == nil || v == "" {
			continue
		}
		out[k] = v
	}
	raw, _ := json.Marshal(out)
	return string(raw)
}

// chanSummary reduces a run to what both sides must agree on: the values stream (without the
// interrupt values LangGraph.js sends, see TestLangGraphJSSideBySide), the updates (node, what
// it wrote, whether it was cached; in a stable order), each checkpoint's next and values as
// streamed, and the history's next and values (without LangGraph's step -1 input checkpoint
// when trellis writes none).
func chanSummary(r twinRun, dropInput bool) (values, updates, checkpoints, history []string) {
	for _, v := range r.Values {
		if _, ok := v["__interrupt__"]; !ok {
			values = append(values, chanNorm(v))
		}
	}
	for _, u := range r.Updates {
		_, cached := u["__metadata__"]
		for node, v := range u {
			switch node {
			case "__metadata__":
			case "__interrupt__":
				updates = append(updates, node)
			default:
				m, _ := v.(map[string]any)
				updates = append(updates, fmt.Sprintf("%s %s cached=%v", node, chanNorm(m), cached))
			}
		}
	}
	slices.Sort(updates)
	cps := r.Checkpoints
	if dropInput && len(cps) > 0 && cps[0]["metadata"].(map[string]any)["source"] == "input" {
		cps = cps[1:]
	}
	for _, c := range cps {
		m, _ := c["values"].(map[string]any)
		checkpoints = append(checkpoints, fmt.Sprint("next ", c["next"], " ", chanNorm(m)))
	}
	hist := r.History
	if dropInput && len(hist) > 0 && hist[0].Source == "input" {
		hist = hist[1:]
	}
	for _, h := range hist {
		history = append(history, fmt.Sprint("next ", h.Next, " ", chanNorm(h.Values)))
	}
	return values, updates, checkpoints, history
}

// TestLangGraphJSChannels runs graphs using LangGraph's EphemeralValue, UntrackedValue and
// NamedBarrierValue in LangGraph.js 1.7.3 (testdata/langgraphjs/channels.mjs) and their twins
// using trellis's channel:"ephemeral", channel:"untracked" and AddJoin, and compares what each
// node read (the log), the values, updates and checkpoints streams, and the thread's history:
// so what is cleared, what is checkpointed and when a join fires are LangGraph's. LangGraph.js
// has no RemainingSteps managed value (LangGraph Python's), so that one is tested on its own
// (TestRemainingStepsCountsDownToTheLimit).
func TestLangGraphJSChannels(t *testing.T) {
	js := runLangGraphJS(t, "channels.mjs")
	for name, tw := range chanTwins(t) {
		t.Run(name, func(t *testing.T) {
			want, ok := js[name]
			if !ok {
				t.Fatalf("channels.mjs has no graph %q", name)
			}
			got := runTwin(t, tw.c, name, tw.in, tw.resume)
			// Excluded, as in TestLangGraphJSSideBySide: LangGraph sends no values for an input
			// that writes nothing; trellis sends the state unchanged.
			if reflect.DeepEqual(tw.in, chanState{}) && len(got.Values) > 0 {
				got.Values = got.Values[1:]
			}
			noInput := len(got.History) > 0 && got.History[0].Source != "input"
			gv, gu, gc, gh := chanSummary(got, false)
			wv, wu, wc, wh := chanSummary(want, noInput)
			for _, d := range []struct {
				what      string
				got, want []string
			}{{"values stream", gv, wv}, {"updates stream", gu, wu}, {"checkpoints stream", gc, wc}, {"history", gh, wh}} {
				if !reflect.DeepEqual(d.got, d.want) {
					t.Errorf("%s:\n trellis    %q\n langgraph  %q", d.what, d.got, d.want)
				}
			}
		})
	}
}
