// Package bench holds trellis's runtime benchmarks: Go ports of the workloads in LangGraph's own
// benchmark suite (libs/langgraph/bench), run the way its driver runs them (a fresh thread per
// run, durability exit, every event of the updates mode streamed to the end), so that
// `go run ./bench/cmd/compare` can set them beside LangGraph.js and eino.
package bench

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strings"

	"github.com/trellis-go/trellis/cache"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

// MessagesState is LangGraph's MessagesState.
type MessagesState struct {
	Messages []message.Message `json:"messages" reduce:"messages"`
}

// Sequential builds sequential_N: N no-op nodes in a chain.
func Sequential(n int, saver checkpoint.Saver) (*graph.Compiled[MessagesState], error) {
	g := graph.New[MessagesState]()
	noop := func(context.Context, MessagesState) (MessagesState, error) { return MessagesState{}, nil }
	prev := graph.START
	for i := range n {
		name := fmt.Sprintf("node_%d", i)
		g.AddNode(name, noop)
		g.AddEdge(prev, name)
		prev = name
	}
	g.AddEdge(prev, graph.END)
	return g.Compile(graph.CompileOptions{Saver: saver})
}

// JokeParent is the state of fanout_to_subgraph's parent graph.
type JokeParent struct {
	Subjects []string `json:"subjects"`
	Jokes    []string `json:"jokes" reduce:"append"`
	// Subject is the payload each Send carries to the subgraph node.
	Subject string `json:"subject,omitempty"`
}

// JokeState is the subgraph's state: its jokes list keeps the last value.
type JokeState struct {
	Subject string   `json:"subject"`
	Jokes   []string `json:"jokes"`
}

// FanoutToSubgraph builds fanout_to_subgraph: the parent sends every subject to a subgraph
// that edits it, writes a joke, and bumps the joke until it ends with " a" ten times.
func FanoutToSubgraph(saver checkpoint.Saver) (*graph.Compiled[JokeParent], error) {
	tail := strings.Repeat(" a", 10)
	sub := graph.New[JokeState]()
	sub.AddNode("edit", func(_ context.Context, s JokeState) (JokeState, error) {
		return JokeState{Subject: s.Subject + " - hohoho"}, nil
	})
	sub.AddNode("generate", func(_ context.Context, s JokeState) (JokeState, error) {
		return JokeState{Jokes: []string{"Joke about " + s.Subject}}, nil
	})
	sub.AddNode("bump", func(_ context.Context, s JokeState) (JokeState, error) {
		return JokeState{Jokes: []string{s.Jokes[0] + " a"}}, nil
	})
	sub.AddEdge(graph.START, "edit").AddEdge("edit", "generate").AddEdge("generate", "bump").AddEdge("generate", graph.END)
	sub.AddConditionalEdges("bump", func(_ context.Context, s JokeState) (string, error) {
		if strings.HasSuffix(s.Jokes[0], tail) {
			return graph.END, nil
		}
		return "bump", nil
	}, nil)
	subc, err := sub.Compile(graph.CompileOptions{Name: "joke", OutputKeys: []string{"jokes"}})
	if err != nil {
		return nil, err
	}
	g := graph.New[JokeParent]()
	graph.AddSubgraph(g, "generate_joke", subc,
		func(p JokeParent) JokeState { return JokeState{Subject: p.Subject} },
		func(c JokeState) JokeParent { return JokeParent{Jokes: c.Jokes} })
	g.AddRouter(graph.START, func(_ context.Context, s JokeParent) ([]graph.Target, error) {
		out := make([]graph.Target, len(s.Subjects))
		for i, subj := range s.Subjects {
			out[i] = graph.Send("generate_joke", JokeParent{Subject: subj})
		}
		return out, nil
	}, "generate_joke")
	g.AddEdge("generate_joke", graph.END)
	return g.Compile(graph.CompileOptions{Saver: saver})
}

// Subjects returns n subjects of 1000 random letters.
func Subjects(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = randomLetters(1000)
	}
	return out
}

func randomLetters(n int) string {
	b := make([]byte, n)
	for i := 0; i < n; {
		// Eight letters from one random number: each step multiplies the random fraction by 26
		// and takes the integer part as the letter (bias under 2^-26).
		x := rand.Uint64()
		for j := 0; j < 8 && i < n; j++ {
			hi, lo := bits.Mul64(x, 26)
			b[i] = byte('a' + hi)
			x = lo
			i++
		}
	}
	return string(b)
}

// WideState is wide_state's fifteen keys with their reducers.
type WideState struct {
	Messages           []any          `json:"messages" reduce:"append"`
	TriggerEvents      []any          `json:"trigger_events" reduce:"append"`
	PrimaryIssueMedium string         `json:"primary_issue_medium"`
	Autoresponse       any            `json:"autoresponse"`
	Issue              any            `json:"issue"`
	RelevantRules      []any          `json:"relevant_rules"`
	MemoryDocs         []any          `json:"memory_docs"`
	Categorizations    []any          `json:"categorizations" reduce:"append"`
	Responses          []any          `json:"responses" reduce:"append"`
	UserInfo           any            `json:"user_info"`
	CRMInfo            any            `json:"crm_info"`
	EmailThreadID      any            `json:"email_thread_id"`
	SlackParticipants  map[string]any `json:"slack_participants" reduce:"merge"`
	BotID              string         `json:"bot_id"`
	NotifiedAssignees  map[string]any `json:"notified_assignees" reduce:"merge"`
}

// WideStateGraph builds wide_state_n: six nodes reading one key and writing others, with a join
// and a loop that ends once the messages outnumber n.
func WideStateGraph(n int, saver checkpoint.Saver) (*graph.Compiled[WideState], error) {
	g := graph.New[WideState]()
	// LangGraph's reducers: take the update when it is "truthy" (or present), else keep.
	graph.SetReducer(g, "primary_issue_medium", func(x, y string) string { return pick(y != "", y, x) })
	graph.SetReducer(g, "autoresponse", func(_, y any) any { return y })
	graph.SetReducer(g, "issue", func(x, y any) any { return pick(truthy(y), y, x) })
	graph.SetReducer(g, "user_info", func(x, y any) any { return pick(y != nil, y, x) })
	graph.SetReducer(g, "crm_info", func(x, y any) any { return pick(y != nil, y, x) })
	graph.SetReducer(g, "email_thread_id", func(x, y any) any { return pick(y != nil, y, x) })

	readWrite := func(read func(WideState) any, write func(out *WideState, list []any, single any)) graph.NodeFunc[WideState] {
		return func(_ context.Context, s WideState) (WideState, error) {
			val := read(s)
			if str, ok := val.(string); ok {
				val = map[string]any{str: str}
			}
			list, isList := val.([]any)
			single := val
			if isList && len(list) > 0 {
				single = list[len(list)-1]
			}
			if !isList {
				list = []any{val}
			}
			var out WideState
			write(&out, list, single)
			return out, nil
		}
	}
	g.AddNode("one", readWrite(func(s WideState) any { return s.Messages }, func(o *WideState, list []any, _ any) {
		o.TriggerEvents, o.PrimaryIssueMedium = list, randomLetters(n)
	}))
	g.AddNode("two", readWrite(func(s WideState) any { return s.TriggerEvents }, func(o *WideState, _ []any, single any) {
		o.Autoresponse, o.Issue = single, single
	}))
	g.AddNode("three", readWrite(func(s WideState) any { return s.Autoresponse }, func(o *WideState, list []any, _ any) {
		o.RelevantRules = list
	}))
	g.AddNode("four", readWrite(func(s WideState) any { return s.TriggerEvents }, func(o *WideState, list []any, _ any) {
		o.Categorizations, o.Responses, o.MemoryDocs = list, list, list
	}))
	g.AddNode("five", readWrite(func(s WideState) any { return s.Categorizations }, func(o *WideState, _ []any, single any) {
		o.UserInfo, o.CRMInfo, o.EmailThreadID = single, single, randomLetters(n)
		if m, ok := single.(map[string]any); ok {
			o.SlackParticipants, o.NotifiedAssignees = m, m
		}
		o.BotID = randomLetters(n)
	}))
	g.AddNode("six", readWrite(func(s WideState) any { return s.Responses }, func(o *WideState, list []any, _ any) {
		o.Messages = list
	}))
	g.AddEdge(graph.START, "one").AddEdge("one", "two").AddEdge("two", "three").AddEdge("two", "four")
	g.AddJoin([]string{"three", "four"}, "five").AddEdge("five", "six")
	g.AddConditionalEdges("six", func(_ context.Context, s WideState) (string, error) {
		return pick(len(s.Messages) > n, graph.END, "one"), nil
	}, nil)
	return g.Compile(graph.CompileOptions{Saver: saver})
}

// WideInput is wide_state's input: one message, a document of outer x inner keys each holding
// a 25-element list.
func WideInput(outer, inner int) WideState {
	doc := map[string]any{}
	for i := range outer {
		o := map[string]any{}
		for j := range inner {
			var list []any
			for range 5 {
				list = append(list, strings.Repeat("hi?", 10), true, 1, 6327816386138, nil)
			}
			o[strings.Repeat(fmt.Sprint(j), 10)] = list
		}
		doc[strings.Repeat(fmt.Sprint(i), 10)] = o
	}
	return WideState{Messages: []any{doc}}
}

func pick[T any](cond bool, a, b T) T {
	if cond {
		return a
	}
	return b
}

// truthy follows Python's truth rules, which the original reducers rely on.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case bool:
		return x
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// FanoutState is static_fanout_N's state.
type FanoutState struct {
	Results []string `json:"results" reduce:"append"`
}

// StaticFanout builds static_fanout_N: START has a static edge to each of n workers, worker i
// appends "result i", and a join runs a no-op collect node once all have finished.
func StaticFanout(n int, saver checkpoint.Saver) (*graph.Compiled[FanoutState], error) {
	g := graph.New[FanoutState]()
	workers := make([]string, n)
	for i := range n {
		name := fmt.Sprintf("worker_%d", i)
		result := fmt.Sprintf("result %d", i)
		g.AddNode(name, func(context.Context, FanoutState) (FanoutState, error) {
			return FanoutState{Results: []string{result}}, nil
		})
		g.AddEdge(graph.START, name)
		workers[i] = name
	}
	g.AddNode("collect", func(context.Context, FanoutState) (FanoutState, error) { return FanoutState{}, nil })
	g.AddJoin(workers, "collect").AddEdge("collect", graph.END)
	return g.Compile(graph.CompileOptions{Saver: saver})
}

// Conversation builds conversation_N: two nodes take turns, each appending one message to a
// messages channel, until the history holds 2N messages. The cost per turn stays flat when the
// channel appends without copying the history it already holds.
func Conversation(turns int, saver checkpoint.Saver) (*graph.Compiled[MessagesState], error) {
	g := graph.New[MessagesState]()
	text := strings.Repeat("x", 200)
	g.AddNode("user", func(context.Context, MessagesState) (MessagesState, error) {
		return MessagesState{Messages: []message.Message{message.User(text)}}, nil
	})
	g.AddNode("assistant", func(context.Context, MessagesState) (MessagesState, error) {
		return MessagesState{Messages: []message.Message{message.Assistant(text)}}, nil
	})
	g.AddEdge(graph.START, "user").AddEdge("user", "assistant")
	g.AddConditionalEdges("assistant", func(_ context.Context, s MessagesState) (string, error) {
		if len(s.Messages) >= 2*turns {
			return graph.END, nil
		}
		return "user", nil
	}, nil)
	return g.Compile(graph.CompileOptions{Saver: saver})
}

// FunctionalTasks builds functional_tasks_N: an entrypoint of the functional API that calls
// the task add_one N times, one after the other, each on the last one's result. With a saver
// every call's result is recorded as a pending write, as LangGraph records a task's.
func FunctionalTasks(n int, saver checkpoint.Saver) (*graph.Entrypoint[int, int, int], error) {
	addOne := graph.NewTask("add_one", func(_ context.Context, x int) (int, error) { return x + 1, nil })
	return graph.NewEntrypoint("chain", func(ctx context.Context, x int) (int, error) {
		for range n {
			var err error
			if x, err = addOne.Call(ctx, x).Get(); err != nil {
				return 0, err
			}
		}
		return x, nil
	}, graph.CompileOptions{Saver: saver})
}

// CachedState is cached_sequential_N's state.
type CachedState struct {
	Count int `json:"count"`
}

// CachedSequential builds cached_sequential_N: N nodes in a chain, each adding one to a
// counter, each with a cache policy keyed by its input (the default), over an in-memory cache.
// After the first run every node's result comes from the cache: the workload measures a cache
// hit, which is what a cache is for.
func CachedSequential(n int, saver checkpoint.Saver) (*graph.Compiled[CachedState], error) {
	g := graph.New[CachedState]()
	inc := func(_ context.Context, s CachedState) (CachedState, error) {
		return CachedState{Count: s.Count + 1}, nil
	}
	prev := graph.START
	for i := range n {
		name := fmt.Sprintf("node_%d", i)
		g.AddNode(name, inc, graph.WithCache(graph.CachePolicy{}))
		g.AddEdge(prev, name)
		prev = name
	}
	g.AddEdge(prev, graph.END)
	return g.Compile(graph.CompileOptions{Saver: saver, Cache: cache.NewMemory()})
}
