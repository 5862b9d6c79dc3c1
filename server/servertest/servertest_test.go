package servertest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/servertest"
)

type state struct {
	N int `json:"n"`
}

func TestStartServesAndStops(t *testing.T) {
	var s *servertest.Server
	t.Run("serve", func(t *testing.T) {
		s = servertest.Start(t, server.Config{Dev: true, Graphs: []server.GraphSpec{{ID: "count", Build: func(d server.Deps) (graph.Runnable, error) {
			g := graph.New[state]()
			g.AddNode("inc", func(ctx context.Context, st state) (state, error) { return state{N: st.N + 1}, nil })
			g.AddEdge(graph.START, "inc")
			return graph.Erase(g.Compile(graph.CompileOptions{Saver: d.Saver}))
		}}}})
		resp, err := http.Get(s.URL + "/ok")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET /ok: %d", resp.StatusCode)
		}
	})
	// The subtest's cleanup stopped it.
	if _, err := http.Get(s.URL + "/ok"); err == nil {
		t.Fatal("the server still answers after its test ended")
	}
}

func TestStartRefusesABadConfig(t *testing.T) {
	ft := &fakeTB{TB: t}
	func() {
		defer func() { recover() }()
		servertest.Start(ft, server.Config{})
	}()
	if !ft.failed {
		t.Fatal("a configuration with no graph and no app did not fail the test")
	}
}

// fakeTB records a fatal failure instead of ending the test.
type fakeTB struct {
	testing.TB
	failed bool
}

func (f *fakeTB) Fatalf(string, ...any) { f.failed = true; panic("fatal") }
func (f *fakeTB) Helper()               {}
