package server

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/tool"
)

// heldGraph is the short graph whose nodes look into the database first: each records how many
// checkpoints its thread has there when it starts (plan at "plan", act at "act"), and act, with
// break set, deletes its thread's checkpoint head, so that the put after it cannot land.
type heldGraph struct {
	pool *pgxpool.Pool
	mu   sync.Mutex
	seen map[string]int
	// breakHead makes act delete the thread's head row.
	breakHead bool
}

func (h *heldGraph) count(ctx context.Context, node string) error {
	info, _ := tool.CallInfoFrom(ctx)
	var n int
	err := h.pool.QueryRow(ctx, `SELECT count(*) FROM trellis_checkpoints c JOIN trellis_checkpoint_spaces s ON s.id = c.space WHERE s.thread_id = $1`, info.ThreadID).Scan(&n)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.seen[node] = n
	h.mu.Unlock()
	if node == "act" && h.breakHead {
		_, err = h.pool.Exec(ctx, `DELETE FROM trellis_checkpoint_spaces WHERE thread_id = $1`, info.ThreadID)
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
	h := &heldGraph{pool: pool, seen: map[string]int{}}
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
	h := &heldGraph{pool: pool, seen: map[string]int{}, breakHead: true}
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
