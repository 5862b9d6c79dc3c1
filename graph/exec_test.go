package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-go/trellis/graph"
)

func TestSuperstepNodesRunConcurrently(t *testing.T) {
	// Each node waits until the other has started: run one after the other, they would wait
	// forever (the context bounds that failure).
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	started := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	other := map[string]string{"a": "b", "b": "a"}
	g := graph.New[S]()
	for _, n := range []string{"a", "b"} {
		g.AddNode(n, func(ctx context.Context, s S) (S, error) {
			close(started[n])
			select {
			case <-started[other[n]]:
				return S{Notes: []string{n}}, nil
			case <-ctx.Done():
				return S{}, fmt.Errorf("node %s never saw %s start: nodes of a superstep ran one at a time", n, other[n])
			}
		})
		g.AddEdge(graph.START, n)
	}
	out, err := compile(t, g).Invoke(ctx, S{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Notes, []string{"a", "b"}) {
		t.Fatalf("notes %q", out.Notes)
	}
}

func TestNodeNeverSeesItsOwnSuperstepsWrites(t *testing.T) {
	g := graph.New[S]()
	seen := make(chan string, 4)
	for _, n := range []string{"a", "b"} {
		g.AddNode(n, func(ctx context.Context, s S) (S, error) {
			time.Sleep(time.Millisecond) // give the sibling time to finish first
			seen <- fmt.Sprintf("%s saw %v count %d", n, s.Notes, s.Count)
			return S{Notes: []string{n}, Count: 1}, nil
		})
		g.AddEdge(graph.START, n)
		g.AddEdge(n, "c")
	}
	g.AddNode("c", func(ctx context.Context, s S) (S, error) {
		seen <- fmt.Sprintf("c saw %v count %d", s.Notes, s.Count)
		return S{}, nil
	})
	if _, err := compile(t, g).Invoke(bg, S{Notes: []string{"in"}}); err != nil {
		t.Fatal(err)
	}
	close(seen)
	var got []string
	for s := range seen {
		got = append(got, s)
	}
	slices.Sort(got)
	want := []string{"a saw [in] count 0", "b saw [in] count 0", "c saw [in a b] count 2"}
	if !slices.Equal(got, want) {
		t.Fatalf("nodes saw\n%q\nwant\n%q", got, want)
	}
}

func TestMaxConcurrency(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  graph.CompileOptions
		run   []graph.RunOption
		limit int32
	}{
		{"compile option", graph.CompileOptions{MaxConcurrency: 2}, nil, 2},
		{"run option", graph.CompileOptions{MaxConcurrency: 5}, []graph.RunOption{graph.WithMaxConcurrency(1)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inFlight, peak atomic.Int32
			g := graph.New[S]()
			for i := range 6 {
				name := fmt.Sprintf("n%d", i)
				g.AddNode(name, func(ctx context.Context, s S) (S, error) {
					now := inFlight.Add(1)
					for {
						p := peak.Load()
						if now <= p || peak.CompareAndSwap(p, now) {
							break
						}
					}
					time.Sleep(2 * time.Millisecond)
					inFlight.Add(-1)
					return S{Count: 1}, nil
				})
				g.AddEdge(graph.START, name)
			}
			out, err := compile(t, g, tc.opts).Invoke(bg, S{}, tc.run...)
			if err != nil {
				t.Fatal(err)
			}
			if out.Count != 6 {
				t.Fatalf("count %d, want 6", out.Count)
			}
			if p := peak.Load(); p > tc.limit || p < 1 {
				t.Fatalf("peak concurrency %d, want at most %d", p, tc.limit)
			}
		})
	}
}

var errFlaky = errors.New("flaky")

func TestRetryPolicy(t *testing.T) {
	for _, tc := range []struct {
		name      string
		policy    graph.RetryPolicy
		failures  int
		wantCalls int
		wantErr   bool
	}{
		{"succeeds on the third attempt", graph.RetryPolicy{MaxAttempts: 3, InitialInterval: time.Millisecond}, 2, 3, false},
		{"gives up after MaxAttempts", graph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Millisecond}, 5, 2, true},
		{"RetryOn refuses", graph.RetryPolicy{MaxAttempts: 5, InitialInterval: time.Millisecond, RetryOn: func(err error) bool { return !errors.Is(err, errFlaky) }}, 5, 1, true},
		{"RetryOn accepts", graph.RetryPolicy{MaxAttempts: 5, InitialInterval: time.Millisecond, BackoffFactor: 1.5, Jitter: true, RetryOn: func(err error) bool { return errors.Is(err, errFlaky) }}, 3, 4, false},
		{"no policy", graph.RetryPolicy{}, 1, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			g := graph.New[S]()
			g.AddNode("flaky", func(ctx context.Context, s S) (S, error) {
				calls++
				if calls <= tc.failures {
					return S{Notes: []string{"partial"}}, fmt.Errorf("attempt %d: %w", calls, errFlaky)
				}
				return S{Notes: []string{"ok"}}, nil
			}, graph.WithRetry(tc.policy))
			g.AddEdge(graph.START, "flaky")
			out, err := compile(t, g).Invoke(bg, S{})
			if calls != tc.wantCalls {
				t.Fatalf("%d calls, want %d", calls, tc.wantCalls)
			}
			if tc.wantErr {
				wantErr(t, err, `node "flaky" failed`, fmt.Sprintf("attempt %d", calls))
				var ne *graph.NodeError
				if !errors.As(err, &ne) || ne.Node != "flaky" || !errors.Is(err, errFlaky) {
					t.Fatalf("want a *NodeError for flaky wrapping errFlaky, got %#v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(out.Notes, []string{"ok"}) {
				t.Fatalf("notes %q: a failed attempt's writes leaked", out.Notes)
			}
		})
	}
}

func TestRetryWritesOfFailedAttemptAreDropped(t *testing.T) {
	calls := 0
	g := graph.New[S]()
	g.AddNode("w", func(ctx context.Context, s S) (S, error) {
		calls++
		if err := graph.Write(ctx, "notes", []string{fmt.Sprint("attempt ", calls)}); err != nil {
			return S{}, err
		}
		if calls == 1 {
			return S{}, errFlaky
		}
		return S{}, nil
	}, graph.WithRetry(graph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Microsecond}))
	g.AddEdge(graph.START, "w")
	out, err := compile(t, g).Invoke(bg, S{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Notes, []string{"attempt 2"}) {
		t.Fatalf("notes %q, want only the successful attempt's write", out.Notes)
	}
}

func TestNodeTimeout(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("slow", func(ctx context.Context, s S) (S, error) {
		<-ctx.Done()
		return S{}, ctx.Err()
	}, graph.WithTimeout(5*time.Millisecond))
	g.AddEdge(graph.START, "slow")
	_, err := compile(t, g).Invoke(bg, S{})
	wantErr(t, err, `node "slow"`, "timed out after 5ms")
	var ne *graph.NodeError
	if !errors.As(err, &ne) || ne.Node != "slow" {
		t.Fatalf("want a *NodeError naming slow, got %v", err)
	}
}

func TestNodeTimeoutIsRetried(t *testing.T) {
	calls := 0
	g := graph.New[S]()
	g.AddNode("slow", func(ctx context.Context, s S) (S, error) {
		calls++
		if calls == 1 {
			<-ctx.Done()
			return S{}, ctx.Err()
		}
		return S{Answer: "second try"}, nil
	}, graph.WithTimeout(5*time.Millisecond), graph.WithRetry(graph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Millisecond}))
	g.AddEdge(graph.START, "slow")
	out, err := compile(t, g).Invoke(bg, S{})
	if err != nil || out.Answer != "second try" {
		t.Fatalf("got %+v, %v", out, err)
	}
}

func loopGraph(t *testing.T, calls *atomic.Int32, opts ...graph.CompileOptions) *graph.Compiled[S] {
	g := graph.New[S]()
	g.AddNode("spin", func(ctx context.Context, s S) (S, error) {
		calls.Add(1)
		return S{Count: 1}, nil
	})
	g.AddEdge(graph.START, "spin")
	g.AddConditionalEdges("spin", func(ctx context.Context, s S) (string, error) {
		if s.Count < 0 {
			return graph.END, nil
		}
		return "spin", nil
	}, nil)
	return compile(t, g, opts...)
}

func TestRecursionLimit(t *testing.T) {
	var calls atomic.Int32
	c := loopGraph(t, &calls)
	out, err := c.Invoke(bg, S{})
	if !errors.Is(err, graph.ErrRecursionLimit) {
		t.Fatalf("want ErrRecursionLimit, got %v", err)
	}
	wantErr(t, err, "limit 25", "WithRecursionLimit")
	if calls.Load() != 25 || out.Count != 25 {
		t.Fatalf("%d calls, count %d, want 25 supersteps", calls.Load(), out.Count)
	}

	calls.Store(0)
	_, err = c.Invoke(bg, S{}, graph.WithRecursionLimit(3))
	if !errors.Is(err, graph.ErrRecursionLimit) || calls.Load() != 3 {
		t.Fatalf("per-run limit 3: %d calls, %v", calls.Load(), err)
	}

	calls.Store(0)
	c = loopGraph(t, &calls, graph.CompileOptions{RecursionLimit: 4})
	_, err = c.Invoke(bg, S{})
	if !errors.Is(err, graph.ErrRecursionLimit) || calls.Load() != 4 {
		t.Fatalf("compile-time limit 4: %d calls, %v", calls.Load(), err)
	}
}

func TestCancelByContext(t *testing.T) {
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	entered := make(chan struct{})
	calls := newCounter()
	g := graph.New[S]()
	g.AddNode("block", func(ctx context.Context, s S) (S, error) {
		calls.inc("block")
		if calls.get("block") == 1 {
			close(entered)
			<-ctx.Done()
			return S{}, ctx.Err()
		}
		return S{Notes: []string{"block"}}, nil
	})
	g.AddNode("sibling", func(ctx context.Context, s S) (S, error) {
		calls.inc("sibling")
		return S{Notes: []string{"sibling"}}, nil
	})
	g.AddNode("after", note("after"))
	g.AddEdge(graph.START, "block").AddEdge(graph.START, "sibling").AddEdge("block", "after")
	c, _ := withSaver(t, g)
	go func() { <-entered; cancel() }()
	_, err := c.Invoke(ctx, S{}, graph.WithThread("c"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if calls.get("after") != 0 {
		t.Fatal("a node ran after the run was cancelled")
	}
	// The thread continues where it stopped: the sibling finished and is not run again.
	out, err := c.Invoke(bg, S{}, graph.WithThread("c"), graph.Continue())
	if err != nil {
		t.Fatal(err)
	}
	if calls.get("sibling") != 1 {
		t.Fatalf("sibling ran %d times, want once", calls.get("sibling"))
	}
	if want := []string{"block", "sibling", "after"}; !slices.Equal(out.Notes, want) {
		t.Fatalf("notes %q, want %q", out.Notes, want)
	}
}

func TestCancelledContextBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(bg)
	cancel()
	var calls atomic.Int32
	_, err := loopGraph(t, &calls).Invoke(ctx, S{})
	if !errors.Is(err, context.Canceled) || calls.Load() != 0 {
		t.Fatalf("%d calls, err %v; want no node run and context.Canceled", calls.Load(), err)
	}
}

func TestBreakingOutOfStreamStopsRun(t *testing.T) {
	for _, concurrent := range []bool{false, true} {
		t.Run(fmt.Sprint("concurrent=", concurrent), func(t *testing.T) {
			var calls atomic.Int32
			g := graph.New[S]()
			g.AddNode("spin", func(ctx context.Context, s S) (S, error) {
				calls.Add(1)
				graph.Emit(ctx, "tick")
				return S{Count: 1}, nil
			})
			g.AddNode("other", func(ctx context.Context, s S) (S, error) {
				graph.Emit(ctx, "tock")
				return S{}, nil
			})
			g.AddEdge(graph.START, "spin")
			if concurrent {
				g.AddEdge(graph.START, "other")
			}
			g.AddEdge("spin", "spin")
			g.AddConditionalEdges("spin", func(ctx context.Context, s S) (string, error) { return graph.END, nil }, nil)
			c, saver := withSaver(t, g)
			n := 0
			for ev, err := range c.Stream(bg, S{}, graph.WithThread("b"), graph.WithRecursionLimit(1000), graph.WithStreamModes(graph.ModeCustom, graph.ModeValues)) {
				if err != nil {
					t.Fatal(err)
				}
				n++
				if ev.Mode == graph.ModeCustom && n >= 3 {
					break
				}
			}
			if got := calls.Load(); got > 3 {
				t.Fatalf("spin ran %d times after the reader stopped", got)
			}
			// The thread is left resumable.
			if _, err := saver.Get(bg, refOf("b")); err != nil {
				t.Fatalf("no checkpoint after stopping: %v", err)
			}
		})
	}
}

func TestPanickingNode(t *testing.T) {
	calls := newCounter()
	g := graph.New[S]()
	g.AddNode("boom", func(ctx context.Context, s S) (S, error) {
		calls.inc("boom")
		var xs []string
		return S{Answer: xs[len(s.Notes)]}, nil // index out of range
	})
	g.AddNode("fine", func(ctx context.Context, s S) (S, error) {
		calls.inc("fine")
		return S{Notes: []string{"fine"}}, nil
	})
	g.AddEdge(graph.START, "boom").AddEdge(graph.START, "fine")
	c, _ := withSaver(t, g)
	_, err := c.Invoke(bg, S{}, graph.WithThread("p"))
	wantErr(t, err, `node "boom" failed`, "panic", "index out of range")
	var ne *graph.NodeError
	if !errors.As(err, &ne) || ne.Node != "boom" {
		t.Fatalf("want a NodeError for boom, got %v", err)
	}
	// Nothing else broke: the snapshot shows the error, and the graph still runs other threads.
	snap, err := c.State(bg, refOf("p"))
	if err != nil {
		t.Fatal(err)
	}
	var errText string
	for _, task := range snap.Tasks {
		if task.Name == "boom" {
			errText = task.Error
		}
		if task.Name == "fine" && !task.Done {
			t.Fatalf("the sibling that succeeded is not recorded as done: %+v", snap.Tasks)
		}
	}
	if errText == "" {
		t.Fatalf("the snapshot does not record boom's error: %+v", snap.Tasks)
	}
	if calls.get("fine") != 1 {
		t.Fatalf("fine ran %d times", calls.get("fine"))
	}
	if _, err := c.Invoke(bg, S{}, graph.WithThread("q")); err == nil {
		t.Fatal("boom should fail again on a fresh thread")
	}
}

func TestPanickingRoute(t *testing.T) {
	for _, from := range []string{graph.START, "a"} {
		t.Run(from, func(t *testing.T) {
			g := graph.New[S]()
			g.AddNode("a", note("a"))
			g.AddNode("b", note("b"))
			if from != graph.START {
				g.AddEdge(graph.START, "a")
				g.AddEdge(graph.START, "b") // run a concurrently, so a panic would kill the process
			}
			g.AddConditionalEdges(from, func(ctx context.Context, s S) (string, error) {
				var p *S
				return p.Answer, nil // panics
			}, nil)
			_, err := compile(t, g).Invoke(bg, S{})
			wantErr(t, err, fmt.Sprintf("%q", from), "panic")
		})
	}
}
