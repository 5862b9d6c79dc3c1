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
// be read ([Compiled.GetState], [Compiled.History]), changed ([Compiled.UpdateState]), forked
// ([FromCheckpoint]) and resumed. A node pauses the run with [Interrupt]; the caller resumes it
// with [Resume] or [ResumeMap], and the node runs again, its Interrupt call now returning the
// value.
//
// See docs/runtime.md in the repository for the full semantics.
package graph
