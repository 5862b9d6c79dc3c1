package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/tool"
)

// Environment variables the pool sets for a worker, beside the skill's own environment.
const (
	// EnvName names the skill a process was started to serve (see [ServeIfChild]).
	EnvName = "TRELLIS_WORKER"
	// EnvAddr is the address a worker listens on; "127.0.0.1:0" for a subprocess, which then
	// writes the address it got as its first line of output. Empty means ":8080" (a container).
	EnvAddr = "TRELLIS_WORKER_ADDR"
	// EnvFD, when set, is the number of an inherited file descriptor: one end of a Unix socket
	// pair whose other end the pool holds. A worker that knows it serves HTTP on that one
	// connection (and nothing else), writes its ready line with the URL "fd:<n>", and exits
	// when the connection closes; one that does not listens on EnvAddr as before.
	EnvFD = "TRELLIS_WORKER_FD"
	// ReadyPrefix starts the line a worker writes on standard output once it listens, followed
	// by its base URL (or "fd:<n>" when it serves the inherited connection).
	ReadyPrefix = "TRELLIS_WORKER_READY "
)

// Schema is what GET /schema answers: the worker's tools.
type Schema struct {
	Tools []model.ToolSpec `json:"tools"`
}

// Call is the body of POST /execute.
type Call struct {
	Tool   string          `json:"tool"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Reply is the answer of POST /execute: a result, or an error when the call failed.
type Reply struct {
	Result *Result `json:"result,omitempty"`
	Error  string  `json:"error,omitempty"`
}

// Result is a tool's result on the wire.
type Result struct {
	Content    string          `json:"content,omitempty"`
	Structured json.RawMessage `json:"structured,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
}

// Handler serves tools as a worker: GET /schema and POST /execute. Each call runs through a
// tool.Executor, so bad arguments, panics and errors become readable error results.
func Handler(tools []tool.Tool) (http.Handler, error) {
	ex, err := tool.NewExecutor(tools, nil)
	if err != nil {
		return nil, err
	}
	byName := map[string]bool{}
	schema := Schema{Tools: []model.ToolSpec{}}
	for _, t := range tools {
		s := t.Spec()
		byName[s.Name] = true
		schema.Tools = append(schema.Tools, s)
	}
	schemaJSON, _ := json.Marshal(schema)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /schema", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(schemaJSON)
	})
	mux.HandleFunc("POST /execute", func(w http.ResponseWriter, r *http.Request) {
		var c Call
		body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		if err == nil {
			err = json.Unmarshal(body, &c)
		}
		w.Header().Set("Content-Type", "application/json")
		if err != nil || c.Tool == "" {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(Reply{Error: `worker: send {"tool": "<name>", "params": {...}}`})
			return
		}
		if !byName[c.Tool] {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(Reply{Error: fmt.Sprintf("worker: unknown tool %q", c.Tool)})
			return
		}
		out, _ := ex.Run(r.Context(), []message.ToolCall{{ID: "call", Name: c.Tool, Arguments: c.Params}})
		rep := Reply{}
		if len(out) == 1 {
			o := out[0]
			res := &Result{}
			if o.Result != nil {
				res.Content, res.Structured, res.IsError = o.Result.Content, o.Result.Structured, o.Result.IsError
			}
			if o.Err != nil {
				res.IsError = true
				if res.Content == "" {
					res.Content = o.Message.Text()
				}
			}
			rep.Result = res
		}
		_ = json.NewEncoder(w).Encode(rep)
	})
	return mux, nil
}

// Settings are what a worker is configured with: the skill's environment the pool started it
// with (Spec.Env: the skill's env file and what the app adds, such as an API's base URL and key),
// without the pool's own TRELLIS_WORKER* variables. The tools read their settings here, so a
// worker's code never reads the environment itself.
type Settings map[string]string

// Get returns the setting key, or "" when it is not set.
func (s Settings) Get(key string) string { return s[key] }

// settingsOf reads Settings from environment lines KEY=value, leaving out the pool's variables.
func settingsOf(environ []string) Settings {
	s := Settings{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == EnvName || k == EnvAddr || k == EnvFD {
			continue
		}
		s[k] = v
	}
	return s
}

// ServeIfChild makes this process a worker when the pool started it as the worker named name
// (the TRELLIS_WORKER environment variable): it builds the tools from the worker's Settings,
// serves them on TRELLIS_WORKER_ADDR (or the inherited socket), writes its ready line, and exits
// when told to stop. Otherwise it returns at once. Call it early: from main, from TestMain, or
// from an init function of the package that owns the tools.
func ServeIfChild(name string, tools func(Settings) ([]tool.Tool, error)) {
	if os.Getenv(EnvName) != name || name == "" {
		return
	}
	if err := serveChild(tools); err != nil {
		fmt.Fprintln(os.Stderr, "worker "+name+":", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Serve serves tools as the worker named name whatever started the process: the main of a worker
// that is a program of its own (a container image), listening on TRELLIS_WORKER_ADDR (":8080"
// when unset). It returns when the worker stops, or with an error when TRELLIS_WORKER names
// another worker or the tools cannot be built.
func Serve(name string, tools func(Settings) ([]tool.Tool, error)) error {
	if other := os.Getenv(EnvName); other != "" && other != name {
		return fmt.Errorf("worker: %s=%q names another worker than %q: unset it, or start the program that serves %q", EnvName, other, name, other)
	}
	return serveChild(tools)
}

func serveChild(tools func(Settings) ([]tool.Tool, error)) error {
	ts, err := tools(settingsOf(os.Environ()))
	if err != nil {
		return err
	}
	h, err := Handler(ts)
	if err != nil {
		return err
	}
	if fd := os.Getenv(EnvFD); fd != "" {
		return serveFD(h, fd)
	}
	addr := os.Getenv(EnvAddr)
	if addr == "" {
		addr = ":8080"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	warmUp(h)
	fmt.Fprintf(os.Stdout, "%shttp://%s\n", ReadyPrefix, ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// A subprocess whose server died (it was reparented) stops too: nothing is left behind.
	if parent := os.Getppid(); parent > 1 && os.Getenv(EnvAddr) != "" && os.Getenv(EnvAddr) != ":8080" {
		go func() {
			for range time.Tick(time.Second) {
				if os.Getppid() != parent {
					stop()
					return
				}
			}
		}()
	}
	go func() {
		<-ctx.Done()
		// A worker serves one call and is replaced: there is nothing to finish gracefully.
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// serveFD serves HTTP on the inherited connection fd and exits when it closes (the pool closed
// its end, or the pool's process died) or on SIGTERM.
func serveFD(h http.Handler, fd string) error {
	n, err := strconv.Atoi(fd)
	if err != nil || n < 3 {
		return fmt.Errorf("%s=%q is not an inherited file descriptor (3 or more)", EnvFD, fd)
	}
	f := os.NewFile(uintptr(n), "trellis-worker-conn")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s=%s: %w", EnvFD, fd, err)
	}
	// The parent is the only client and is trusted: no header timeout, so a worker may wait in
	// the pool for as long as it takes.
	srv := &http.Server{Handler: h, ConnState: func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed || st == http.StateHijacked {
			os.Exit(0)
		}
	}}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-sig
		os.Exit(0)
	}()
	warmUp(h)
	fmt.Fprintf(os.Stdout, "%sfd:%d\n", ReadyPrefix, n)
	return srv.Serve(newOneConn(c))
}

// warmUp serves a GET /schema and a POST /execute of no tool through a real http.Server over an
// in-memory pipe before the worker says it is ready, so the first call does not pay for the
// code and caches a fresh process touches for the first time (HTTP parsing, JSON of the
// envelope). No tool runs.
func warmUp(h http.Handler) {
	a, b := net.Pipe()
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(newOneConn(b)) }()
	defer func() { _ = a.Close(); _ = srv.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cw := newConnWorker(a)
	_, _, _ = cw.exchange(ctx, http.MethodGet, "/schema", nil, 4<<20)
	_, _, _ = cw.exchange(ctx, http.MethodPost, "/execute", []byte(`{"tool":""}`), 1<<20)
}
