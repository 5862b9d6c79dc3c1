package graph_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

// TestMain fails the package when a test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// S is the state most tests use: one key per kind of reducer.
type S struct {
	Messages []message.Message `json:"messages" reduce:"messages"`
	Notes    []string          `json:"notes" reduce:"append"`
	Count    int               `json:"count" reduce:"sum"`
	Scores   map[string]int    `json:"scores" reduce:"merge"`
	Answer   string            `json:"answer"`
	Flag     bool              `json:"flag"`
}

// note returns a node that appends its name to Notes.
func note(name string) graph.NodeFunc[S] {
	return func(ctx context.Context, s S) (S, error) { return S{Notes: []string{name}}, nil }
}

// counter counts calls of nodes by name, safely from concurrent nodes.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func newCounter() *counter { return &counter{n: map[string]int{}} }

func (c *counter) inc(name string) {
	c.mu.Lock()
	c.n[name]++
	c.mu.Unlock()
}

func (c *counter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

// compile compiles g or fails the test.
func compile[T any](t *testing.T, g *graph.Graph[T], opts ...graph.CompileOptions) *graph.Compiled[T] {
	t.Helper()
	c, err := g.Compile(opts...)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return c
}

// newSaver returns the saver the tests run on: a fresh in-memory one. A file that is not
// committed may point it at another saver to run every test against that one.
var newSaver = func(t *testing.T) checkpoint.Saver { return checkpoint.NewMemorySaver() }

// withSaver compiles g with a fresh saver (see newSaver) and returns both.
func withSaver[T any](t *testing.T, g *graph.Graph[T], opts ...graph.CompileOptions) (*graph.Compiled[T], checkpoint.Saver) {
	t.Helper()
	var o graph.CompileOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	saver := newSaver(t)
	o.Saver = saver
	return compile(t, g, o), saver
}

// collect consumes a stream, returning its events and the error that ended it.
func collect(seq iter.Seq2[graph.Event, error]) ([]graph.Event, error) {
	var evs []graph.Event
	for ev, err := range seq {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// ofMode keeps the events of one mode.
func ofMode(evs []graph.Event, mode graph.StreamMode) []graph.Event {
	var out []graph.Event
	for _, ev := range evs {
		if ev.Mode == mode {
			out = append(out, ev)
		}
	}
	return out
}

// updatedNodes lists the nodes of the updates events in order, except that a run of events of
// one superstep (same step and namespace), whose tasks' updates stream as each task ends, is
// listed by node name.
func updatedNodes(evs []graph.Event) []string {
	ups := ofMode(evs, graph.ModeUpdates)
	var out []string
	for i := 0; i < len(ups); {
		j := i + 1
		for j < len(ups) && ups[j].Step == ups[i].Step && slices.Equal(ups[j].NS, ups[i].NS) {
			j++
		}
		var group []string
		for _, ev := range ups[i:j] {
			group = append(group, ev.Node)
		}
		slices.Sort(group)
		out = append(out, group...)
		i = j
	}
	return out
}

// history returns a thread's root checkpoints, oldest first.
func history[T any](t *testing.T, c *graph.Compiled[T], thread string) []*graph.StateSnapshot[T] {
	t.Helper()
	var out []*graph.StateSnapshot[T]
	for snap, err := range c.History(context.Background(), thread, graph.HistoryOptions{}) {
		if err != nil {
			t.Fatalf("History: %v", err)
		}
		out = append(out, snap)
	}
	slices.Reverse(out)
	return out
}

// interrupted returns the interrupts err carries, failing the test when it carries none.
func interrupted(t *testing.T, err error) []graph.Interruption {
	t.Helper()
	var ie *graph.InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("want an *InterruptedError, got %v", err)
	}
	return ie.Interrupts
}

func texts(msgs []message.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content
	}
	return out
}

// wantErr fails the test unless err is set and its message contains every part.
func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error mentioning %q, got none", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not mention %q", err, p)
		}
	}
}

var bg = context.Background()

func refOf(thread string) checkpoint.Ref { return checkpoint.Ref{ThreadID: thread} }

// blobsOf returns the chain of blobs that the thread's newest root checkpoint reads for a
// channel, newest first.
func blobsOf(t *testing.T, saver checkpoint.Saver, thread, channel string) []checkpoint.Blob {
	t.Helper()
	tuple, err := saver.Get(context.Background(), refOf(thread))
	if err != nil {
		t.Fatalf("saver.Get: %v", err)
	}
	var chain []checkpoint.Blob
	for v := tuple.Checkpoint.Versions[channel]; v != ""; {
		found := false
		for _, b := range tuple.Blobs {
			if b.Channel == channel && b.Version == v {
				chain = append(chain, b)
				v, found = b.Base, true
				break
			}
		}
		if !found {
			t.Fatalf("no blob %s@%s", channel, v)
		}
	}
	return chain
}
