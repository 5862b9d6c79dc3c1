package serverbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/trellis-go/trellis/server"
)

// HostConfig configures [StartHost]. Zero values are documented defaults.
type HostConfig struct {
	// DataDir is the SQLite data directory when DatabaseURL is empty. Required then.
	DataDir string
	// DatabaseURL, when set, puts the server on Postgres.
	DatabaseURL string
	// Model is the stream graph's model; nil means a PacedModel with its defaults.
	Model *PacedModel
	// LocalQueue runs the runs in this process's memory (server.NewLocalQueue) instead of the
	// default River queue in the database.
	LocalQueue bool
	// MaxConcurrentRuns is the server's Config.MaxConcurrentRuns; zero means its default (64).
	MaxConcurrentRuns int
	// EventRetention is the server's Config.EventRetention; zero means 2 seconds, so that a
	// measurement can see finished runs' logs go.
	EventRetention time.Duration
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// Addr is the loopback address to listen on; empty means 127.0.0.1:0.
	Addr string
}

// Host is a trellis server in this process serving the bench's graphs on loopback, with routes
// of its own beside the API: GET /bench/stats (?settle=1 collects garbage first) answers the
// process's [Stats], GET /bench/goroutines lists its goroutines by stack (to see what a
// measurement left behind), POST /bench/release opens the paced model's gate, and POST
// /bench/cpuprofile/start and /bench/cpuprofile/stop take a CPU profile over a span the client
// chooses (stop answers it); and the runtime's profiles under /debug/pprof/.
type Host struct {
	// URL is the server's base URL, http://127.0.0.1:port.
	URL   string
	Model *PacedModel
	srv   *server.Server
	stop  context.CancelFunc
	done  chan error
}

// StartHost builds the server and serves it until Close.
func StartHost(cfg HostConfig) (*Host, error) {
	m := cfg.Model
	if m == nil {
		m = &PacedModel{}
	}
	if cfg.DatabaseURL == "" && cfg.DataDir == "" {
		return nil, errors.New("serverbench: HostConfig needs a DataDir (SQLite) or a DatabaseURL (Postgres)")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	retention := cfg.EventRetention
	if retention <= 0 {
		retention = 2 * time.Second
	}
	scfg := server.Config{
		Graphs:            Graphs(m),
		DataDir:           cfg.DataDir,
		DatabaseURL:       cfg.DatabaseURL,
		Dev:               true,
		Logger:            log,
		MaxConcurrentRuns: cfg.MaxConcurrentRuns,
		EventRetention:    retention,
		ShutdownGrace:     5 * time.Second,
	}
	if cfg.LocalQueue {
		scfg.Queue = server.NewLocalQueue(max(cfg.MaxConcurrentRuns, server.DefaultMaxConcurrentRuns))
	}
	srv, err := server.New(scfg)
	if err != nil {
		return nil, err
	}
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("serverbench: listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bench/stats", func(w http.ResponseWriter, r *http.Request) {
		st := ReadStats(r.URL.Query().Get("settle") == "1")
		st.Waiting = m.Waiting()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	})
	mux.HandleFunc("GET /bench/goroutines", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_ = pprof.Lookup("goroutine").WriteTo(w, 1)
	})
	var prof cpuProfile
	mux.HandleFunc("POST /bench/cpuprofile/start", func(w http.ResponseWriter, r *http.Request) {
		if err := prof.start(); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /bench/cpuprofile/stop", func(w http.ResponseWriter, r *http.Request) {
		data, err := prof.stop()
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(data)
	})
	mux.HandleFunc("POST /bench/release", func(w http.ResponseWriter, r *http.Request) {
		m.Release()
		w.WriteHeader(http.StatusNoContent)
	})
	// The runtime's profiles, to see where a measurement's time goes:
	// go tool pprof http://HOST/debug/pprof/profile?seconds=10
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	mux.Handle("/", srv.Handler())
	ctx, stop := context.WithCancel(context.Background())
	h := &Host{URL: "http://" + ln.Addr().String(), Model: m, srv: srv, stop: stop, done: make(chan error, 1)}
	// An http.Server of ours rather than server.Serve, so the bench routes sit beside the API;
	// Close then stops the runs with server.Close.
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		err := hs.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		h.done <- err
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		hs.Close()
	}()
	return h, nil
}

// Close stops serving, stops the runs and closes the databases.
func (h *Host) Close() error {
	h.stop()
	err := <-h.done
	h.srv.Close()
	return err
}

// cpuProfile is the CPU profile the driver starts and stops through the host's routes.
type cpuProfile struct {
	mu  sync.Mutex
	buf *bytes.Buffer
}

func (p *cpuProfile) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.buf != nil {
		return errors.New("serverbench: a CPU profile is already running")
	}
	buf := new(bytes.Buffer)
	if err := pprof.StartCPUProfile(buf); err != nil {
		return err
	}
	p.buf = buf
	return nil
}

func (p *cpuProfile) stop() ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.buf == nil {
		return nil, errors.New("serverbench: no CPU profile is running")
	}
	pprof.StopCPUProfile()
	data := p.buf.Bytes()
	p.buf = nil
	return data, nil
}
