package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trellis-go/trellis/cache"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/checkpoint/pgsaver"
	"github.com/trellis-go/trellis/checkpoint/sqlitesaver"
	"github.com/trellis-go/trellis/graph"
)

// savers returns the savers the functional API is tested on: memory, SQLite, and Postgres when
// one is reachable at 127.0.0.1:5432 (db test).
func savers(t *testing.T) map[string]func(t *testing.T) checkpoint.Saver {
	return map[string]func(t *testing.T) checkpoint.Saver{
		"memory": func(t *testing.T) checkpoint.Saver { return checkpoint.NewMemorySaver() },
		"sqlite": func(t *testing.T) checkpoint.Saver {
			s, err := sqlitesaver.Open(bg, filepath.Join(t.TempDir(), "cp.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"postgres": func(t *testing.T) checkpoint.Saver {
			pool := pgTestPool(t)
			s, err := pgsaver.New(bg, pool, nil)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
}

// pgTestPool returns a pool on a schema of the test's own (dropped at cleanup), or skips the
// test, saying so, when Postgres is unreachable.
func pgTestPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	url := "postgres://postgres@127.0.0.1:5432/test?sslmode=disable&connect_timeout=5"
	admin, err := pgxpool.New(bg, url)
	if err == nil {
		err = admin.Ping(bg)
	}
	if err != nil {
		if admin != nil {
			admin.Close()
		}
		t.Skipf("Postgres at 127.0.0.1:5432 (db test) is unreachable, so the Postgres case is skipped: %v", err)
	}
	schema := fmt.Sprintf("graph_test_%s", strings.ToLower(strings.NewReplacer("/", "_", "-", "_").Replace(t.Name())))
	schema = schema[:min(len(schema), 60)]
	if _, err := admin.Exec(bg, "DROP SCHEMA IF EXISTS "+schema+" CASCADE; CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 4
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	pool, err := pgxpool.NewWithConfig(bg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pool.Close()
		admin.Exec(bg, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		admin.Close()
	})
	return pool
}

// TestFunctionalTasksRunOnceAcrossInterrupt: an entrypoint calls two tasks, then asks for
// approval; resumed, it runs again from its start, but the finished tasks return their recorded
// results instead of running again, and the thread keeps the return value.
func TestFunctionalTasksRunOnceAcrossInterrupt(t *testing.T) {
	for name, mk := range savers(t) {
		t.Run(name, func(t *testing.T) {
			calls := newCounter()
			double := graph.NewTask("double", func(ctx context.Context, n int) (int, error) {
				calls.inc("double")
				return 2 * n, nil
			})
			square := graph.NewTask("square", func(ctx context.Context, n int) (int, error) {
				calls.inc("square")
				return n * n, nil
			})
			ep, err := graph.NewEntrypoint("workflow", func(ctx context.Context, n int) (string, error) {
				calls.inc("workflow")
				a := double.Call(ctx, n)
				b := square.Call(ctx, n)
				x, err := a.Get()
				if err != nil {
					return "", err
				}
				y, err := b.Get()
				if err != nil {
					return "", err
				}
				ok, err := graph.InterruptAs[bool](ctx, fmt.Sprintf("accept %d and %d?", x, y))
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("%d,%d,%v", x, y, ok), nil
			}, graph.CompileOptions{Saver: mk(t)})
			if err != nil {
				t.Fatal(err)
			}
			_, err = ep.Invoke(bg, 3, graph.WithThread("t"))
			ins := interrupted(t, err)
			if len(ins) != 1 || ins[0].Value != "accept 6 and 9?" || ins[0].Node != "workflow" {
				t.Fatalf("interrupts %+v", ins)
			}
			evs, err := collect(ep.Stream(bg, 0, graph.WithThread("t"), graph.Resume(true), graph.WithStreamModes(graph.ModeUpdates, graph.ModeValues)))
			if err != nil {
				t.Fatal(err)
			}
			if calls.get("double") != 1 || calls.get("square") != 1 || calls.get("workflow") != 2 {
				t.Fatalf("calls %v: each task should run once, the entrypoint twice", calls.n)
			}
			var got []string
			for _, ev := range evs {
				got = append(got, fmt.Sprintf("%s:%s=%v cached=%v", ev.Mode, ev.Node, ev.Data, ev.Cached))
			}
			want := []string{
				"updates:double=6 cached=true",
				"updates:square=9 cached=true",
				"updates:workflow=6,9,true cached=false",
				"values:=6,9,true cached=false",
			}
			if !slices.Equal(got, want) {
				t.Fatalf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			snap, err := ep.State(bg, refOf("t"))
			if err != nil {
				t.Fatal(err)
			}
			if snap.Values != "6,9,true" || len(snap.Next) != 0 {
				t.Fatalf("state %+v", snap)
			}
		})
	}
}

// TestFunctionalResumeAfterFailure: a crash (here a failing entrypoint) after a task finished;
// continuing the thread does not run the task again.
func TestFunctionalResumeAfterFailure(t *testing.T) {
	for name, mk := range savers(t) {
		t.Run(name, func(t *testing.T) {
			calls := newCounter()
			fail := true
			slow := graph.NewTask("fetch", func(ctx context.Context, q string) ([]string, error) {
				calls.inc("fetch")
				return []string{q + "-1", q + "-2"}, nil
			})
			ep, err := graph.NewEntrypoint("wf", func(ctx context.Context, q string) (int, error) {
				docs, err := slow.Call(ctx, q).Get()
				if err != nil {
					return 0, err
				}
				if fail {
					return 0, errors.New("the process died")
				}
				return len(docs), nil
			}, graph.CompileOptions{Saver: mk(t)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ep.Invoke(bg, "q", graph.WithThread("t")); err == nil || !strings.Contains(err.Error(), "the process died") {
				t.Fatalf("err %v", err)
			}
			fail = false
			n, err := ep.Invoke(bg, "", graph.WithThread("t"), graph.Continue())
			if err != nil || n != 2 {
				t.Fatalf("continued: %v %v", n, err)
			}
			if calls.get("fetch") != 1 {
				t.Fatalf("fetch ran %d times, want once", calls.get("fetch"))
			}
		})
	}
}

// TestFunctionalPreviousAndFinal: previous holds what the last run on the thread saved; a Final
// returns one value and saves another.
func TestFunctionalPreviousAndFinal(t *testing.T) {
	for name, mk := range savers(t) {
		t.Run(name, func(t *testing.T) {
			ep, err := graph.NewEntrypointFinal("acc", func(ctx context.Context, n int) (graph.Final[string, int], error) {
				prev, _ := graph.Previous[int](ctx)
				total := prev + n
				return graph.Final[string, int]{Value: fmt.Sprintf("total %d", total), Save: total}, nil
			}, graph.CompileOptions{Saver: mk(t)})
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range []string{"total 1", "total 3", "total 6"} {
				got, err := ep.Invoke(bg, i+1, graph.WithThread("t"))
				if err != nil || got != want {
					t.Fatalf("run %d: %q %v, want %q", i, got, err, want)
				}
			}
			// Another thread starts from nothing.
			if got, _ := ep.Invoke(bg, 5, graph.WithThread("u")); got != "total 5" {
				t.Fatalf("new thread: %q", got)
			}
			// The saved value is what update-state sets.
			r := ep.Runnable()
			if _, err := r.UpdateState(bg, refOf("t"), json.RawMessage(`100`), ""); err != nil {
				t.Fatal(err)
			}
			if got, _ := ep.Invoke(bg, 1, graph.WithThread("t")); got != "total 101" {
				t.Fatalf("after update: %q", got)
			}
		})
	}
}

// TestFunctionalInterruptInsideTasks: two tasks pause at once; each is resumed by ID; a task
// that asks twice keeps its first answer.
func TestFunctionalInterruptInsideTasks(t *testing.T) {
	for name, mk := range savers(t) {
		t.Run(name, func(t *testing.T) {
			calls := newCounter()
			ask := graph.NewTask("ask", func(ctx context.Context, who string) (string, error) {
				calls.inc("ask " + who)
				first, err := graph.InterruptAs[string](ctx, "first name of "+who+"?")
				if err != nil {
					return "", err
				}
				last, err := graph.InterruptAs[string](ctx, "last name of "+who+"?")
				if err != nil {
					return "", err
				}
				return first + " " + last, nil
			})
			ep, err := graph.NewEntrypoint("names", func(ctx context.Context, who []string) ([]string, error) {
				var fs []*graph.Future[string]
				for _, w := range who {
					fs = append(fs, ask.Call(ctx, w))
				}
				var out []string
				for _, f := range fs {
					v, err := f.Get()
					if err != nil {
						return nil, err
					}
					out = append(out, v)
				}
				return out, nil
			}, graph.CompileOptions{Saver: mk(t)})
			if err != nil {
				t.Fatal(err)
			}
			answer := func(ins []graph.Interruption, prefix string) map[string]any {
				m := map[string]any{}
				for _, in := range ins {
					m[in.ID] = prefix + strings.TrimSuffix(strings.Fields(in.Value.(string))[3], "?")
				}
				return m
			}
			_, err = ep.Invoke(bg, []string{"ada", "bob"}, graph.WithThread("t"))
			ins := interrupted(t, err)
			if len(ins) != 2 || ins[0].Node != "ask" || ins[0].ID == ins[1].ID {
				t.Fatalf("interrupts %+v, want one per task", ins)
			}
			_, err = ep.Invoke(bg, nil, graph.WithThread("t"), graph.ResumeMap(answer(ins, "F-")))
			ins = interrupted(t, err)
			if len(ins) != 2 || !strings.HasPrefix(ins[0].Value.(string), "last name") {
				t.Fatalf("second interrupts %+v", ins)
			}
			got, err := ep.Invoke(bg, nil, graph.WithThread("t"), graph.ResumeMap(answer(ins, "L-")))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, []string{"F-ada L-ada", "F-bob L-bob"}) {
				t.Fatalf("got %q", got)
			}
		})
	}
}

// TestFunctionalStreamsTasksAndCustom: updates per task and for the entrypoint, custom values
// from tasks, and a graph run from inside a task.
func TestFunctionalStreamsTasksAndCustom(t *testing.T) {
	inner := graph.New[S]()
	inner.AddNode("n", func(ctx context.Context, s S) (S, error) { return S{Count: s.Count * 10}, nil })
	inner.AddEdge(graph.START, "n")
	innerC := compile(t, inner)
	viaGraph := graph.NewTask("via_graph", func(ctx context.Context, n int) (int, error) {
		graph.Emit(ctx, "running the graph")
		out, err := innerC.Invoke(ctx, S{Count: n})
		return out.Count, err
	})
	ep, err := graph.NewEntrypoint("wf", func(ctx context.Context, n int) (int, error) {
		graph.Emit(ctx, "start")
		return viaGraph.Call(ctx, n).Get()
	})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(ep.Stream(bg, 4, graph.WithStreamModes(graph.ModeUpdates, graph.ModeCustom, graph.ModeValues)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		got = append(got, fmt.Sprintf("%s:%s=%v", ev.Mode, ev.Node, ev.Data))
	}
	want := []string{"custom:wf=start", "custom:via_graph=running the graph", "updates:via_graph=44", "updates:wf=44", "values:=44"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// TestEntrypointAsNodeAndRunnable: an entrypoint runs as a node of a graph (its interrupt
// pausing the parent), and its Runnable view takes the input as JSON.
func TestEntrypointAsNodeAndRunnable(t *testing.T) {
	calls := newCounter()
	work := graph.NewTask("work", func(ctx context.Context, s string) (string, error) {
		calls.inc("work")
		return strings.ToUpper(s), nil
	})
	ep, err := graph.NewEntrypoint("shout", func(ctx context.Context, s string) (string, error) {
		up, err := work.Call(ctx, s).Get()
		if err != nil {
			return "", err
		}
		ok, err := graph.InterruptAs[bool](ctx, "shout "+up+"?")
		if err != nil || !ok {
			return "", err
		}
		return up + "!", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[S]()
	graph.AddEntrypoint(g, "shout", ep, func(s S) string { return s.Answer }, func(out string) S { return S{Answer: out} })
	g.AddEdge(graph.START, "shout")
	c, _ := withSaver(t, g)
	_, err = c.Invoke(bg, S{Answer: "hi"}, graph.WithThread("t"))
	if ins := interrupted(t, err); ins[0].Value != "shout HI?" {
		t.Fatalf("interrupts %+v", ins)
	}
	out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.Resume(true))
	if err != nil || out.Answer != "HI!" {
		t.Fatalf("resumed: %+v %v", out, err)
	}
	if calls.get("work") != 1 {
		t.Fatalf("work ran %d times", calls.get("work"))
	}

	// The Runnable view, as trellis serve holds it.
	r := ep.Runnable()
	if r.StateType().Kind().String() != "string" {
		t.Fatalf("state type %v", r.StateType())
	}
	_, err = collect(r.Stream(bg, json.RawMessage(`{"not":"a string"}`)))
	wantErr(t, err, `entrypoint "shout"`, "does not decode")
}

// TestTaskOutsideEntrypoint: a task called outside a run is a plain function call, with its
// retry policy.
func TestTaskOutsideEntrypoint(t *testing.T) {
	n := 0
	flaky := graph.NewTask("flaky", func(ctx context.Context, s string) (string, error) {
		n++
		if n < 3 {
			return "", errors.New("try again")
		}
		return s + "!", nil
	}, graph.TaskRetry(graph.RetryPolicy{MaxAttempts: 3, InitialInterval: 1}))
	got, err := flaky.Call(bg, "ok").Get()
	if err != nil || got != "ok!" || n != 3 {
		t.Fatalf("%q %v after %d attempts", got, err, n)
	}
}

// TestFunctionalDurabilities: under every durability, a task that finished before an interrupt
// is not run again on resume (with exit durability its result is saved when the run pauses).
func TestFunctionalDurabilities(t *testing.T) {
	for _, d := range []graph.Durability{graph.DurabilitySync, graph.DurabilityAsync, graph.DurabilityExit} {
		t.Run(string(d), func(t *testing.T) {
			calls := newCounter()
			step := graph.NewTask("step", func(ctx context.Context, n int) (int, error) {
				calls.inc("step")
				return n + 1, nil
			})
			ep, err := graph.NewEntrypoint("wf", func(ctx context.Context, n int) (int, error) {
				a, err := step.Call(ctx, n).Get()
				if err != nil {
					return 0, err
				}
				b, err := step.Call(ctx, a).Get()
				if err != nil {
					return 0, err
				}
				if _, err := graph.Interrupt(ctx, "go on?"); err != nil {
					return 0, err
				}
				return b, nil
			}, graph.CompileOptions{Saver: savers(t)["sqlite"](t), Durability: d})
			if err != nil {
				t.Fatal(err)
			}
			_, err = ep.Invoke(bg, 1, graph.WithThread("t"))
			interrupted(t, err)
			got, err := ep.Invoke(bg, 0, graph.WithThread("t"), graph.Resume("yes"))
			if err != nil || got != 3 || calls.get("step") != 2 {
				t.Fatalf("got %d %v; step ran %d times, want twice in all", got, err, calls.get("step"))
			}
		})
	}
}

// TestTaskCache: a task with a cache policy runs once per input across runs and threads; the
// cached call's update is marked cached.
func TestTaskCache(t *testing.T) {
	calls := newCounter()
	embed := graph.NewTask("embed", func(ctx context.Context, s string) (int, error) {
		calls.inc("embed")
		return len(s), nil
	}, graph.TaskCache(graph.CachePolicy{}))
	ep, err := graph.NewEntrypoint("wf", func(ctx context.Context, s string) (int, error) {
		return embed.Call(ctx, s).Get()
	}, graph.CompileOptions{Saver: checkpoint.NewMemorySaver(), Cache: cache.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	var cached []bool
	for _, th := range []string{"a", "b"} {
		evs, err := collect(ep.Stream(bg, "hello", graph.WithThread(th), graph.WithStreamModes(graph.ModeUpdates)))
		if err != nil {
			t.Fatal(err)
		}
		if evs[0].Node != "embed" || evs[0].Data != 5 {
			t.Fatalf("events %+v", evs)
		}
		cached = append(cached, evs[0].Cached)
	}
	if calls.get("embed") != 1 || !slices.Equal(cached, []bool{false, true}) {
		t.Fatalf("embed ran %d times; cached %v", calls.get("embed"), cached)
	}
}

// TestFunctionalFork: continuing a thread from the checkpoint an entrypoint paused at forks it:
// the interrupt is asked again (its answer stays on the first branch), while the task that
// finished before it keeps its result.
func TestFunctionalFork(t *testing.T) {
	calls := newCounter()
	ask := graph.NewTask("ask", func(ctx context.Context, q string) (string, error) {
		calls.inc("ask")
		return graph.InterruptAs[string](ctx, q)
	})
	prep := graph.NewTask("prep", func(ctx context.Context, q string) (string, error) {
		calls.inc("prep")
		return q + "?", nil
	})
	ep, err := graph.NewEntrypoint("wf", func(ctx context.Context, q string) (string, error) {
		p, err := prep.Call(ctx, q).Get()
		if err != nil {
			return "", err
		}
		return ask.Call(ctx, p).Get()
	}, graph.CompileOptions{Saver: checkpoint.NewMemorySaver()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ep.Invoke(bg, "why", graph.WithThread("t"))
	interrupted(t, err)
	paused, err := ep.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ep.Invoke(bg, "", graph.WithThread("t"), graph.Resume("because")); err != nil || got != "because" {
		t.Fatalf("resumed: %q %v", got, err)
	}
	_, err = ep.Invoke(bg, "", graph.WithThread("t"), graph.FromCheckpoint(paused.Ref.CheckpointID), graph.Continue())
	if ins := interrupted(t, err); ins[0].Value != "why?" {
		t.Fatalf("fork asks %+v", ins)
	}
	if got, err := ep.Invoke(bg, "", graph.WithThread("t"), graph.Resume("no idea")); err != nil || got != "no idea" {
		t.Fatalf("fork resumed: %q %v", got, err)
	}
	if calls.get("prep") != 1 {
		t.Fatalf("prep ran %d times, want once", calls.get("prep"))
	}
}
