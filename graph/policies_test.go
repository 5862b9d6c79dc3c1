package graph_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/cache"
	"github.com/trellis-go/trellis/graph"
)

var (
	errShaky = errors.New("flaky")
	errLimit = errors.New("rate limited")
)

// TestNodeDefaultsAndOverrides: graph-wide retry and cache defaults apply to every node that
// does not set its own; a node's own policies replace them.
func TestNodeDefaultsAndOverrides(t *testing.T) {
	calls := newCounter()
	failing := func(name string, failures int) graph.NodeFunc[S] {
		return func(ctx context.Context, s S) (S, error) {
			calls.inc(name)
			if calls.get(name) <= failures {
				return S{}, errShaky
			}
			return S{Notes: []string{name}}, nil
		}
	}
	g := graph.New[S]()
	g.AddNode("a", failing("a", 2))                                                                                       // default: 3 attempts
	g.AddNode("b", failing("b", 1), graph.WithRetry(), graph.WithoutCache())                                              // no retry: fails
	g.AddNode("c", failing("c", 3), graph.WithRetry(graph.RetryPolicy{MaxAttempts: 4, InitialInterval: time.Nanosecond})) // its own
	g.AddSequence(graph.START, "a", "c", "b", graph.END)
	c := compile(t, g, graph.CompileOptions{
		Cache: cache.NewMemory(),
		NodeDefaults: graph.NodeDefaults{
			Retry: []graph.RetryPolicy{{MaxAttempts: 3, InitialInterval: time.Nanosecond}},
			Cache: &graph.CachePolicy{},
		},
	})
	_, err := c.Invoke(bg, S{})
	wantErr(t, err, `node "b"`, "flaky")
	if calls.get("a") != 3 || calls.get("c") != 4 || calls.get("b") != 1 {
		t.Fatalf("attempts %v, want a 3 (default), c 4 (its own), b 1 (retry off)", calls.n)
	}
	// a and c were cached by the default policy; b opted out.
	out, err := c.Invoke(bg, S{})
	if err != nil {
		t.Fatal(err)
	}
	if calls.get("a") != 3 || calls.get("c") != 4 || calls.get("b") != 2 || strings.Join(out.Notes, ",") != "a,c,b" {
		t.Fatalf("second run: calls %v notes %v", calls.n, out.Notes)
	}
}

// TestRetryPolicyList: each error is retried by the first policy that accepts it, up to that
// policy's attempts; an error no policy accepts is not retried.
func TestRetryPolicyList(t *testing.T) {
	run := func(errs ...error) (int, error) {
		n := 0
		g := graph.New[S]()
		g.AddNode("n", func(ctx context.Context, s S) (S, error) {
			n++
			if n <= len(errs) {
				return S{}, errs[n-1]
			}
			return S{Answer: "done"}, nil
		}, graph.WithRetry(
			graph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Nanosecond, RetryOn: func(err error) bool { return errors.Is(err, errShaky) }},
			graph.RetryPolicy{MaxAttempts: 5, InitialInterval: time.Nanosecond, RetryOn: func(err error) bool { return errors.Is(err, errLimit) }},
		))
		g.AddEdge(graph.START, "n")
		_, err := compile(t, g).Invoke(bg, S{})
		return n, err
	}
	if n, err := run(errLimit, errLimit, errLimit); err != nil || n != 4 {
		t.Fatalf("rate limits: %d attempts, %v; want success on the 4th", n, err)
	}
	if n, err := run(errShaky, errShaky); err == nil || n != 2 {
		t.Fatalf("flaky twice: %d attempts, %v; the first policy allows 2", n, err)
	}
	if n, err := run(errors.New("bad input")); err == nil || n != 1 {
		t.Fatalf("an error no policy accepts: %d attempts, %v", n, err)
	}
}

// TestIdleTimeout: a node that produces nothing is stopped after its idle timeout, naming it;
// a node that keeps streaming runs past it.
func TestIdleTimeout(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("hang", func(ctx context.Context, s S) (S, error) {
		<-ctx.Done() // produces nothing until stopped
		return S{}, ctx.Err()
	})
	g.AddEdge(graph.START, "hang")
	c := compile(t, g, graph.CompileOptions{NodeDefaults: graph.NodeDefaults{IdleTimeout: 20 * time.Millisecond}})
	_, err := c.Invoke(bg, S{})
	wantErr(t, err, `node "hang"`, "produced nothing for 20ms", "idle timeout")

	// The streaming node emits every few milliseconds for well past its idle timeout; the
	// stream does not ask for custom events, and emitting still counts.
	g2 := graph.New[S]()
	g2.AddNode("stream", func(ctx context.Context, s S) (S, error) {
		deadline := time.Now().Add(600 * time.Millisecond)
		for time.Now().Before(deadline) {
			graph.Emit(ctx, "tick")
			select {
			case <-ctx.Done():
				return S{}, context.Cause(ctx)
			case <-time.After(5 * time.Millisecond):
			}
		}
		return S{Answer: "streamed"}, nil
	}, graph.WithIdleTimeout(300*time.Millisecond))
	g2.AddEdge(graph.START, "stream")
	out, err := compile(t, g2).Invoke(bg, S{})
	if err != nil || out.Answer != "streamed" {
		t.Fatalf("streaming node: %+v %v", out, err)
	}
}

// TestOnError: a node's error handler turns its failure, once the retries are spent, into a
// state update and a route; a handler's own error fails the node with both errors.
func TestOnError(t *testing.T) {
	calls := newCounter()
	g := graph.New[S]()
	g.AddNode("fetch", func(ctx context.Context, s S) (S, error) {
		calls.inc("fetch")
		return S{}, errShaky
	}, graph.WithRetry(graph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Nanosecond}),
		graph.OnError(func(ctx context.Context, s S, err error) (*graph.Command[S], error) {
			if s.Answer == "fatal" {
				return nil, errors.New("cannot recover")
			}
			return &graph.Command[S]{Update: S{Notes: []string{"fetch failed: " + err.Error()}}, Goto: []graph.Target{graph.To("fallback")}}, nil
		}), graph.Destinations("fallback"))
	g.AddNode("fallback", note("fallback"))
	g.AddNode("next", note("next"))
	g.AddEdge(graph.START, "fetch").AddEdge("fetch", "next")
	c := compile(t, g)
	out, err := c.Invoke(bg, S{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(out.Notes, "|") != "fetch failed: flaky|fallback|next" || calls.get("fetch") != 2 {
		t.Fatalf("notes %q after %d attempts", out.Notes, calls.get("fetch"))
	}
	_, err = c.Invoke(bg, S{Answer: "fatal"})
	wantErr(t, err, `node "fetch"`, "cannot recover", "the error handler failed", "flaky")

	// The handler's state type must be the graph's.
	type Other struct {
		X int `json:"x"`
	}
	bad := graph.New[S]()
	bad.AddNode("n", note("n"), graph.OnError(func(ctx context.Context, s Other, err error) (*graph.Command[Other], error) { return nil, nil }))
	bad.AddEdge(graph.START, "n")
	_, err = bad.Compile()
	wantErr(t, err, `node "n"`, "error handler takes state")
}
