package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/checkpoint/pgsaver"
	"github.com/trellis-go/trellis/checkpoint/sqlitesaver"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/internal/sqlitewal"
	"github.com/trellis-go/trellis/server/internal/limits"
	"github.com/trellis-go/trellis/server/internal/metadb"
	"github.com/trellis-go/trellis/server/internal/periodic"
	"github.com/trellis-go/trellis/server/internal/stream"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/pgstore"
	"github.com/trellis-go/trellis/store/sqlitestore"
)

// Assistant is a graph offered through the API, with its configuration.
type Assistant struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Version     int            `json:"version"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
	graph       graph.Runnable
}

// AssistantID returns the assistant_id of the default assistant of the graph with this ID: a
// name-based (version 5) UUID, so it is the same on every server and every restart.
func AssistantID(graphID string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte(graphID)).String()
}

// Server is the Agent Protocol server. Create it with [New], serve it with [Server.Serve] (or
// mount [Server.Handler]), and [Server.Close] it.
type Server struct {
	cfg        Config
	log        *slog.Logger
	meta       *metaStore
	saver      checkpoint.Saver // the saver opened on the server's database: Deps.Saver
	store      store.Store
	assistants []*Assistant
	byID       map[string]*Assistant
	hub        *stream.Hub
	bus        *stream.Bus // nil on SQLite: a single process
	runs       *runner
	metrics    *metrics
	limits     *tenantLimits
	obs        *observability // traces and token accounting (telemetry.go)
	handler    http.Handler
	closers    []func()
	apps       []builtApp
	closeOnce  sync.Once
	started    time.Time
	crons      cronState  // crons.go
	mcpSchemas mcpSchemas // mcp.go
	feed       threadFeed // threadstream.go: what open thread streams hear of
}

// New opens the database (SQLite in Config.DataDir, or Postgres at Config.DatabaseURL), runs
// the migrations, builds the graphs and returns a server ready to serve.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	cfg.Auth.prepare()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := &Server{cfg: cfg, log: cfg.Logger, hub: stream.NewHub(cfg.EventRetention, cfg.EventLogBytes), byID: map[string]*Assistant{}, started: time.Now()}
	var deps Deps
	var pgPool *pgxpool.Pool
	if cfg.DatabaseURL != "" {
		pool, err := newPgPool(ctx, cfg.DatabaseURL)
		if err != nil {
			return nil, &ConfigError{Field: "DatabaseURL", Problem: fmt.Sprintf("cannot be used: %v", err), Hint: "pass a URL such as postgres://user@host:5432/db"}
		}
		s.closers = append(s.closers, pool.Close)
		pgPool = pool
		if err := pool.Ping(ctx); err != nil {
			s.Close()
			return nil, fmt.Errorf("server: cannot reach Postgres: %w (is TRELLIS_DATABASE_URL right and the database up?)", err)
		}
		saver, err := pgsaver.New(ctx, pool, nil)
		if err != nil {
			s.Close()
			return nil, err
		}
		st, err := pgstore.New(ctx, pool, &pgstore.Options{Config: store.Config{Index: cfg.storeIndex(), Logger: cfg.Logger}})
		if err != nil {
			s.Close()
			return nil, err
		}
		s.closers = append(s.closers, func() { st.Close() })
		deps = Deps{Saver: saver, Store: st, DatabaseURL: cfg.DatabaseURL}
		db := stdlib.OpenDBFromPool(pool)
		s.closers = append(s.closers, func() { db.Close() })
		s.meta = &metaStore{DB: metadb.New(db, true, cfg.Now)}
	} else {
		path, err := cfg.dbPath()
		if err != nil {
			return nil, err
		}
		db, err := sql.Open(sqliteDriver, sqlitestore.DSN(path)+"&"+sqlitewal.WriterPragma)
		if err != nil {
			return nil, fmt.Errorf("server: open %s: %w", path, err)
		}
		// One connection: SQLite takes one writer at a time, and waiting for the pool is fair
		// and cheap where waiting on the database's lock is neither (busy_timeout polls, and
		// fails with "database is locked" under a thousand concurrent runs).
		db.SetMaxOpenConns(1)
		// The log is copied back into the database from a connection of its own, so that no
		// run's commit stops for it (internal/sqlitewal). Closed after the database, the
		// checkpointer's connection is the last and leaves no log behind.
		wal, err := sqlitewal.Open("sqlite", sqlitestore.DSN(path))
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("server: %s: %w", path, err)
		}
		stopWAL := periodic.Every(walCheckpointEvery, func(ctx context.Context) {
			if _, err := wal.Checkpoint(ctx); err != nil && ctx.Err() == nil {
				cfg.Logger.Warn("server: checkpointing the SQLite log failed; trying again at the next interval", "err", err)
			}
		})
		s.closers = append(s.closers, func() { wal.Close() }, func() { db.Close() }, stopWAL)
		saver, err := sqlitesaver.New(ctx, db, nil)
		if err != nil {
			s.Close()
			return nil, err
		}
		st, err := sqlitestore.New(ctx, db, &sqlitestore.Options{Config: store.Config{Index: cfg.storeIndex(), Logger: cfg.Logger}})
		if err != nil {
			s.Close()
			return nil, err
		}
		s.closers = append(s.closers, func() { st.Close() })
		deps = Deps{Saver: saver, Store: st, DataDir: cfg.DataDir}
		s.meta = &metaStore{DB: metadb.New(db, false, cfg.Now)}
	}
	if cfg.Encryption != nil {
		deps.Saver = checkpoint.Encrypt(deps.Saver, cfg.Encryption)
		if cfg.EncryptStore {
			deps.Store = store.Encrypt(deps.Store, cfg.Encryption)
		}
	} else if cfg.EncryptStore {
		s.Close()
		return nil, &ConfigError{Field: "EncryptStore", Problem: "is set without Encryption keys", Hint: "set TRELLIS_ENCRYPTION_KEYS (comma-separated id:base64 keys, the newest first)"}
	}
	deps.Saver = wrapSaver(deps.Saver)
	s.saver, s.store = deps.Saver, deps.Store
	// Graphs, tools and apps get the tenant's view (tenantstore.go); the /store routes add the
	// tenant themselves.
	deps.SharedStore, deps.Store = deps.Store, scopedStore{st: deps.Store}
	if err := s.meta.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	now := time.Now().UTC()
	for _, spec := range cfg.Graphs {
		g, err := spec.Build(deps)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("server: graph %q: %w", spec.ID, err)
		}
		if err := s.addAssistant(spec, g, now); err != nil {
			s.Close()
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	if err := s.buildApps(deps, now); err != nil {
		s.Close()
		return nil, err
	}
	sort.Slice(s.assistants, func(i, j int) bool { return s.assistants[i].GraphID < s.assistants[j].GraphID })
	// Building the graphs may take a while (an application loading its data on first start): the
	// setup that follows gets time of its own.
	ctx, cancelSetup := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelSetup()
	s.metrics = newMetrics()
	s.limits = newLimits(cfg)
	if cfg.RedisURL != "" && (cfg.RateLimit > 0 || cfg.MaxStreamsPerTenant > 0) {
		client, err := dialRedis(ctx, cfg.RedisURL, "the tenants' limits")
		if err != nil {
			s.Close()
			return nil, err
		}
		shared := limits.NewShared(client, s.log)
		s.limits.Share(shared)
		s.closers = append(s.closers, shared.Close)
	}
	if s.obs, err = newObservability(cfg, s.metrics.reg); err != nil {
		s.Close()
		return nil, err
	}
	s.closers = append(s.closers, s.obs.close)
	switch {
	case cfg.RedisURL != "":
		s.bus, err = newRedisBus(ctx, cfg.RedisURL, s.log)
	case pgPool != nil:
		s.bus, err = stream.NewPgBus(ctx, pgPool, s.log)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	q := cfg.Queue
	var rq *RiverQueue
	if q == nil {
		ropts := &RiverOptions{MaxWorkers: cfg.MaxConcurrentRuns, Logger: riverLogger(cfg.Logger)}
		if pgPool != nil {
			rq, err = NewRiverPostgres(ctx, pgPool, ropts)
		} else {
			rq, err = NewRiverSQLite(ctx, s.meta.SQL(), ropts)
		}
		if err != nil {
			s.Close()
			return nil, err
		}
		q = rq
	}
	s.runs = newRunner(runnerDeps{meta: s.meta, saver: s.saver, hub: s.hub, bus: s.bus, log: s.log, metrics: s.metrics, store: s.store,
		cfg: runnerConfigOf(cfg), assistants: s, feed: &s.feed, ended: s.a2aNotify, observer: runTelemetry{obs: s.obs, limits: runnerConfigOf(cfg).Budget, assistants: s}}, q)
	if s.bus != nil {
		s.bus.Handle(stream.Handlers{Cancel: s.runs.RemoteCancel, Done: s.runs.Release})
	}
	s.handler = s.traceRequests(s.routes())
	if cfg.CORS != nil {
		s.handler = cfg.CORS.wrap(s.handler)
	}
	if rq != nil {
		if err := rq.run(context.Background()); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := s.runs.Recover(ctx); err != nil {
		s.Close()
		return nil, err
	}
	s.runs.Reap()
	s.closers = append(s.closers, s.startTTLSweeper())
	s.closers = append(s.closers, s.startCronScheduler())
	return s, nil
}

// newPgPool opens the Postgres pool. pgx's default of max(4, cores) connections, one of them
// held by LISTEN, makes runs wait for a connection at a few dozen runs a second: unless the URL
// sets pool_max_conns, the pool has 16 (or 4 a core, if more).
func newPgPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(url, "pool_max_conns") {
		pc.MaxConns = int32(max(16, 4*runtime.NumCPU()))
	}
	// The server's records, checkpoints and queue commit without waiting for the disk, unless the
	// URL says otherwise (synchronous_commit=on): what a commit wrote is visible at once and
	// survives the trellis process dying (kill -9), as the server's SQLite database does with
	// synchronous=NORMAL; only a crash of Postgres itself or of its machine may lose the last
	// fraction of a second. A commit that waited for the disk cost a run about one flush per
	// statement (nine a short run).
	if _, set := pc.ConnConfig.RuntimeParams["synchronous_commit"]; !set {
		pc.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	}
	if pgPoolHook != nil {
		pgPoolHook(pc)
	}
	return pgxpool.NewWithConfig(ctx, pc)
}

// sqliteDriver is the database/sql driver the server opens SQLite with: tests put one of their
// own around it, to count statements.
var sqliteDriver = "sqlite"

// walCheckpointEvery is how often the SQLite database's log is copied back into it: at a few
// hundred runs a second, a few hundred pages at a time.
const walCheckpointEvery = 100 * time.Millisecond

// pgPoolHook, when set (by tests only), sees the Postgres pool's configuration before the pool
// opens: the statement-count test puts a query tracer there.
var pgPoolHook func(*pgxpool.Config)

// riverLogger passes River's warnings and errors to the server's log.
func riverLogger(l *slog.Logger) *slog.Logger {
	return slog.New(levelFilter{h: l.Handler(), min: slog.LevelWarn}).With("component", "river")
}

type levelFilter struct {
	h   slog.Handler
	min slog.Level
}

func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.h.Enabled(ctx, l)
}
func (f levelFilter) Handle(ctx context.Context, r slog.Record) error { return f.h.Handle(ctx, r) }
func (f levelFilter) WithAttrs(a []slog.Attr) slog.Handler {
	return levelFilter{h: f.h.WithAttrs(a), min: f.min}
}
func (f levelFilter) WithGroup(n string) slog.Handler {
	return levelFilter{h: f.h.WithGroup(n), min: f.min}
}

// Handler returns the server's HTTP handler, for tests and for mounting under another mux.
func (s *Server) Handler() http.Handler { return s.handler }

// HTTPServer returns an http.Server for the server's handler with its timeouts: headers within 10
// seconds, idle keep-alive connections closed after Config.IdleTimeout. A request's body must
// arrive within Config.ReadTimeout (set by the handler, so that a long wait for a run or a stream
// is not cut); streams set a write deadline for each write; WebSockets, once upgraded, keep their
// own heartbeats.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: s.cfg.IdleTimeout,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
}

// Serve serves HTTP on ln until ctx ends, then shuts down gracefully: it stops taking runs,
// waits up to Config.ShutdownGrace for running ones to finish (cancelling the rest, which are
// picked up again from their last checkpoint at the next start), and closes the listener.
// In dev mode ln must be on a loopback address.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.cfg.Dev {
		if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
			return &ConfigError{Field: "Dev", Problem: fmt.Sprintf("is set but the listener is on %s", ln.Addr()), Hint: "dev mode has no authentication and binds to 127.0.0.1 only; configure auth to listen elsewhere"}
		}
	}
	srv := s.HTTPServer()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down: no new runs; waiting for running runs", "grace", s.cfg.ShutdownGrace.String())
	graceCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
	defer cancel()
	s.runs.Shutdown(graceCtx)
	shutCtx, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	err := srv.Shutdown(shutCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return err
}

// Close stops the runs and closes the databases. It is safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		if s.runs != nil {
			ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
			s.runs.Shutdown(ctx)
			cancel()
		}
		if s.bus != nil {
			s.bus.Close()
		}
		for i := len(s.closers) - 1; i >= 0; i-- {
			s.closers[i]()
		}
	})
	return nil
}

// assistant finds a registered assistant, or a created one of any tenant (api_assistants.go).
func (s *Server) assistant(id string) (*Assistant, error) { return s.assistantByID(id) }
