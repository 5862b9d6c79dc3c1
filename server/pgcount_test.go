package server

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/trellis-go/trellis/graph"
)

// sqlCounter is a pgx tracer counting the statements a pool sends while on, the round trips
// they take (a batch is one however many statements it holds), and each statement's wall time.
type sqlCounter struct {
	mu     sync.Mutex
	on     bool
	stmts  int
	trips  int
	byText map[string]int
	wall   map[string]time.Duration
}

type sqlStartKey struct{}

type sqlStart struct {
	at   time.Time
	text string
}

func (c *sqlCounter) count(text string, trip bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.on {
		return
	}
	c.stmts++
	if trip {
		c.trips++
	}
	c.byText[text]++
}

func (c *sqlCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	text := oneLine(d.SQL)
	c.count(text, true)
	return context.WithValue(ctx, sqlStartKey{}, sqlStart{time.Now(), text})
}

func (c *sqlCounter) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	s, ok := ctx.Value(sqlStartKey{}).(sqlStart)
	if !ok {
		return
	}
	c.mu.Lock()
	if c.on {
		c.wall[s.text] += time.Since(s.at)
	}
	c.mu.Unlock()
}

func (c *sqlCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.mu.Lock()
	if c.on {
		c.trips++
	}
	c.mu.Unlock()
	return ctx
}

func (c *sqlCounter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	c.count("[batch] "+oneLine(d.SQL), false)
}

func (c *sqlCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (c *sqlCounter) set(on bool) {
	c.mu.Lock()
	c.on = on
	c.mu.Unlock()
}

// oneLine is a statement's text on one line, cut at 120 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

type pgShortState struct {
	Topic string   `json:"topic"`
	Steps []string `json:"steps" reduce:"append"`
}

// buildPgShort is the bench's short graph (bench/serverbench): plan, then act.
func buildPgShort(deps Deps) (graph.Runnable, error) {
	g := graph.New[pgShortState]()
	g.AddNode("plan", func(_ context.Context, s pgShortState) (pgShortState, error) {
		return pgShortState{Steps: []string{"plan:" + s.Topic}}, nil
	})
	g.AddNode("act", func(_ context.Context, s pgShortState) (pgShortState, error) {
		return pgShortState{Steps: []string{"act"}}, nil
	})
	g.AddEdge(graph.START, "plan").AddEdge("plan", "act").AddEdge("act", graph.END)
	return graph.Erase(g.Compile(graph.CompileOptions{Name: "short", Saver: deps.Saver, Store: deps.Store}))
}

// maxShortRunStatements bounds the statements of a stateless POST /runs/wait of the short graph
// on Postgres: 10 of its own (docs/benchmarks.md lists them), the sweeper's two deletes (shared
// with the runs that finished in the same interval; on a slow machine, or under -race, a sweep
// comes after every run) and the background's few (River's polls, lease renewals).
const maxShortRunStatements = 13

// maxShortRunTrips bounds the round trips of the same: 6 of the run's own (the run and its
// thread, the claim, three batches of checkpoints with the values event that follows them, the
// end with the status), the sweeper's one batch (up to one a run), the background's few.
const maxShortRunTrips = 8

// maxShortRunStatementsSQLite bounds the same on SQLite, counted as calls into SQLite: a run's
// own are 16: the run and its thread, two inserts; the claim; and its four checkpoints in two
// transactions (newThreadSaver holds them back): the input's, __start__'s and plan's together
// before act starts (begin, the head's insert, three checkpoints, two blobs, commit), act's at
// the end (begin, the head's move, the checkpoint, its blob, commit). Which puts a flush finds
// held depends on when the event reader asks for it, so on a loaded machine the first
// transaction can split, at most into one per checkpoint: four more statements (CI measured 2.8
// transactions a run where a quiet machine gives 2.1-2.5). The sweeper's nine a sweep come on
// top, up to one sweep a run (see docs/benchmarks.md). A quiet machine gives 17-19.
const maxShortRunStatementsSQLite = 16 + 4 + 9

// TestPostgresShortRunStatements counts the SQL statements a short stateless run sends to
// Postgres, over runs one after another (go test -v lists them, with their wall times).
func TestPostgresShortRunStatements(t *testing.T) {
	url := pgURL(t)
	c := newSQLCounter()
	// Not parallel: no other test opens a pool while the hook is set.
	pgPoolHook = func(pc *pgxpool.Config) { pc.ConnConfig.Tracer = c }
	b := setup(t, setupOpts{cfg: Config{DatabaseURL: url}, extra: []GraphSpec{{ID: "short", Build: buildPgShort}}})
	pgPoolHook = nil
	countShortRuns(t, b, c, maxShortRunStatements, maxShortRunTrips)
}

// TestSQLiteShortRunStatements counts the statements a short stateless run executes on SQLite.
func TestSQLiteShortRunStatements(t *testing.T) {
	c := newSQLCounter()
	// Not parallel: no other test opens a database while the driver is swapped.
	sqliteDriver = useCountingSQLite(c)
	b := setup(t, setupOpts{extra: []GraphSpec{{ID: "short", Build: buildPgShort}}})
	sqliteDriver = "sqlite"
	t.Cleanup(func() { useCountingSQLite(nil) })
	countShortRuns(t, b, c, maxShortRunStatementsSQLite, maxShortRunStatementsSQLite)
}

func newSQLCounter() *sqlCounter {
	return &sqlCounter{byText: map[string]int{}, wall: map[string]time.Duration{}}
}

// countShortRuns sends stateless runs of the short graph one after another, counting with c
// the statements of 50 of them, lists the statements and fails above max statements or
// maxTrips round trips a run.
func countShortRuns(t *testing.T, b *bundle, c *sqlCounter, max, maxTrips int) {
	t.Helper()
	run := func(i int) {
		var out pgShortState
		topic := fmt.Sprint("t", i)
		b.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": "short", "input": map[string]any{"topic": topic}}, &out, 200)
		if len(out.Steps) != 2 || out.Steps[0] != "plan:"+topic || out.Steps[1] != "act" {
			t.Fatalf("run %d: steps %q", i, out.Steps)
		}
	}
	for i := range 10 { // pools, prepared statements
		run(i)
	}
	const n = 50
	c.set(true)
	for i := range n {
		run(100 + i)
	}
	c.set(false)
	c.mu.Lock()
	defer c.mu.Unlock()
	per := float64(c.stmts) / n
	t.Logf("per run: %.2f statements, %.2f round trips", per, float64(c.trips)/n)
	texts := make([]string, 0, len(c.byText))
	for k := range c.byText {
		texts = append(texts, k)
	}
	sort.Slice(texts, func(i, j int) bool { return c.byText[texts[i]] > c.byText[texts[j]] })
	for _, k := range texts {
		v := c.byText[k]
		t.Logf("%5.2f  %8v  %s", float64(v)/n, (c.wall[k] / time.Duration(v)).Round(time.Microsecond), k)
	}
	if per > float64(max) {
		t.Errorf("a short run made %.2f statements, more than %d", per, max)
	}
	if trips := float64(c.trips) / n; trips > float64(maxTrips) {
		t.Errorf("a short run took %.2f round trips, more than %d", trips, maxTrips)
	}
}

// TestPostgresPoolCommits checks the pool's commit setting: off unless the URL sets it.
func TestPostgresPoolCommits(t *testing.T) {
	t.Parallel()
	url := pgURL(t)
	ctx := context.Background()
	for _, c := range []struct{ url, want string }{{url, "off"}, {url + "&synchronous_commit=on", "on"}} {
		pool, err := newPgPool(ctx, c.url)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		err = pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&got)
		pool.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: synchronous_commit is %s, want %s", c.url, got, c.want)
		}
	}
}
