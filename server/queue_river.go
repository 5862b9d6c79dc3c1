package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"github.com/trellis-go/trellis/server/internal/engine"
)

// riverQueueName is the River queue runs go through.
const riverQueueName = "trellis_runs"

// runJob is the River job of one run: only its ID, since the run's record holds the rest.
type runJob struct {
	RunID string `json:"run_id"`
}

// Kind implements river.JobArgs.
func (runJob) Kind() string { return "trellis_run" }

type runWorker struct {
	river.WorkerDefaults[runJob]
	q *RiverQueue
}

// Timeout disables River's job timeout: the server applies Config.RunTimeout itself, so that a
// run that times out is recorded as such.
func (w *runWorker) Timeout(*river.Job[runJob]) time.Duration { return -1 }

func (w *runWorker) Work(ctx context.Context, job *river.Job[runJob]) error {
	w.q.mu.Lock()
	exec := w.q.exec
	w.q.entered(job.ID)
	w.q.mu.Unlock()
	if exec == nil {
		return river.JobSnooze(time.Second)
	}
	// A slot of the process's limit, shared with the runs started directly (see Enqueue), given
	// to the waiting runs by priority.
	prio := priorityOfRiver(job.Priority)
	if _, err := w.q.slots.Acquire(ctx, prio.rank()); err != nil {
		return river.JobSnooze(0)
	}
	if w.q.higherAvailable(ctx, prio) {
		// A run of a higher priority was queued while this job waited for a slot, or while
		// River handed it to this worker: it goes first. This job is available again at once,
		// behind it.
		w.q.slots.Release()
		return river.JobSnooze(0)
	}
	err := exec(ctx, job.Args.RunID)
	w.q.slots.Release()
	var re *RetryError
	if errors.As(err, &re) {
		return river.JobSnooze(max(re.After, 0))
	}
	return nil
}

// RiverQueue is the durable [Queue]: a run that cannot start at once in this process is a
// River job in the server's database (SQLite through riversqlite, Postgres through
// riverpgxv5), so it survives the process that accepted it, and any process sharing the
// database may execute it. Runs execute at most MaxWorkers at once per process; waiting runs
// start by priority (a run's [Priority] is its job's River priority: high 1, normal 2, low 3).
// A job River fetched while every slot was taken yields its slot, when one frees, to a job of
// a higher priority queued meanwhile.
//
// A run enqueued while this process has a free slot starts at once, without a job: its record
// (pending, in trellis_runs) is what makes it durable. If the process dies before the run ends,
// the run is found like any other whose worker died: by the next start (Server recovers
// unfinished runs), or by another replica once its lease expires, or, if it was never claimed,
// as a stranded run. A direct run that asks to be delivered again (a transient error, a claim
// refused, a shutdown) becomes a River job then.
type RiverQueue struct {
	mu     sync.Mutex
	exec   func(ctx context.Context, runID string) error
	insert func(ctx context.Context, args runJob, at time.Time, prio Priority) error
	// higher reports whether a job of a priority higher than p is available, or fetched by
	// this process and not yet in Work.
	higher func(ctx context.Context, p Priority) (bool, error)
	// seen holds the jobs that reached Work, and when (q.mu): a job River fetched for this
	// process and not among them is on its way to a slot.
	seen map[int64]time.Time
	// slots bounds the runs executing in this process, River's and direct ones.
	slots   *engine.Workers
	direct  sync.WaitGroup
	dctx    context.Context
	dcancel context.CancelFunc
	start   func(ctx context.Context) error
	stop    func(ctx context.Context) error
	cancel  func(ctx context.Context) error
	closed  bool
}

// RiverOptions tunes a [RiverQueue]. A nil *RiverOptions and the zero value are the defaults.
type RiverOptions struct {
	// MaxWorkers bounds the runs executing at once in this process; zero means 64.
	MaxWorkers int
	// PollInterval is how often the queue looks for jobs it was not told of (snoozed ones, or
	// ones another process inserted without LISTEN/NOTIFY); zero means 200ms on SQLite and 1s
	// on Postgres. A job this process inserts is fetched at once either way.
	PollInterval time.Duration
	// Logger receives River's own logs; nil discards those below warnings.
	Logger *slog.Logger
}

func (o RiverOptions) config(workers *river.Workers, sqlite bool) *river.Config {
	if o.MaxWorkers <= 0 {
		o.MaxWorkers = DefaultMaxConcurrentRuns
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
		if sqlite {
			o.PollInterval = 200 * time.Millisecond
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &river.Config{
		Queues:            map[string]river.QueueConfig{riverQueueName: {MaxWorkers: o.MaxWorkers}},
		Workers:           workers,
		FetchCooldown:     5 * time.Millisecond, // a job this process inserts is fetched at once
		FetchPollInterval: o.PollInterval,
		JobTimeout:        -1,
		Logger:            o.Logger,
		MaxAttempts:       25,
	}
}

// NewRiverSQLite returns a River queue in the SQLite database db, migrating River's tables.
func NewRiverSQLite(ctx context.Context, db *sql.DB, opts *RiverOptions) (*RiverQueue, error) {
	o := optionsOrZero(opts)
	driver := riversqlite.New(db)
	mig, err := rivermigrate.New(driver, nil)
	if err != nil {
		return nil, fmt.Errorf("server: river migrations: %w", err)
	}
	if _, err := mig.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("server: river migrations on SQLite: %w", err)
	}
	q := newRiverQueue(o)
	workers := river.NewWorkers()
	river.AddWorker(workers, &runWorker{q: q})
	client, err := river.NewClient(driver, o.config(workers, true))
	if err != nil {
		return nil, fmt.Errorf("server: river client: %w", err)
	}
	bindRiver(q, client)
	return q, nil
}

// NewRiverPostgres returns a River queue in the Postgres database of pool, migrating River's
// tables (in the pool's search_path).
func NewRiverPostgres(ctx context.Context, pool *pgxpool.Pool, opts *RiverOptions) (*RiverQueue, error) {
	o := optionsOrZero(opts)
	driver := riverpgxv5.New(pool)
	mig, err := rivermigrate.New(driver, nil)
	if err != nil {
		return nil, fmt.Errorf("server: river migrations: %w", err)
	}
	// Replicas starting together migrate one at a time.
	if err := pgAdvisory(ctx, pool, 7265002, func() error {
		_, err := mig.Migrate(ctx, rivermigrate.DirectionUp, nil)
		return err
	}); err != nil {
		return nil, fmt.Errorf("server: river migrations on Postgres: %w", err)
	}
	q := newRiverQueue(o)
	workers := river.NewWorkers()
	river.AddWorker(workers, &runWorker{q: q})
	client, err := river.NewClient(driver, o.config(workers, false))
	if err != nil {
		return nil, fmt.Errorf("server: river client: %w", err)
	}
	bindRiver(q, client)
	return q, nil
}

// pgAdvisory runs f holding a session advisory lock (River's migrations need several
// transactions, so a transaction lock would not do).
func pgAdvisory(ctx context.Context, pool *pgxpool.Pool, key int64, f func() error) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key)
	return f()
}

// optionsOrZero returns *opts, or the zero options for nil.
func optionsOrZero(opts *RiverOptions) RiverOptions {
	if opts == nil {
		return RiverOptions{}
	}
	return *opts
}

func newRiverQueue(opts RiverOptions) *RiverQueue {
	n := opts.MaxWorkers
	if n <= 0 {
		n = DefaultMaxConcurrentRuns
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &RiverQueue{slots: engine.NewWorkers(n, priorityLevels), seen: map[int64]time.Time{}, dctx: ctx, dcancel: cancel}
}

// bind connects the queue to its River client.
func bindRiver[TTx any](q *RiverQueue, client *river.Client[TTx]) {
	q.start, q.stop, q.cancel = client.Start, client.Stop, client.StopAndCancel
	q.insert = func(ctx context.Context, a runJob, at time.Time, p Priority) error {
		_, err := client.Insert(ctx, a, &river.InsertOpts{Queue: riverQueueName, ScheduledAt: at, Priority: p.riverPriority()})
		return err
	}
	q.higher = func(ctx context.Context, p Priority) (bool, error) {
		if p.riverPriority() <= 1 {
			return false, nil
		}
		var prios []int16
		for n := 1; n < p.riverPriority(); n++ {
			prios = append(prios, int16(n))
		}
		// Between River's fetch (the job is running) and its Work waiting for a slot there is a
		// moment when the job is neither available nor waiting: such a job of this process
		// counts as waiting, or the run of a lower priority would take the slot meant for it.
		res, err := client.JobList(ctx, river.NewJobListParams().Queues(riverQueueName).
			States(rivertype.JobStateAvailable, rivertype.JobStateRunning).Priorities(prios...).First(100))
		if err != nil {
			return false, err
		}
		me := client.ID()
		q.mu.Lock()
		defer q.mu.Unlock()
		for _, j := range res.Jobs {
			if j.State == rivertype.JobStateAvailable {
				return true, nil
			}
			if n := len(j.AttemptedBy); n > 0 && j.AttemptedBy[n-1] == me && q.seen[j.ID].IsZero() {
				return true, nil
			}
		}
		return false, nil
	}
}

// entered records that the job reached Work; q.mu is held. Records older than a minute go once
// there are many: by then their jobs have long been marked done or available again.
func (q *RiverQueue) entered(id int64) {
	now := time.Now()
	if len(q.seen) >= 4096 {
		for k, at := range q.seen {
			if now.Sub(at) > time.Minute {
				delete(q.seen, k)
			}
		}
	}
	q.seen[id] = now
}

// higherAvailable reports whether a job of a priority higher than p waits to be fetched; an
// error (the database unreachable) says no.
func (q *RiverQueue) higherAvailable(ctx context.Context, p Priority) bool {
	ok, err := q.higher(ctx, p)
	return err == nil && ok
}

// Start implements [Queue]. It starts River's client; a failure to start is logged by the
// server through the first Enqueue's error.
func (q *RiverQueue) Start(exec func(ctx context.Context, runID string) error) {
	q.mu.Lock()
	q.exec = exec
	q.mu.Unlock()
}

// run starts the River client; the server calls it once after Start.
func (q *RiverQueue) run(ctx context.Context) error {
	if err := q.start(ctx); err != nil {
		return fmt.Errorf("server: start river: %w", err)
	}
	return nil
}

// Enqueue implements [Queue]: the run, of normal priority, starts at once when this process
// has a free slot, and is inserted as a River job otherwise.
func (q *RiverQueue) Enqueue(ctx context.Context, runID string) error {
	return q.EnqueuePriority(ctx, runID, PriorityNormal)
}

// EnqueuePriority implements [PriorityQueue]: as Enqueue, the job having the run's priority.
func (q *RiverQueue) EnqueuePriority(ctx context.Context, runID string, p Priority) error {
	q.mu.Lock()
	closed, exec := q.closed, q.exec
	if !closed && exec != nil && q.slots.TryAcquire() {
		q.direct.Add(1)
		q.mu.Unlock()
		go q.runDirect(exec, runID, p)
		return nil
	}
	q.mu.Unlock()
	if closed {
		return ErrShuttingDown
	}
	if err := q.insert(ctx, runJob{RunID: runID}, time.Time{}, p); err != nil {
		return fmt.Errorf("server: enqueue run %s: %w", runID, err)
	}
	return nil
}

// runDirect executes a run in a slot taken by Enqueue; a run to be delivered again becomes a
// River job, due when the run asked.
func (q *RiverQueue) runDirect(exec func(context.Context, string) error, runID string, p Priority) {
	defer q.direct.Done()
	err := exec(q.dctx, runID)
	q.slots.Release()
	var re *RetryError
	if !errors.As(err, &re) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// If this fails the run stays pending in its record, where the next start or another
	// replica finds it.
	_ = q.insert(ctx, runJob{RunID: runID}, time.Now().Add(max(re.After, 0)), p)
}

// Close implements [Queue]: River stops fetching jobs and waits for the executing ones until
// ctx ends; then their contexts are cancelled (the runs stop at a checkpoint and stay pending).
func (q *RiverQueue) Close(ctx context.Context) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	q.mu.Unlock()
	directDone := make(chan struct{})
	go func() { q.direct.Wait(); close(directDone) }()
	err := q.stop(ctx)
	if err != nil && ctx.Err() != nil {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = errors.Join(ctx.Err(), q.cancel(c))
	}
	select {
	case <-directDone:
	case <-ctx.Done():
		q.dcancel()
		<-directDone
		if err == nil {
			err = ctx.Err()
		}
	}
	q.dcancel()
	return err
}
