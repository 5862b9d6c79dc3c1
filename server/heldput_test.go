package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/trellis-go/trellis/checkpoint/sqlitesaver"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/tool"
)

// heldGraph is the short graph whose nodes look into the database first: each records how many
// checkpoints its thread has there when it starts (plan at "plan", act at "act"), and act, with
// break set, deletes its thread's checkpoint head, so that the put after it cannot land.
type heldGraph struct {
	// checkpoints counts the thread's checkpoints in the database; dropHead deletes its head row.
	checkpoints func(ctx context.Context, threadID string) (int, error)
	dropHead    func(ctx context.Context, threadID string) error
	mu          sync.Mutex
	seen        map[string]int
	// breakHead makes act delete the thread's head row.
	breakHead bool
}

const (
	heldCountSQL = `SELECT count(*) FROM trellis_checkpoints c JOIN trellis_checkpoint_spaces s ON s.id = c.space WHERE s.thread_id = `
	heldDropSQL  = `DELETE FROM trellis_checkpoint_spaces WHERE thread_id = `
)

// pgHeldGraph is a heldGraph looking into Postgres through pool.
func pgHeldGraph(pool *pgxpool.Pool, breakHead bool) *heldGraph {
	return &heldGraph{seen: map[string]int{}, breakHead: breakHead,
		checkpoints: func(ctx context.Context, thread string) (n int, err error) {
			err = pool.QueryRow(ctx, heldCountSQL+"$1", thread).Scan(&n)
			return n, err
		},
		dropHead: func(ctx context.Context, thread string) error {
			_, err := pool.Exec(ctx, heldDropSQL+"$1", thread)
			return err
		}}
}

func (h *heldGraph) count(ctx context.Context, node string) error {
	info, _ := tool.CallInfoFrom(ctx)
	n, err := h.checkpoints(ctx, info.ThreadID)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.seen[node] = n
	h.mu.Unlock()
	if node == "act" && h.breakHead {
		err = h.dropHead(ctx, info.ThreadID)
	}
	return err
}

func (h *heldGraph) build(deps Deps) (graph.Runnable, error) {
	g := graph.New[pgShortState]()
	g.AddNode("plan", func(ctx context.Context, s pgShortState) (pgShortState, error) {
		return pgShortState{Steps: []string{"plan:" + s.Topic}}, h.count(ctx, "plan")
	})
	g.AddNode("act", func(ctx context.Context, s pgShortState) (pgShortState, error) {
		return pgShortState{Steps: []string{"act"}}, h.count(ctx, "act")
	})
	g.AddEdge(graph.START, "plan").AddEdge("plan", "act").AddEdge("act", graph.END)
	return graph.Erase(g.Compile(graph.CompileOptions{Name: "held", Saver: deps.Saver, Store: deps.Store}))
}

// On Postgres a stateless run's checkpoints are held back to go with the event after them
// (newThreadSaver), but never past the start of the next node: each node finds in the database
// every checkpoint before it, whatever stream modes the run asked for.
func TestPostgresHeldCheckpointsBeforeNodes(t *testing.T) {
	t.Parallel()
	url := pgURL(t)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	h := pgHeldGraph(pool, false)
	b := setup(t, setupOpts{cfg: Config{DatabaseURL: url}, extra: []GraphSpec{{ID: "held", Build: h.build}}})
	for _, modes := range [][]string{{"values"}, {"updates"}, {"messages-tuple"}} {
		t.Run(fmt.Sprint(modes), func(t *testing.T) {
			var out pgShortState
			b.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": "held", "input": map[string]any{"topic": "x"}, "stream_mode": modes}, &out, 200)
			if len(out.Steps) != 2 {
				t.Fatalf("steps %q", out.Steps)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			// plan follows the input's checkpoint and __start__'s; act follows plan's too.
			if h.seen["plan"] != 2 || h.seen["act"] != 3 {
				t.Errorf("checkpoints in the database when the nodes started: %v, want plan 2, act 3", h.seen)
			}
		})
	}
}

// A held checkpoint that cannot be written fails the run, as a put that failed at once does.
func TestPostgresHeldCheckpointFails(t *testing.T) {
	t.Parallel()
	url := pgURL(t)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	h := pgHeldGraph(pool, true)
	b := setup(t, setupOpts{cfg: Config{DatabaseURL: url}, extra: []GraphSpec{{ID: "held", Build: h.build}}})
	var out map[string]any
	code := b.do("POST", "/runs/wait", map[string]any{"assistant_id": "held", "input": map[string]any{"topic": "x"}}, &out)
	t.Logf("wait: %d %v", code, out)
	if h.seen["act"] != 3 {
		t.Fatalf("act saw %d checkpoints, want 3", h.seen["act"])
	}
	if out["__error__"] == nil {
		t.Fatalf("a run whose last checkpoint could not be written answered %d %v, want its error", code, out)
	}
}

// sqliteHeldGraph is a heldGraph looking into the SQLite database of the server it is built
// for, through the saver's own connection.
func sqliteHeldGraph(breakHead bool) (*heldGraph, func(Deps) (graph.Runnable, error)) {
	h := &heldGraph{seen: map[string]int{}, breakHead: breakHead}
	return h, func(d Deps) (graph.Runnable, error) {
		db := d.Saver.(newThreadSaver).Saver.(*sqlitesaver.Saver).DB()
		h.checkpoints = func(ctx context.Context, thread string) (n int, err error) {
			err = db.QueryRowContext(ctx, heldCountSQL+"?", thread).Scan(&n)
			return n, err
		}
		h.dropHead = func(ctx context.Context, thread string) error {
			_, err := db.ExecContext(ctx, heldDropSQL+"?", thread)
			return err
		}
		return h.build(d)
	}
}

// On SQLite a stateless run's checkpoints are held back and written together: with sync
// durability a node's checkpoint before the next node starts, the input's and __start__'s with
// the first node's (plan finds none, act finds all three before it); with a resumable stream
// each before the event after it (plan finds two); with async durability all at the end (act
// finds none). The run's answer is the same each way.
func TestSQLiteHeldCheckpoints(t *testing.T) {
	t.Parallel()
	h, build := sqliteHeldGraph(false)
	b := setup(t, setupOpts{extra: []GraphSpec{{ID: "held", Build: build}}})
	for _, c := range []struct {
		name      string
		req       map[string]any
		plan, act int
	}{
		{"sync", map[string]any{}, 0, 3},
		{"sync updates", map[string]any{"stream_mode": []string{"updates"}}, 0, 3},
		{"resumable", map[string]any{"stream_resumable": true}, 2, 3},
		{"async", map[string]any{"durability": "async"}, 0, 0},
		{"exit", map[string]any{"durability": "exit"}, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := map[string]any{"assistant_id": "held", "input": map[string]any{"topic": "x"}}
			for k, v := range c.req {
				req[k] = v
			}
			var out pgShortState
			b.mustDo("POST", "/runs/wait", req, &out, 200)
			if len(out.Steps) != 2 || out.Steps[0] != "plan:x" {
				t.Fatalf("steps %q", out.Steps)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.seen["plan"] != c.plan || h.seen["act"] != c.act {
				t.Errorf("checkpoints in the database when the nodes started: %v, want plan %d, act %d", h.seen, c.plan, c.act)
			}
		})
	}
	// A run stopped before act (a breakpoint) writes what it holds when the graph returns:
	// its answer is plan's state.
	var out pgShortState
	b.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": "held", "input": map[string]any{"topic": "y"}, "interrupt_before": []string{"act"}}, &out, 200)
	if len(out.Steps) != 1 || out.Steps[0] != "plan:y" {
		t.Errorf("a run stopped before act answered steps %q, want [plan:y]", out.Steps)
	}
}

// On SQLite too, a held checkpoint that cannot be written fails the run, and a node that fails
// fails it with its error, after its predecessors' checkpoints were written.
func TestSQLiteHeldCheckpointFails(t *testing.T) {
	t.Parallel()
	h, build := sqliteHeldGraph(true)
	b := setup(t, setupOpts{extra: []GraphSpec{{ID: "held", Build: build}}})
	var out map[string]any
	code := b.do("POST", "/runs/wait", map[string]any{"assistant_id": "held", "input": map[string]any{"topic": "x"}}, &out)
	if h.seen["act"] != 3 {
		t.Fatalf("act saw %d checkpoints, want 3", h.seen["act"])
	}
	if out["__error__"] == nil {
		t.Fatalf("a run whose last checkpoint could not be written answered %d %v, want its error", code, out)
	}
	if !strings.Contains(fmt.Sprint(out["__error__"]), "conflict") {
		t.Errorf("the run's error %v does not name the put's conflict", out["__error__"])
	}
}
