package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/encrypt"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/store"
)

// Deps is what the server hands a graph builder: the checkpoint saver and the store it opened
// on the configured database. A graph compiled with Deps.Saver has threads, interrupts and
// history that survive a restart.
type Deps struct {
	Saver checkpoint.Saver
	// Store is the tenant's store: every call acts under the hidden tenant label the /store
	// routes use, the tenant being the run's (inside a graph or a tool) or the principal's (in a
	// request the server authenticated, such as an app's route behind Guard). What a graph
	// writes is what GET /store/items shows its tenant, and no other tenant sees it. Used with
	// neither, a call fails with ErrNoTenant.
	Store store.Store
	// SharedStore is the same store without a tenant: what no tenant owns (reference data an
	// app loads at Build) and is invisible to the /store routes. Take one tenant's view of it
	// with TenantStore.
	SharedStore store.Store
	// DataDir (SQLite) or DatabaseURL (Postgres) says where the server keeps its data, for
	// graphs that keep data of their own beside it (an application's tables).
	DataDir     string
	DatabaseURL string
}

// GraphSpec registers one graph. The server builds it once at start with its Deps and offers it
// as an assistant whose assistant_id is derived from ID (see [AssistantID]) and whose graph_id
// is ID.
type GraphSpec struct {
	// ID names the graph in the API (graph_id). Required: letters, digits, '-', '_' and '.'.
	ID string
	// Description is shown on the default assistant.
	Description string
	// Build compiles the graph and returns its Runnable view (graph.Erase(g.Compile(opts))). It
	// must pass deps.Saver as the graph's CompileOptions.Saver (and deps.Store as its Store, if
	// it uses one).
	Build func(deps Deps) (graph.Runnable, error)
	// Routes, when set, adds the graph's own HTTP routes (an application's WebSocket, say) to the
	// server's mux, once Build has run. authenticate checks a bearer token or API key as the API
	// does; in dev mode it accepts any token as the dev principal.
	Routes func(mux *http.ServeMux, authenticate func(ctx context.Context, token string) (Principal, error))
}

// Config configures a [Server]. The zero value of every field is a documented default; only
// Graphs is required.
type Config struct {
	// Graphs are the graphs offered as assistants. Graphs and Apps together must offer at least
	// one.
	Graphs []GraphSpec
	// Apps are the applications the server runs (see [App]): their graphs are offered as
	// assistants beside Graphs, their routes served under /apps/<name>/.
	Apps []App
	// Models are the models by role that applications get (AppDeps.Models). Nil means the
	// offline model for every role.
	Models *model.Roles
	// UI, when set, serves the web UI at / and under /ui/.
	UI http.Handler
	// StoreIndex turns on the store's semantic search (the /store routes' query, and the store
	// graphs and apps get). Nil means the local embedder of package embed (hashed n-grams, no
	// network); `trellis serve` passes the one TRELLIS_EMBED_URL names.
	StoreIndex *store.IndexConfig
	// DataDir holds the SQLite database (trellis.db) when DatabaseURL is empty. Empty means
	// ".trellis" in the working directory. It is created if missing.
	DataDir string
	// DatabaseURL, when set, is a Postgres connection string (postgres://...); the server's
	// tables, the checkpoints and the store then live there.
	DatabaseURL string
	// AppSettings holds each application's own settings, by app name (see [AppSettings]).
	AppSettings map[string]AppSettings
	// RedisURL, when set (redis://host:6379/0), carries stream events and cancellations between
	// replicas sharing the Postgres database; without it they travel by Postgres LISTEN/NOTIFY.
	// It is not needed on SQLite, where there is one process.
	RedisURL string
	// Auth chooses how requests are authenticated. The zero value refuses to start unless Dev is
	// set: a server without auth must be asked for explicitly.
	Auth AuthConfig
	// Dev turns authentication off: every request acts as user "dev" of tenant "default" with
	// every permission. [Server.Serve] then refuses a listener that is not on a loopback address.
	Dev bool
	// MaxBodyBytes caps a request body; a larger one is answered 413. Zero means 10 MiB.
	MaxBodyBytes int64
	// MaxConcurrentRuns bounds how many runs execute at once in this process; zero means 64.
	// Runs beyond it wait in the queue with status pending.
	MaxConcurrentRuns int
	// WebSocketOrigins lists the Origin host patterns (path.Match syntax, e.g. "*.example.com")
	// allowed to open a WebSocket besides the server's own host. Empty allows only same-host.
	WebSocketOrigins []string
	// Authorize, when set, is called for every authenticated API request with its principal,
	// resource and action; it may refuse the request, or return filters the records it reaches
	// must match and metadata stamped on what it creates (see [Authorizer]).
	Authorize Authorizer
	// CORS lets pages of other origins call the API from a browser; nil sends no CORS headers.
	CORS *CORSConfig
	// DisableMCP turns the MCP endpoint (/mcp, every assistant as a tool) off.
	DisableMCP bool
	// DisableA2A turns the A2A endpoint (/a2a/{assistant_id}, agent cards) off.
	DisableA2A bool
	// WebSocketBuffer is how many events a WebSocket client may fall behind before it is
	// disconnected; zero means 1024.
	WebSocketBuffer int
	// EventRetention is how long a finished run's event log stays joinable (with
	// Last-Event-ID) in memory; zero means 10 minutes. Resumable runs also keep it in the
	// database.
	EventRetention time.Duration
	// EventLogBytes bounds the bytes the event logs in memory hold across runs, so that runs
	// with large inputs or outputs cannot hold the process's memory for the retention: past it,
	// the logs of the runs that finished first are dropped before their retention ends (a
	// resumable run's events are then read from the database). Running runs' logs count but
	// are never dropped. Zero means 64 MiB; negative means no bound.
	EventLogBytes int64
	// ShutdownGrace is how long Serve waits, once its context ends, for running runs to reach
	// their next checkpoint and stop; zero means 30 seconds.
	ShutdownGrace time.Duration
	// ReadTimeout bounds reading a request's body; zero means 60 seconds. A client that sends its
	// body a byte at a time is cut off, so it cannot hold a connection forever. (Headers must
	// arrive within 10 seconds.)
	ReadTimeout time.Duration
	// IdleTimeout is how long a keep-alive connection may wait for its next request; zero means
	// 120 seconds.
	IdleTimeout time.Duration
	// StreamWriteTimeout bounds each write to an SSE or WebSocket stream; zero means 30 seconds. A client that
	// stops reading without closing is dropped once its socket's buffers are full, freeing its
	// goroutines and its place among the tenant's streams.
	StreamWriteTimeout time.Duration
	// WebhookTimeout bounds one webhook POST; zero means 10 seconds.
	WebhookTimeout time.Duration
	// WebhookAllowPrivate lets webhooks reach loopback, private and link-local addresses. Off,
	// a webhook to such an address (by IP or by a name that resolves to one, cloud metadata at
	// 169.254.169.254 included) is not sent, and the refusal is logged.
	WebhookAllowPrivate bool
	// Encryption, when set, seals what the checkpoints hold of the graphs' state (channel
	// values, pending writes, Send arguments, the steps' recorded writes) with these keys
	// (checkpoint.Encrypt); the newest seals and every one opens, so keys rotate by putting a
	// new one first. trellis serve reads it from TRELLIS_ENCRYPTION_KEYS.
	Encryption *encrypt.Keyring
	// EncryptStore also seals the long-term store's values (store.Encrypt). An encrypted store
	// indexes nothing, so a search with a query is refused: leave it off for apps that search
	// their memories by meaning.
	EncryptStore bool
	// Now is the clock of the records' creation and update stamps (threads, runs, assistants).
	// Nil means time.Now; tests set one to get stamps they can predict.
	Now func() time.Time
	// MetricsToken, when set, is required as a bearer token by GET /metrics.
	MetricsToken string
	// Logger receives JSON-ready structured logs; nil means slog.Default().
	Logger *slog.Logger
	// Queue executes runs; nil means a River queue in the server's database (see [Queue]).
	// Set it to NewLocalQueue(n) to keep runs in memory.
	Queue Queue
	// MaxRunsPerTenant bounds the runs of one tenant executing at once, across every server sharing
	// the database, so that no tenant starves the others; its further runs wait (pending). Zero
	// means no bound beyond MaxConcurrentRuns.
	MaxRunsPerTenant int
	// RunTimeout ends a run that executes longer, with status error. Zero means no timeout.
	RunTimeout time.Duration
	// Heartbeat is how often a worker renews its run's lease; a run whose lease is three
	// heartbeats old lost its worker and is resumed by any process. Zero means 5 seconds.
	Heartbeat time.Duration
	// RateLimit is the requests per second one tenant may make (a token bucket per tenant);
	// more are answered 429 with Retry-After. Zero means no limit. With RedisURL set, the
	// replicas share each tenant's bucket in Redis; otherwise, and while Redis cannot be
	// reached, each process keeps its own.
	RateLimit float64
	// RateBurst is the bucket's size: requests a tenant may make at once. Zero means twice
	// RateLimit (at least 1).
	RateBurst int
	// MaxStreamsPerTenant bounds the SSE streams and WebSockets one tenant holds open; one more
	// is answered 429. Zero means no limit. With RedisURL set, the count is shared by the
	// replicas (a stream whose process died stops counting within 30 seconds); otherwise it is
	// per process.
	MaxStreamsPerTenant int
	// ThreadTTLSweep is how often each process looks for threads past their ttl (a thread
	// created or patched with one). Zero means a minute.
	ThreadTTLSweep time.Duration
	// MaxRunAttempts bounds how many times a run is started: after a worker died, or after a
	// transient error (see [ErrTransient]). Zero means 5.
	MaxRunAttempts int
	// MaxRunSteps is the step budget of a run: the supersteps it may take (its recursion limit,
	// lowered by the run's config.recursion_limit). A run's config.max_steps may lower it, never
	// raise it. A run that uses it up fails with a *[BudgetError]. Zero means no budget (the
	// graphs' own recursion limits).
	MaxRunSteps int
	// MaxRunTokens is the token budget of a run (input plus output, as model usage reports it,
	// for models wrapped by package telemetry). A run's config.max_tokens may lower it, never
	// raise it. Zero means no budget.
	MaxRunTokens int
	// Tracing configures OpenTelemetry traces (see [TracingConfig]); the zero value follows the
	// standard OTEL_EXPORTER_OTLP_* variables.
	Tracing TracingConfig
}

// Defaults of [Config].
const (
	DefaultDataDir           = ".trellis"
	DefaultMaxBodyBytes      = 10 << 20
	DefaultMaxConcurrentRuns = 64
	DefaultWebSocketBuffer   = 1024
	DefaultEventRetention    = 10 * time.Minute
	DefaultEventLogBytes     = 64 << 20
	DefaultShutdownGrace     = 30 * time.Second
	DefaultWebhookTimeout    = 10 * time.Second
	DefaultHeartbeat         = 5 * time.Second
	DefaultMaxRunAttempts    = 5
)

// ConfigError is a setting the server cannot use, with what to do about it.
type ConfigError struct {
	Field   string
	Problem string
	Hint    string
}

func (e *ConfigError) Error() string {
	s := fmt.Sprintf("server: Config.%s %s", e.Field, e.Problem)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// ErrConfig matches every *ConfigError.
var ErrConfig = errors.New("server: invalid configuration")

// Is makes errors.Is(err, ErrConfig) true for a *ConfigError.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

var graphIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func (c Config) withDefaults() (Config, error) {
	if len(c.Graphs) == 0 && len(c.Apps) == 0 {
		return c, &ConfigError{Field: "Graphs", Problem: "is empty, and so is Apps", Hint: "register at least one graph or application, e.g. the example from examples/react"}
	}
	if c.CORS != nil {
		if err := c.CORS.check(); err != nil {
			return c, err
		}
	}
	seen := map[string]bool{}
	for i, g := range c.Graphs {
		if !graphIDPattern.MatchString(g.ID) {
			return c, &ConfigError{Field: fmt.Sprintf("Graphs[%d].ID", i), Problem: fmt.Sprintf("is %q", g.ID), Hint: "use 1-128 letters, digits, '.', '-' or '_'"}
		}
		if seen[g.ID] {
			return c, &ConfigError{Field: fmt.Sprintf("Graphs[%d].ID", i), Problem: fmt.Sprintf("repeats %q", g.ID), Hint: "give each graph its own ID"}
		}
		seen[g.ID] = true
		if g.Build == nil {
			return c, &ConfigError{Field: fmt.Sprintf("Graphs[%d].Build", i), Problem: "is nil", Hint: "set a function that compiles the graph with the given Deps"}
		}
	}
	if c.DataDir == "" {
		c.DataDir = DefaultDataDir
	}
	if c.MaxBodyBytes < 0 {
		return c, &ConfigError{Field: "MaxBodyBytes", Problem: "is negative", Hint: "use 0 for the 10 MiB default"}
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxConcurrentRuns < 0 {
		return c, &ConfigError{Field: "MaxConcurrentRuns", Problem: "is negative", Hint: "use 0 for the default of 64"}
	}
	if c.MaxConcurrentRuns == 0 {
		c.MaxConcurrentRuns = DefaultMaxConcurrentRuns
	}
	if c.WebSocketBuffer <= 0 {
		c.WebSocketBuffer = DefaultWebSocketBuffer
	}
	if c.EventRetention <= 0 {
		c.EventRetention = DefaultEventRetention
	}
	if c.EventLogBytes == 0 {
		c.EventLogBytes = DefaultEventLogBytes
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = 60 * time.Second
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 120 * time.Second
	}
	if c.StreamWriteTimeout <= 0 {
		c.StreamWriteTimeout = 30 * time.Second
	}
	if c.ShutdownGrace <= 0 {
		c.ShutdownGrace = DefaultShutdownGrace
	}
	if c.WebhookTimeout <= 0 {
		c.WebhookTimeout = DefaultWebhookTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MaxRunsPerTenant < 0 || c.RunTimeout < 0 || c.Heartbeat < 0 || c.MaxRunAttempts < 0 ||
		c.RateLimit < 0 || math.IsNaN(c.RateLimit) || c.RateBurst < 0 || c.MaxStreamsPerTenant < 0 ||
		c.MaxRunSteps < 0 || c.MaxRunTokens < 0 || c.ThreadTTLSweep < 0 {
		return c, &ConfigError{Field: "MaxRunsPerTenant/RunTimeout/Heartbeat/MaxRunAttempts/RateLimit/RateBurst/MaxStreamsPerTenant/MaxRunSteps/MaxRunTokens/ThreadTTLSweep", Problem: "has a negative value", Hint: "use 0 for the defaults"}
	}
	if c.ThreadTTLSweep == 0 {
		c.ThreadTTLSweep = time.Minute
	}
	if c.RedisURL != "" {
		if c.DatabaseURL == "" {
			return c, &ConfigError{Field: "RedisURL", Problem: "is set but DatabaseURL is empty", Hint: "replicas share a Postgres database; on SQLite there is one process and no need for Redis"}
		}
		if _, err := redis.ParseURL(c.RedisURL); err != nil {
			return c, &ConfigError{Field: "RedisURL", Problem: fmt.Sprintf("cannot be parsed: %v", err), Hint: "use redis://host:6379/0"}
		}
	}
	if c.Heartbeat == 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	if c.MaxRunAttempts == 0 {
		c.MaxRunAttempts = DefaultMaxRunAttempts
	}
	if !c.Dev {
		if err := c.Auth.check(); err != nil {
			return c, err
		}
	}
	return c, nil
}

// dbPath returns the SQLite file, creating the data directory.
func (c Config) dbPath() (string, error) {
	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		return "", &ConfigError{Field: "DataDir", Problem: fmt.Sprintf("cannot be created: %v", err), Hint: "choose a writable directory with --data-dir or TRELLIS_DATA_DIR"}
	}
	return filepath.Join(c.DataDir, "trellis.db"), nil
}

// Queue executes runs. The server calls Enqueue when a run is created (and, at start, for runs
// left pending by a previous process); the queue calls exec, at most once per Enqueue at a time,
// from any goroutine, honouring its own concurrency bound. Enqueue must not block on the run.
// When exec returns a [*RetryError] the queue delivers the run again after RetryError.After;
// any other return ends the delivery. Close stops taking runs and waits (until ctx ends) for
// those executing to return, then cancels their context.
//
// Two queues exist: [RiverQueue], durable, in the database (the default), and [LocalQueue], in
// memory.
type Queue interface {
	Start(exec func(ctx context.Context, runID string) error)
	Enqueue(ctx context.Context, runID string) error
	Close(ctx context.Context) error
}

// RetryError asks a [Queue] to deliver a run again after a delay: its worker is busy elsewhere
// (another process holds the run's lease), its tenant is at its concurrency limit, or it failed
// with a transient error.
type RetryError struct {
	After  time.Duration
	Reason error
}

func (e *RetryError) Error() string {
	return fmt.Sprintf("server: run deferred for %s: %v", e.After, e.Reason)
}

// Unwrap returns the reason.
func (e *RetryError) Unwrap() error { return e.Reason }
