package graph_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

// A graph declares the type of its runs' context; each run passes one, and nodes (and the
// tasks, subgraphs and tools they call) read it typed. A context in its JSON form, as a server
// receives it, is decoded into the type, and one that does not fit is refused before the run.
func ExampleContext() {
	type Caller struct {
		UserID string `json:"user_id"`
		Locale string `json:"locale,omitempty"`
	}
	type State struct {
		Greeting string `json:"greeting"`
	}
	g := graph.New[State]()
	g.AddNode("greet", func(ctx context.Context, s State) (State, error) {
		c, ok := graph.Context[Caller](ctx)
		if !ok {
			return State{Greeting: "hello, stranger"}, nil
		}
		return State{Greeting: "hello " + c.UserID + " (" + c.Locale + ")"}, nil
	})
	g.AddEdge(graph.START, "greet").AddEdge("greet", graph.END)
	c, err := g.Compile(graph.CompileOptions{ContextType: reflect.TypeFor[Caller]()})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	out, _ := c.Invoke(ctx, State{}, graph.WithContext(Caller{UserID: "ann", Locale: "fr"}))
	fmt.Println(out.Greeting)
	out, _ = c.Invoke(ctx, State{}, graph.WithContext(map[string]any{"user_id": "bob"}))
	fmt.Println(out.Greeting)
	out, _ = c.Invoke(ctx, State{})
	fmt.Println(out.Greeting)
	_, err = c.Invoke(ctx, State{}, graph.WithContext(map[string]any{"user": "cy"}))
	fmt.Println(err)
	// Output:
	// hello ann (fr)
	// hello bob ()
	// hello, stranger
	// graph: the run's context does not fit the graph's context type graph_test.Caller: json: unknown field "user"
}

// StateWithSubgraphs reads a thread's state with the states of its subgraphs: here the
// subgraph paused at an interrupt, with what it wrote so far and the node it waits in.
func ExampleCompiled_StateWithSubgraphs() {
	type Doc struct {
		Topic string   `json:"topic"`
		Notes []string `json:"notes" reduce:"append"`
	}
	sub := graph.New[Doc]()
	sub.AddNode("outline", func(ctx context.Context, d Doc) (Doc, error) {
		return Doc{Notes: []string{"outline of " + d.Topic}}, nil
	})
	sub.AddNode("review", func(ctx context.Context, d Doc) (Doc, error) {
		ok, err := graph.InterruptAs[bool](ctx, "approve the outline?")
		if err != nil {
			return Doc{}, err
		}
		return Doc{Notes: []string{fmt.Sprint("approved: ", ok)}}, nil
	})
	sub.AddSequence(graph.START, "outline", "review", graph.END)
	writer, err := sub.Compile(graph.CompileOptions{Name: "writer"})
	if err != nil {
		panic(err)
	}
	g := graph.New[Doc]()
	graph.AddSubgraph(g, "write", writer, func(d Doc) Doc { return Doc{Topic: d.Topic} }, nil)
	g.AddEdge(graph.START, "write").AddEdge("write", graph.END)
	c, err := g.Compile(graph.CompileOptions{Saver: checkpoint.NewMemorySaver()})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_, err = c.Invoke(ctx, Doc{Topic: "owls"}, graph.WithThread("t"))
	var ie *graph.InterruptedError
	fmt.Println("paused:", errors.As(err, &ie))

	plain, _ := c.State(ctx, checkpoint.Ref{ThreadID: "t"})
	task := plain.Tasks[0]
	fmt.Println(task.Name, "checkpoints in", task.Checkpoint.NS == "write:"+task.ID, "state read:", task.State != nil)

	snap, _ := c.StateWithSubgraphs(ctx, checkpoint.Ref{ThreadID: "t"})
	inner := snap.Tasks[0].State
	fmt.Println("subgraph values:", inner.Values.(Doc).Notes)
	fmt.Println("subgraph next:", inner.Next)
	fmt.Println("subgraph asks:", inner.Interrupts()[0].Value)
	// Output:
	// paused: true
	// write checkpoints in true state read: false
	// subgraph values: [outline of owls]
	// subgraph next: [review]
	// subgraph asks: approve the outline?
}
