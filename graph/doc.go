// Package graph is trellis's runtime: stateful graphs of nodes that run in supersteps, with
// LangGraph's semantics.
//
// # State
//
// A graph's state is a struct. Each exported field is a channel named by its JSON name, and its
// `reduce` tag says how writes combine: the last value (no tag), append, messages (merged by ID,
// see package message), sum, merge (maps), or a function set with [SetReducer].
//
//	type State struct {
//		Messages []message.Message `json:"messages" reduce:"messages"`
//		Draft    string            `json:"draft"`
//		Votes    int               `json:"votes" reduce:"sum"`
//	}
//
// # Nodes and edges
//
// A node reads a snapshot of the state and returns a partial update: its non-zero fields are
// written. [Write] and [Overwrite] write zero values and bypass reducers.
//
//	g := graph.New[State]()
//	g.AddNode("draft", func(ctx context.Context, s State) (State, error) {
//		return State{Draft: "first try"}, nil
//	})
//	g.AddNode("review", review)
//	g.AddEdge(graph.START, "draft").AddEdge("draft", "review")
//	g.AddConditionalEdges("review", func(ctx context.Context, s State) (string, error) {
//		if s.Votes > 2 {
//			return graph.END, nil
//		}
//		return "draft", nil
//	}, nil)
//	app, err := g.Compile()
//
// Joins ([Graph.AddJoin]) wait for several nodes; routers ([Graph.AddRouter]) fan out with
// [Send], giving each branch its own payload; command nodes ([Graph.AddCommandNode]) return an
// update together with where to go, also in the parent graph; [AddSubgraph] runs a compiled
// graph as a node.
//
// # Running
//
// [Compiled.Invoke] runs to the end; [Compiled.Stream] yields [Event]s as they happen, in the
// modes chosen with [WithStreamModes]. The nodes of one superstep run concurrently and their
// writes apply together when all have finished, in a deterministic order.
//
// # Threads, checkpoints and interrupts
//
// With a [github.com/trellis-go/trellis/checkpoint.Saver] in [CompileOptions], each run belongs
// to a thread ([WithThread]) and the state is checkpointed after every superstep, so a thread can
// be read ([Compiled.State], [Compiled.History]), changed ([Compiled.UpdateState]), forked
// ([FromCheckpoint]), steered ([Compiled.Goto]) and resumed. A node pauses the run with
// [Interrupt]; the caller resumes it with [Resume] or [ResumeMap], and the node runs again, its
// Interrupt call now returning the value.
//
// # Graphs of any state type: the Runnable view
//
// A [Compiled] graph's verbs are typed by its state S: Invoke and Stream take an S, State and
// History return snapshots of S, UpdateState and Goto take an S. Code that holds graphs of many
// state types (the server, the CLI, [github.com/trellis-go/trellis/agent.GraphTool], the nodes
// of [Compiled.Subgraphs]) holds each as a [Runnable] instead: [Compiled.Runnable] returns that
// view, whose verbs have the same names with the state erased. Stream and UpdateState take a
// JSON object of state keys (unknown keys are an error that names them), State and History
// return snapshots whose Values hold the state struct (which encodes to JSON), and the
// description and thread verbs are the graph's own.
//
//	app, err := g.Compile(graph.CompileOptions{Saver: saver})
//	r := app.Runnable()
//	for ev, err := range r.Stream(ctx, json.RawMessage(`{"draft":"x"}`), graph.WithThread("t")) {
//		...
//	}
//	snap, err := r.State(ctx, checkpoint.Ref{ThreadID: "t"}) // snap.Values is a State
//
// [Erase] takes what a constructor returns, for a function that hands graphs out as Runnables
// (a server's GraphSpec.Build): return graph.Erase(g.Compile(opts)).
//
// # Functional API and caching
//
// [NewEntrypoint] runs a plain Go function as a graph of one node, and [NewTask] makes tasks it
// calls ([Task.Call] returns a [Future]); task results are recorded as pending writes, so a
// resumed entrypoint does not run a finished task again. [WithCache] caches a node's results in
// [CompileOptions.Cache] (package github.com/trellis-go/trellis/cache); [Compiled.ClearCache]
// forgets them.
//
// See docs/runtime.md in the repository for the full semantics.
package graph
