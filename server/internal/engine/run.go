package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server/internal/metadb"
	"github.com/trellis-go/trellis/server/internal/stream"
)

// Run is a run's record as the engine reads it: its row, with the options the engine acts on
// decoded from the row's kwargs.
type Run struct {
	*metadb.Run
	Options
	// NewThread, when set, is the row of the run's thread, made for it: Submit inserts it with
	// the run.
	NewThread *metadb.Thread
}

// Options are the fields of a run's kwargs (the server's RunKwargs, stored as JSON on its row)
// that the engine acts on. The server's RunKwargs has the same JSON names.
type Options struct {
	// Temporary: the run's thread is a stateless run's, deleted when the run ends.
	Temporary bool `json:"temporary,omitempty"`
	// Resumable: the run's events are written to the database, for a reader that reconnects.
	Resumable bool `json:"resumable,omitempty"`
	// Webhook is the URL the finished run is sent to; the engine only reads whether it is set.
	Webhook string `json:"webhook,omitempty"`
	// StartAfter, when set, is when the run may start (Unix milliseconds).
	StartAfter int64 `json:"start_after,omitempty"`
	// Priority is low, normal or high; empty is normal.
	Priority string `json:"priority,omitempty"`
}

// RunOf reads a run's row.
func RunOf(row *metadb.Run) *Run {
	run := &Run{Run: row}
	_ = json.Unmarshal(row.Kwargs, &run.Options)
	if run.Priority == "" {
		run.Priority = PriorityNormal
	}
	return run
}

// Run and thread statuses, as the server's API names them.
const (
	Pending     = "pending"
	Running     = "running"
	Success     = "success"
	Failed      = "error"
	Interrupted = "interrupted"

	ThreadIdle        = "idle"
	ThreadBusy        = "busy"
	ThreadInterrupted = "interrupted"
	ThreadError       = "error"
)

// PriorityNormal is the priority of a run that names none.
const PriorityNormal = "normal"

// Why a run's context was cancelled. ErrInterrupt and ErrRollback are the actions of Runner.Cancel.
var (
	ErrInterrupt   = errors.New("server: run cancelled (interrupt)")
	ErrRollback    = errors.New("server: run cancelled (rollback)")
	errShutdown    = errors.New("server: run stopped by shutdown; it resumes from its last checkpoint at the next start")
	errLeaseLost   = errors.New("server: run's lease was taken by another worker (this one missed its heartbeats)")
	errLeaseHeld   = errors.New("server: another worker holds the run's lease")
	errTenantBusy  = errors.New("server: the run's tenant is at its concurrency limit in this process")
	errScheduled   = errors.New("server: the run is due later (after_seconds)")
	errThreadBusy  = errors.New("server: an earlier run of the thread is unfinished; runs of a thread execute one at a time, in order")
	errTenantLimit = errors.New("server: the run's tenant has its maximum of runs executing across the replicas")
)

// Errors of Runner.Submit.
var (
	// ErrClosing: the runner is shutting down and takes no new runs.
	ErrClosing = errors.New("server: the server is shutting down and takes no new runs")
	// ErrThreadBusy: the run's strategy is reject and its thread has unfinished runs.
	ErrThreadBusy = errors.New("server: the thread is already running a run")
)

// Retry is what a run's execution returns when the queue should deliver the run again after a
// while: another worker holds it, its tenant is at its limit, it is not due yet, or it failed
// with a transient error.
type Retry struct {
	After  time.Duration
	Reason error
}

func (e *Retry) Error() string {
	return fmt.Sprintf("server: run deferred for %s: %v", e.After, e.Reason)
}

// Unwrap returns the reason.
func (e *Retry) Unwrap() error { return e.Reason }

// Queue delivers the runs the engine enqueues to its exec function, in this process or any
// sharing the database; exec returns a *Retry to have a run delivered again.
type Queue interface {
	Start(exec func(ctx context.Context, runID string) error)
	// Enqueue delivers a run, before those of lower priority waiting.
	Enqueue(ctx context.Context, runID, priority string) error
	// Close stops delivering and waits for the runs executing, until ctx ends.
	Close(ctx context.Context) error
}

// Host is what the engine asks of the server: the graphs, the execution of a run's graph
// under its request, the deletion of threads, and the server's policy on errors.
type Host interface {
	// Graph returns the graph of an assistant of any tenant, or an error when there is none
	// (a created assistant deleted while its run waited).
	Graph(assistantID string) (graph.Runnable, error)
	// ThreadGraph returns the graph whose state a thread of that metadata holds, or nil.
	ThreadGraph(metadata map[string]any) graph.Runnable
	// Visible reports whether the principal of ctx may see the run: a multitask strategy
	// cancels only the runs on the thread that the new run's creator may see.
	Visible(ctx context.Context, run *Run) bool
	// Attempt begins the server's side of an attempt at a run (the attempt-th claim of it).
	Attempt(run *Run, attempt int) Attempt
	// DeleteThreads deletes threads with their checkpoints and runs.
	DeleteThreads(ctx context.Context, keys []metadb.ThreadKey) error
	// Retryable reports whether a run that failed with err is worth trying again.
	Retryable(err error) bool
	// ErrorEvent is the data of the "error" stream event of a run that failed with err.
	ErrorEvent(err error) any
}

// An Attempt is the server's side of one attempt at a run.
type Attempt interface {
	// Execute runs the run's graph from where the run starts (headBefore is the thread's
	// newest checkpoint before the attempt, "" for none), emitting its stream events, and
	// returns the graph's error.
	Execute(ctx context.Context, g graph.Runnable, headBefore string, emit func(event string, data any)) error
	// Finish ends the attempt's progress and returns it, as JSON, for the run's record.
	Finish() json.RawMessage
	// Report is told how the attempt ended, once its statuses are written.
	Report(Outcome)
	// Close is called last, when the attempt's run is left alone.
	Close()
	// StateContext returns ctx for reading the run's thread after Execute: the host may answer
	// such reads from what the run wrote.
	StateContext(ctx context.Context) context.Context
}

// HeldWrites is an Attempt that may hold its run's database writes back (a run's checkpoints,
// on Postgres) to send them with the run's next event, in one round trip: the engine then writes
// that event through it. The host sends what it holds before the graph goes on to work that
// follows it (the server: before it hands control back to the graph after any of its events,
// and when the graph returns), so an event that follows a checkpoint is never written without it.
type HeldWrites interface {
	// Holding reports whether writes are held.
	Holding() bool
	// WriteEventsWith sends the held writes and then does what metadb.DB.AppendEventsNotify
	// does with batches, channel and payloads, in one round trip and one transaction.
	WriteEventsWith(ctx context.Context, batches []metadb.EventBatch, channel string, payloads []string) error
	// FlushHeld sends the held writes on their own.
	FlushHeld(ctx context.Context)
}

// Outcome is how an attempt at a run ended.
type Outcome struct {
	// Status is the run's status: pending when it is to be tried again.
	Status      string
	Err         error
	Interrupted bool
	Started     time.Time
	// Values are the thread's newest values (nil when the thread is gone).
	Values json.RawMessage
}

// Metrics are the counters the engine keeps.
type Metrics struct {
	Created  prometheus.Counter
	Active   prometheus.Gauge
	Finished *prometheus.CounterVec // by status
	Seconds  prometheus.Histogram
	Events   prometheus.Counter
}

// Config holds the engine's settings.
type Config struct {
	// Heartbeat is how often leases are renewed and the reaper looks for runs whose worker
	// died; a lease lasts three of them.
	Heartbeat time.Duration
	// Timeout ends a run that executes longer, with TimeoutCause as its error; zero: none.
	Timeout      time.Duration
	TimeoutCause error
	// MaxRunsPerTenant bounds a tenant's runs executing at once (zero: no bound).
	MaxRunsPerTenant int
	// MaxAttempts bounds the claims of a run.
	MaxAttempts int
}

// Deps are what a Runner works with.
type Deps struct {
	DB  *metadb.DB
	Hub *stream.Hub
	Bus *stream.Bus // nil: this process is the only one
	Log *slog.Logger
	Metrics
	Host Host
	// Hidden holds the IDs of the threads of finished stateless runs waiting for the sweeper:
	// the server's API answers as if they were gone.
	Hidden *sync.Map
	Config
}

// Stopped reports whether a run's context ended because the run was cancelled (ErrInterrupt,
// ErrRollback), stopped by the shutdown or taken by another worker: the run did not fail.
func Stopped(cause error) bool {
	return cause != nil && (errors.Is(cause, ErrInterrupt) || errors.Is(cause, ErrRollback) || errors.Is(cause, errShutdown) || errors.Is(cause, errLeaseLost))
}
