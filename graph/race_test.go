package graph_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/trellis-go/trellis/graph"
)

func TestCompiledGraphIsSafeForConcurrentRuns(t *testing.T) {
	calls := newCounter()
	c := twoApprovals(t, calls)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			thread := fmt.Sprint("t", i)
			_, err := c.Invoke(bg, S{}, graph.WithThread(thread))
			snap, gerr := c.State(bg, refOf(thread))
			if gerr != nil {
				errs <- gerr
				return
			}
			m := map[string]any{}
			for _, in := range snap.Interrupts() {
				m[in.ID] = i
			}
			if len(m) != 2 {
				errs <- fmt.Errorf("thread %s: %d interrupts (%v)", thread, len(m), err)
				return
			}
			out, err := c.Invoke(bg, S{}, graph.WithThread(thread), graph.ResumeMap(m))
			if err != nil {
				errs <- err
				return
			}
			if len(out.Notes) != 3 || out.Count != 1 {
				errs <- fmt.Errorf("thread %s: %+v", thread, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if calls.get("audit") != 8 {
		t.Fatalf("audit ran %d times for 8 threads", calls.get("audit"))
	}
}

func TestEmitFromTheNodesOwnGoroutines(t *testing.T) {
	// A node that fans work out to goroutines (parallel tool calls, a streaming model client)
	// may emit from them; the stream's reader must still be called one event at a time.
	g := graph.New[S]()
	g.AddNode("fan", func(ctx context.Context, s S) (S, error) {
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range 50 {
					graph.Emit(ctx, fmt.Sprint(w, "/", j))
				}
			}()
		}
		wg.Wait()
		return S{}, nil
	})
	g.AddEdge(graph.START, "fan")
	seen := 0
	inBody := false
	for ev, err := range compile(t, g).Stream(bg, S{}, graph.WithStreamModes(graph.ModeCustom)) {
		if err != nil {
			t.Fatal(err)
		}
		if inBody {
			t.Fatal("the stream's loop body ran concurrently with itself")
		}
		inBody = true
		_ = ev
		seen++
		inBody = false
	}
	if seen != 200 {
		t.Fatalf("%d events, want 200", seen)
	}
}

func TestEmitAfterTheRunEndedIsDropped(t *testing.T) {
	late := make(chan struct{})
	done := make(chan struct{})
	g := graph.New[S]()
	g.AddNode("leaky", func(ctx context.Context, s S) (S, error) {
		go func() {
			defer close(done)
			<-late
			graph.Emit(ctx, "too late") // the run is over: must be dropped, not crash the reader
		}()
		return S{}, nil
	})
	g.AddEdge(graph.START, "leaky")
	n := 0
	for _, err := range compile(t, g).Stream(bg, S{}, graph.WithStreamModes(graph.ModeCustom, graph.ModeValues)) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	close(late)
	<-done
	if n != 2 {
		t.Fatalf("%d events, want 2 values events", n)
	}
}
