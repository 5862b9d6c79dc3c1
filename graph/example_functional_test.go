package graph_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/trellis-go/trellis/cache"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

// The functional API: an entrypoint calls tasks and asks for approval. When the thread is
// resumed the entrypoint runs again from its start, but the task that finished returns its
// recorded result (streamed as a cached update) instead of running again.
func ExampleNewEntrypoint() {
	ctx := context.Background()
	runs := 0
	write := graph.NewTask("write", func(ctx context.Context, topic string) (string, error) {
		runs++
		return "an essay about " + topic, nil
	})
	review, err := graph.NewEntrypoint("review", func(ctx context.Context, topic string) (string, error) {
		essay, err := write.Call(ctx, topic).Get()
		if err != nil {
			return "", err
		}
		ok, err := graph.InterruptAs[bool](ctx, "publish "+essay+"?")
		if err != nil {
			return "", err
		}
		if !ok {
			return "rejected", nil
		}
		return "published " + essay, nil
	}, graph.CompileOptions{Saver: checkpoint.NewMemorySaver()})
	if err != nil {
		panic(err)
	}
	_, err = review.Invoke(ctx, "owls", graph.WithThread("t1"))
	var ie *graph.InterruptedError
	if errors.As(err, &ie) {
		fmt.Println("asks:", ie.Interrupts[0].Value)
	}
	for ev, err := range review.Stream(ctx, "", graph.WithThread("t1"), graph.Resume(true), graph.WithStreamModes(graph.ModeUpdates)) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("update %s: %v (cached %v)\n", ev.Node, ev.Data, ev.Cached)
	}
	fmt.Println("the task ran", runs, "time")
	// Output:
	// asks: publish an essay about owls?
	// update write: an essay about owls (cached true)
	// update review: published an essay about owls (cached false)
	// the task ran 1 time
}

// An entrypoint reads what its last run on the thread saved with graph.Previous; a Final
// returns one value and saves another.
func ExampleNewEntrypointFinal() {
	ctx := context.Background()
	counter, err := graph.NewEntrypointFinal("counter", func(ctx context.Context, n int) (graph.Final[string, int], error) {
		total, _ := graph.Previous[int](ctx)
		total += n
		return graph.Final[string, int]{Value: fmt.Sprintf("the total is %d", total), Save: total}, nil
	}, graph.CompileOptions{Saver: checkpoint.NewMemorySaver()})
	if err != nil {
		panic(err)
	}
	for _, n := range []int{2, 3, 5} {
		out, err := counter.Invoke(ctx, n, graph.WithThread("t"))
		if err != nil {
			panic(err)
		}
		fmt.Println(out)
	}
	// Output:
	// the total is 2
	// the total is 5
	// the total is 10
}

// A node with a cache policy runs once per input: a second run with the same input takes the
// cached writes, and its update is marked cached. ClearCache forgets a node's results.
func ExampleWithCache() {
	ctx := context.Background()
	type Q struct {
		Question string `json:"question"`
		Answer   string `json:"answer"`
	}
	calls := 0
	g := graph.New[Q]()
	g.AddNode("oracle", func(ctx context.Context, s Q) (Q, error) {
		calls++
		return Q{Answer: strings.ToUpper(s.Question)}, nil
	}, graph.WithCache(graph.CachePolicy{
		// The key: the question alone (the default hashes the whole input).
		Key: func(in any) (string, error) { return in.(Q).Question, nil },
	}))
	g.AddEdge(graph.START, "oracle")
	c, err := g.Compile(graph.CompileOptions{Cache: cache.NewMemory()})
	if err != nil {
		panic(err)
	}
	for range 2 {
		for ev, err := range c.Stream(ctx, Q{Question: "why?"}, graph.WithStreamModes(graph.ModeUpdates)) {
			if err != nil {
				panic(err)
			}
			fmt.Printf("%s: %+v cached=%v\n", ev.Node, ev.Data, ev.Cached)
		}
	}
	if err := c.ClearCache(ctx, "oracle"); err != nil {
		panic(err)
	}
	c.Invoke(ctx, Q{Question: "why?"})
	fmt.Println("the node ran", calls, "times")
	// Output:
	// oracle: {Question: Answer:WHY?} cached=false
	// oracle: {Question: Answer:WHY?} cached=true
	// the node ran 2 times
}

// Graph-wide node policies: every node retries twice unless it says otherwise; a node's error
// handler turns its failure into an update and a route.
func ExampleNodeDefaults() {
	type Doc struct {
		URL  string   `json:"url"`
		Log  []string `json:"log" reduce:"append"`
		Body string   `json:"body"`
	}
	attempts := 0
	g := graph.New[Doc]()
	g.AddNode("download", func(ctx context.Context, d Doc) (Doc, error) {
		attempts++
		return Doc{}, errors.New("connection reset")
	}, graph.OnError(func(ctx context.Context, d Doc, err error) (*graph.Command[Doc], error) {
		return &graph.Command[Doc]{Update: Doc{Log: []string{"download: " + err.Error()}}, Goto: []graph.Target{graph.To("from_cache")}}, nil
	}), graph.Destinations("from_cache"))
	g.AddNode("from_cache", func(ctx context.Context, d Doc) (Doc, error) {
		return Doc{Body: "cached copy of " + d.URL}, nil
	})
	g.AddEdge(graph.START, "download")
	c, err := g.Compile(graph.CompileOptions{NodeDefaults: graph.NodeDefaults{
		Retry: []graph.RetryPolicy{{MaxAttempts: 2, InitialInterval: time.Millisecond}},
	}})
	if err != nil {
		panic(err)
	}
	out, err := c.Invoke(context.Background(), Doc{URL: "https://example.com"})
	if err != nil {
		panic(err)
	}
	fmt.Println(attempts, "attempts;", out.Log, ";", out.Body)
	// Output:
	// 2 attempts; [download: connection reset] ; cached copy of https://example.com
}
