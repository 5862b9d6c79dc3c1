package main

// A Workload is one row of the comparison: a workload of docs/benchmarks.md
// in one variant, and where each side measures it.
type Workload struct {
	// Name is the workload's name in docs/benchmarks.md and in the
	// LangGraph.js peer, e.g. "sequential_1000".
	Name string
	// Variant is "nocheckpoint" or "checkpoint" (an in-memory saver), or
	// a durable saver at durability sync: "sqlite" or "postgres" (see
	// [Workload.Saver]).
	Variant string
	// Trellis is the trellis Go benchmark in ./bench, as a path of
	// benchmark names: "BenchmarkSequential1000/nocheckpoint".
	Trellis string
	// Eino is the benchmark in bench/peers/eino, or "" when eino does not
	// run this workload.
	Eino string
}

// Saver reports whether the row runs a durable saver, whose goal is the
// savers' (10x faster, a fifth of the bytes per thread) and whose report
// shows bytes stored per thread.
func (w Workload) Saver() bool { return w.Variant == "sqlite" || w.Variant == "postgres" }

// ID is the name the -filter flag matches: "sequential_1000/checkpoint".
func (w Workload) ID() string { return w.Name + "/" + w.Variant }

// Workloads lists every row, in the order of the report. The LangGraph.js
// peer runs them all; the eino peer the rows with an Eino benchmark.
var Workloads = buildWorkloads()

func buildWorkloads() []Workload {
	var ws []Workload
	both := func(name, bench string, eino bool) {
		for _, v := range []string{"nocheckpoint", "checkpoint"} {
			w := Workload{Name: name, Variant: v, Trellis: bench + "/" + v}
			if eino && v == "nocheckpoint" {
				w.Eino = w.Trellis
			}
			ws = append(ws, w)
		}
	}
	both("sequential_10", "BenchmarkSequential10", false)
	both("sequential_1000", "BenchmarkSequential1000", true)
	// LangGraph measures the first event without a checkpointer only, and
	// the issue names a single benchmark for it.
	ws = append(ws, Workload{
		Name:    "sequential_1000_first_event",
		Variant: "nocheckpoint",
		Trellis: "BenchmarkSequential1000FirstEvent",
	})
	both("fanout_to_subgraph_10x", "BenchmarkFanoutToSubgraph10x", false)
	both("fanout_to_subgraph_100x", "BenchmarkFanoutToSubgraph100x", false)
	both("react_agent_10x", "BenchmarkReactAgent10x", false)
	both("react_agent_100x", "BenchmarkReactAgent100x", false)
	both("wide_state_25x300", "BenchmarkWideState25x300", false)
	both("wide_state_15x600", "BenchmarkWideState15x600", false)
	both("wide_state_9x1200", "BenchmarkWideState9x1200", false)
	both("static_fanout_100", "BenchmarkStaticFanout100", true)
	// The functional API and node caching (issue 32), each beside its
	// LangGraph.js twin: entrypoint and task, cachePolicy and InMemoryCache.
	both("functional_tasks_100", "BenchmarkFunctionalTasks100", false)
	both("cached_sequential_100", "BenchmarkCachedSequential100", false)
	// The durable savers at durability sync (issue 3, part 8), LangGraph.js
	// on @langchain/langgraph-checkpoint-sqlite and -postgres.
	for _, v := range []string{"sqlite", "postgres"} {
		ws = append(ws, Workload{Name: "react_agent_100x", Variant: v, Trellis: "BenchmarkReactAgent100xSaver/" + v})
	}
	return ws
}
