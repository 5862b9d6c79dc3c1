package bench

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

var threadSeq atomic.Int64

// drain runs a graph the way LangGraph's benchmark driver does: a fresh thread when there is a
// saver, durability exit, the updates mode, every event consumed. It returns the event count.
func drain[S any](b *testing.B, g *graph.Compiled[S], saver checkpoint.Saver, input S) int {
	opts := []graph.RunOption{graph.WithStreamModes(graph.ModeUpdates), graph.WithRecursionLimit(1 << 30), graph.WithDurability(graph.DurabilityExit)}
	if saver != nil {
		opts = append(opts, graph.WithThread(fmt.Sprint("t", threadSeq.Add(1))))
	}
	n := 0
	for _, err := range g.Stream(context.Background(), input, opts...) {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	return n
}

// variants runs a workload without and with the in-memory saver.
func variants[S any](b *testing.B, build func(checkpoint.Saver) (*graph.Compiled[S], error), input func() S, wantEvents int) {
	for _, v := range []string{"nocheckpoint", "checkpoint"} {
		b.Run(v, func(b *testing.B) {
			var saver checkpoint.Saver
			if v == "checkpoint" {
				saver = checkpoint.NewMemorySaver()
			}
			g, err := build(saver)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if n := drain(b, g, saver, input()); wantEvents > 0 && n != wantEvents {
					b.Fatalf("%d events, want %d", n, wantEvents)
				}
			}
		})
	}
}

func BenchmarkSequential10(b *testing.B) {
	variants(b, func(s checkpoint.Saver) (*graph.Compiled[MessagesState], error) { return Sequential(10, s) },
		func() MessagesState { return MessagesState{} }, 10)
}

func BenchmarkSequential1000(b *testing.B) {
	variants(b, func(s checkpoint.Saver) (*graph.Compiled[MessagesState], error) { return Sequential(1000, s) },
		func() MessagesState { return MessagesState{} }, 1000)
}

// BenchmarkSequential1000FirstEvent measures the time to the first event of sequential_1000,
// stopping the run there.
func BenchmarkSequential1000FirstEvent(b *testing.B) {
	g, err := Sequential(1000, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, err := range g.Stream(context.Background(), MessagesState{}, graph.WithStreamModes(graph.ModeUpdates), graph.WithRecursionLimit(1<<30)) {
			if err != nil {
				b.Fatal(err)
			}
			break
		}
	}
}

func fanout(b *testing.B, n int) {
	subjects := Subjects(n)
	variants(b, FanoutToSubgraph, func() JokeParent { return JokeParent{Subjects: subjects} }, n)
}

func BenchmarkFanoutToSubgraph10x(b *testing.B)  { fanout(b, 10) }
func BenchmarkFanoutToSubgraph100x(b *testing.B) { fanout(b, 100) }

func wide(b *testing.B, outer, inner, n, events int) {
	variants(b, func(s checkpoint.Saver) (*graph.Compiled[WideState], error) { return WideStateGraph(n, s) },
		func() WideState { return WideInput(outer, inner) }, events)
}

func BenchmarkWideState25x300(b *testing.B) { wide(b, 5, 5, 300, 36) }
func BenchmarkWideState15x600(b *testing.B) { wide(b, 3, 5, 600, 42) }
func BenchmarkWideState9x1200(b *testing.B) { wide(b, 3, 3, 1200, 42) }

func reactAgent(b *testing.B, n int) {
	variants(b, func(s checkpoint.Saver) (*graph.Compiled[react.State], error) { return ReactAgent(n, s) },
		func() react.State { return react.State{Messages: []message.Message{message.User("hi?")}} }, 2*n+1)
}

func BenchmarkReactAgent10x(b *testing.B)  { reactAgent(b, 10) }
func BenchmarkReactAgent100x(b *testing.B) { reactAgent(b, 100) }

// BenchmarkReactAgentToolTimeout10x is react_agent_10x without a saver at trellis's default tool
// timeout, which LangGraph has no twin of: the difference from BenchmarkReactAgent10x is what
// running each call on a goroutine of its own costs (docs/benchmarks.md).
func BenchmarkReactAgentToolTimeout10x(b *testing.B) {
	g, err := ReactAgentWith(10, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if n := drain(b, g, nil, react.State{Messages: []message.Message{message.User("hi?")}}); n != 21 {
			b.Fatalf("%d events, want 21", n)
		}
	}
}

// BenchmarkReactToolWork10x is the part of react_agent_10x that is the workload's own and not
// the runtime's: the tool's body, run ten times on arguments of the workload's size (a query of a
// hundred UUIDs, an answer of ten copies of it). In Go each answer is 36 KB written out; V8's
// String.prototype.repeat builds a rope instead, so LangGraph.js's twin does not pay for it.
func BenchmarkReactToolWork10x(b *testing.B) {
	queries := make([]string, 10)
	for i := range queries {
		queries[i] = strings.Repeat(uuid.NewString(), 100)
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for _, q := range queries {
			n += len(strings.Repeat("result for query: "+q, 10))
		}
	}
	if n == 0 {
		b.Fatal("no output")
	}
}

// BenchmarkReactAgent1000x is the allocation curve's far point (docs/benchmarks.md); it has no
// LangGraph.js twin.
func BenchmarkReactAgent1000x(b *testing.B) { reactAgent(b, 1000) }

func conversation(b *testing.B, turns int) {
	variants(b, func(s checkpoint.Saver) (*graph.Compiled[MessagesState], error) { return Conversation(turns, s) },
		func() MessagesState { return MessagesState{} }, 2*turns)
}

// BenchmarkConversation10x, 100x and 1000x: the messages channel alone, one message appended
// per node; bytes and allocations per turn stay flat (docs/benchmarks.md).
func BenchmarkConversation10x(b *testing.B)   { conversation(b, 10) }
func BenchmarkConversation100x(b *testing.B)  { conversation(b, 100) }
func BenchmarkConversation1000x(b *testing.B) { conversation(b, 1000) }

func BenchmarkStaticFanout100(b *testing.B) {
	variants(b, func(s checkpoint.Saver) (*graph.Compiled[FanoutState], error) { return StaticFanout(100, s) },
		func() FanoutState { return FanoutState{} }, 101)
}

// BenchmarkFunctionalTasks100: an entrypoint calling a task 100 times (functional_tasks_100).
func BenchmarkFunctionalTasks100(b *testing.B) {
	for _, v := range []string{"nocheckpoint", "checkpoint"} {
		b.Run(v, func(b *testing.B) {
			var saver checkpoint.Saver
			if v == "checkpoint" {
				saver = checkpoint.NewMemorySaver()
			}
			e, err := FunctionalTasks(100, saver)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				opts := []graph.RunOption{graph.WithStreamModes(graph.ModeUpdates), graph.WithRecursionLimit(1 << 30), graph.WithDurability(graph.DurabilityExit)}
				if saver != nil {
					opts = append(opts, graph.WithThread(fmt.Sprint("t", threadSeq.Add(1))))
				}
				n, last := 0, graph.Event{}
				for ev, err := range e.Stream(context.Background(), 0, opts...) {
					if err != nil {
						b.Fatal(err)
					}
					n, last = n+1, ev
				}
				if n != 101 || last.Node != "chain" || last.Data != 100 {
					b.Fatalf("%d events, the last %s: %v; want 101, chain: 100", n, last.Node, last.Data)
				}
			}
		})
	}
}

// BenchmarkCachedSequential100: 100 cached nodes in a chain, every run after the first a cache
// hit (cached_sequential_100).
func BenchmarkCachedSequential100(b *testing.B) {
	for _, v := range []string{"nocheckpoint", "checkpoint"} {
		b.Run(v, func(b *testing.B) {
			var saver checkpoint.Saver
			if v == "checkpoint" {
				saver = checkpoint.NewMemorySaver()
			}
			g, err := CachedSequential(100, saver)
			if err != nil {
				b.Fatal(err)
			}
			drain(b, g, saver, CachedState{}) // fills the cache
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				opts := []graph.RunOption{graph.WithStreamModes(graph.ModeUpdates), graph.WithRecursionLimit(1 << 30), graph.WithDurability(graph.DurabilityExit)}
				if saver != nil {
					opts = append(opts, graph.WithThread(fmt.Sprint("t", threadSeq.Add(1))))
				}
				for ev, err := range g.Stream(context.Background(), CachedState{}, opts...) {
					if err != nil {
						b.Fatal(err)
					}
					if !ev.Cached {
						b.Fatalf("%s ran: every node should be a cache hit", ev.Node)
					}
					n++
				}
				if n != 100 {
					b.Fatalf("%d events, want 100", n)
				}
			}
		})
	}
}
