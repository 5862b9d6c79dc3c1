package graph_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

// A state is a struct; tags choose how concurrent or repeated writes to a key combine.
type Essay struct {
	Topic  string   `json:"topic"`
	Drafts []string `json:"drafts" reduce:"append"`
	Words  int      `json:"words" reduce:"sum"`
}

// A two-node graph: nodes return partial updates, and the stream reports each node's update.
func Example() {
	g := graph.New[Essay]()
	g.AddNode("outline", func(ctx context.Context, s Essay) (Essay, error) {
		return Essay{Drafts: []string{"outline of " + s.Topic}, Words: 3}, nil
	})
	g.AddNode("write", func(ctx context.Context, s Essay) (Essay, error) {
		return Essay{Drafts: []string{"essay on " + s.Topic}, Words: 300}, nil
	})
	g.AddSequence(graph.START, "outline", "write", graph.END)
	essay, err := g.Compile()
	if err != nil {
		panic(err)
	}
	for ev, err := range essay.Stream(context.Background(), Essay{Topic: "owls"}, graph.WithStreamModes(graph.ModeUpdates)) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("step %d %s: %+v\n", ev.Step, ev.Node, ev.Data)
	}
	// Output:
	// step 1 outline: {Topic: Drafts:[outline of owls] Words:3}
	// step 2 write: {Topic: Drafts:[essay on owls] Words:300}
}

// Send fans out: one task per payload, run concurrently in one superstep; their appends merge in
// the order they were sent.
func ExampleSend() {
	type Jokes struct {
		Subjects []string `json:"subjects"`
		Subject  string   `json:"subject"`
		Jokes    []string `json:"jokes" reduce:"append"`
	}
	g := graph.New[Jokes]()
	g.AddNode("joke", func(ctx context.Context, s Jokes) (Jokes, error) {
		return Jokes{Jokes: []string{"a joke about " + s.Subject}}, nil
	})
	g.AddRouter(graph.START, func(ctx context.Context, s Jokes) ([]graph.Target, error) {
		var sends []graph.Target
		for _, subject := range s.Subjects {
			sends = append(sends, graph.Send("joke", Jokes{Subject: subject}))
		}
		return sends, nil
	}, "joke")
	c, err := g.Compile()
	if err != nil {
		panic(err)
	}
	out, err := c.Invoke(context.Background(), Jokes{Subjects: []string{"cats", "dogs", "owls"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.Join(out.Jokes, "\n"))
	// Output:
	// a joke about cats
	// a joke about dogs
	// a joke about owls
}

// Interrupt pauses a run to ask a human; resuming the thread runs the node again from its start,
// and Interrupt then returns the answer.
func ExampleInterrupt() {
	type Post struct {
		Draft     string `json:"draft"`
		Published bool   `json:"published"`
	}
	g := graph.New[Post]()
	g.AddNode("review", func(ctx context.Context, s Post) (Post, error) {
		ok, err := graph.InterruptAs[bool](ctx, "publish "+s.Draft+"?")
		if err != nil {
			return Post{}, err // the pause: return at once
		}
		return Post{Published: ok}, nil
	})
	g.AddEdge(graph.START, "review")
	c, err := g.Compile(graph.CompileOptions{Saver: checkpoint.NewMemorySaver()})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_, err = c.Invoke(ctx, Post{Draft: "hello world"}, graph.WithThread("post-1"))
	if paused, ok := err.(*graph.InterruptedError); ok {
		fmt.Println("asked:", paused.Interrupts[0].Value)
	}
	out, err := c.Invoke(ctx, Post{}, graph.WithThread("post-1"), graph.Resume(true))
	if err != nil {
		panic(err)
	}
	fmt.Println("published:", out.Published)
	// Output:
	// asked: publish hello world?
	// published: true
}

// A compiled graph is a node of another; the two states are mapped on the way in and out.
func ExampleAddSubgraph() {
	type Inner struct {
		Text  string `json:"text"`
		Steps int    `json:"steps" reduce:"sum"`
	}
	inner := graph.New[Inner]()
	inner.AddNode("shout", func(ctx context.Context, s Inner) (Inner, error) {
		return Inner{Text: strings.ToUpper(s.Text), Steps: 1}, nil
	})
	inner.AddNode("exclaim", func(ctx context.Context, s Inner) (Inner, error) {
		return Inner{Text: s.Text + "!", Steps: 1}, nil
	})
	inner.AddSequence(graph.START, "shout", "exclaim", graph.END)
	child, err := inner.Compile(graph.CompileOptions{Name: "loud"})
	if err != nil {
		panic(err)
	}

	outer := graph.New[Essay]()
	graph.AddSubgraph(outer, "louder", child,
		func(e Essay) Inner { return Inner{Text: e.Topic} },
		func(i Inner) Essay { return Essay{Drafts: []string{i.Text}, Words: i.Steps} })
	outer.AddEdge(graph.START, "louder")
	c, err := outer.Compile()
	if err != nil {
		panic(err)
	}
	for ev, err := range c.Stream(context.Background(), Essay{Topic: "owls"}, graph.WithSubgraphs(), graph.WithStreamModes(graph.ModeUpdates)) {
		if err != nil {
			panic(err)
		}
		ns := "root"
		if len(ev.NS) > 0 {
			ns, _, _ = strings.Cut(ev.NS[0], ":") // "louder:<task id>"
		}
		fmt.Printf("%s/%s: %+v\n", ns, ev.Node, ev.Data)
	}
	// Output:
	// louder/shout: {Text:OWLS Steps:1}
	// louder/exclaim: {Text:OWLS! Steps:1}
	// root/louder: {Topic: Drafts:[OWLS!] Words:2}
}
