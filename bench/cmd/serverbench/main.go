package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trellis-go/trellis/bench/serverbench"
	"github.com/trellis-go/trellis/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "serverbench:", err)
		os.Exit(1)
	}
}

type options struct {
	only                   string
	streams                []int
	tokens, pause          int
	interval               time.Duration
	mode, streamsDB        string
	clients                int
	warmup, duration       time.Duration
	pg, peer, out          string
	cpuProfile, clientProf string
	heapProfile, gorDump   string
	peerWorkers            int
	serve, localQueue      bool
	db, dataDir            string
	maxRuns                int
}

// Run is the command: the driver, or with -serve a bench host for the driver.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("serverbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.only, "only", "streams,runs", "what to measure: streams (both servers), runs (all three), or a comma-separated list of streams, runs, trellis-streams, langgraphjs-streams, sqlite, postgres, langgraphjs")
	streams := fs.String("streams", "500,2000", "concurrent streams: a number or a comma-separated list of them, each measured on both servers")
	fs.IntVar(&o.tokens, "tokens", 40, "tokens per streamed answer")
	fs.IntVar(&o.pause, "pause", 20, "tokens after which every answer waits, idle, until all streams are open")
	fs.DurationVar(&o.interval, "interval", 50*time.Millisecond, "time between two tokens of an answer")
	fs.StringVar(&o.streamsDB, "streams-db", "sqlite", "database of the streams' server: sqlite or postgres (a database of its own in -pg)")
	fs.StringVar(&o.mode, "mode", "messages-tuple", "stream_mode of the streams: messages-tuple or messages")
	fs.IntVar(&o.clients, "clients", 8, "concurrent clients sending runs")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "runs sent before the timed part")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "timed part of runs per second")
	fs.StringVar(&o.pg, "pg", envOr("TRELLIS_TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test"), "Postgres in which a database is created for the run")
	fs.StringVar(&o.peer, "peer", filepath.Join("bench", "peers", "langgraphapi"), "directory of the LangGraph.js API peer")
	fs.IntVar(&o.peerWorkers, "peer-workers", 10, "runs: run workers of the LangGraph.js API server (the CLI's default is 10); the streams give it one per stream and 64 more, as trellis's MaxConcurrentRuns")
	fs.StringVar(&o.out, "out", "", "also write the report to this file")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "streams: write the server's CPU profile from the gate's opening to the streams' end to this file")
	fs.StringVar(&o.clientProf, "client-cpuprofile", "", "streams: write this process's (the clients') CPU profile over the same span to this file")
	fs.StringVar(&o.heapProfile, "heapprofile", "", "streams: write the server's heap profile, taken while the streams are idle at the gate, to this file")
	fs.StringVar(&o.gorDump, "goroutines", "", "streams: write the server's goroutines (by stack), while the streams are idle, to this file")
	fs.BoolVar(&o.serve, "serve", false, "internal: be a bench host and print LISTEN url")
	fs.BoolVar(&o.localQueue, "local-queue", false, "internal (-serve): run the runs in memory instead of the River queue")
	fs.StringVar(&o.db, "db", "", "internal (-serve): a Postgres URL; empty means SQLite in -data")
	fs.StringVar(&o.dataDir, "data", "", "internal (-serve): the SQLite data directory")
	fs.IntVar(&o.maxRuns, "max-runs", 0, "internal (-serve): the server's MaxConcurrentRuns (0: its default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if o.streams, err = parseCounts(*streams); err != nil {
		return fmt.Errorf("-streams %q: %w", *streams, err)
	}
	if o.serve {
		return serve(ctx, o, stdout, stderr)
	}
	return drive(ctx, o, stdout, stderr)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// serve is the child: a bench host until its standard input closes or it is signalled.
func serve(ctx context.Context, o options, stdout, stderr io.Writer) error {
	if _, err := serverbench.RaiseFileLimit(uint64(o.maxRuns)*2 + 4096); err != nil {
		fmt.Fprintln(stderr, "serverbench: cannot raise the open-file limit:", err)
	}
	// The host runs the collector as trellis serve does (server.TuneGC): GOGC=400 under a memory
	// limit unless GOGC or GOMEMLIMIT is set, so GOGC=100 in the environment measures Go's default.
	server.TuneGC()
	h, err := serverbench.StartHost(serverbench.HostConfig{
		DataDir: o.dataDir, DatabaseURL: o.db, LocalQueue: o.localQueue, MaxConcurrentRuns: o.maxRuns,
		Model:  &serverbench.PacedModel{Tokens: o.tokens, PauseAfter: o.pause, Interval: o.interval},
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "LISTEN", h.URL)
	stdinClosed := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stdinClosed) }()
	select {
	case <-ctx.Done():
	case <-stdinClosed:
	}
	return h.Close()
}

// child is a server process the driver started.
type child struct {
	url   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startChild starts a process that prints "LISTEN url" when it serves, and waits for that line.
func startChild(ctx context.Context, cmd *exec.Cmd, stderr io.Writer) (*child, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, stdin: stdin}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "LISTEN "); ok {
				select {
				case found <- u:
				default:
				}
			}
		}
	}()
	select {
	case c.url = <-found:
		return c, nil
	case <-time.After(2 * time.Minute):
		err = errors.New("it did not say LISTEN within 2 minutes")
	case <-ctx.Done():
		err = ctx.Err()
	}
	c.stop()
	return nil, fmt.Errorf("%s: %w", filepath.Base(cmd.Path), err)
}

// stop closes the child's standard input, which ends it, and kills it if it lingers.
func (c *child) stop() {
	c.stdin.Close()
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// The parts -only can name; "streams" stands for both servers' streams, "runs" for the three
// servers' runs.
var parts = map[string][]string{
	"streams": {"trellis-streams", "langgraphjs-streams"},
	"runs":    {"sqlite", "postgres", "langgraphjs"},
}

func (o options) wants(what string) bool {
	for _, w := range strings.Split(o.only, ",") {
		w = strings.TrimSpace(w)
		if w == what || slices.Contains(parts[w], what) {
			return true
		}
	}
	return false
}

// parseCounts reads "500,2000": positive numbers, each once.
func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number of streams (use e.g. 500 or 500,2000)", strings.TrimSpace(f))
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("%d is listed twice", n)
		}
		out = append(out, n)
	}
	return out, nil
}

func drive(ctx context.Context, o options, stdout, stderr io.Writer) error {
	for _, w := range strings.Split(o.only, ",") {
		switch strings.TrimSpace(w) {
		case "streams", "runs", "trellis-streams", "langgraphjs-streams", "sqlite", "postgres", "langgraphjs":
		default:
			return fmt.Errorf("-only names %q; use streams, runs, trellis-streams, langgraphjs-streams, sqlite, postgres, langgraphjs", w)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	most := slices.Max(o.streams)
	wantsStreams := o.wants("trellis-streams") || o.wants("langgraphjs-streams")
	// The servers are this process's children and inherit the limit raised here.
	if limit, err := serverbench.RaiseFileLimit(uint64(most)*2 + 4096); err != nil || (wantsStreams && limit < uint64(most)+256) {
		return fmt.Errorf("the open-file limit is %d (%v); %d streams need more: raise the hard limit (ulimit -Hn)", limit, err, most)
	}
	rep := &report{o: o}
	rep.machine()
	if wantsStreams {
		for _, n := range o.streams {
			sz := streamsAt{n: n}
			if o.wants("trellis-streams") {
				sz.trellis = measureStreams(ctx, o, n, self, stderr)
			}
			if o.wants("langgraphjs-streams") && ctx.Err() == nil {
				sz.peer = measurePeerStreams(ctx, o, n, stderr)
			}
			rep.streams = append(rep.streams, sz)
		}
	}
	if o.wants("sqlite") {
		rep.add("trellis, SQLite", measureTrellisRuns(ctx, o, self, "", stderr))
	}
	if o.wants("postgres") {
		rep.add("trellis, Postgres", measurePostgres(ctx, o, self, stderr))
	}
	if o.wants("langgraphjs") {
		rep.add(peerName, measurePeer(ctx, o, stderr))
	}
	text := rep.String()
	fmt.Fprint(stdout, text)
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(text), 0o644); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return rep.err()
}

// peerName names the LangGraph.js API server in the report.
const peerName = "LangGraph.js API 2.0.0, in memory"

func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// streamOutcome is one server's streams measurement at one size, or why there is none.
type streamOutcome struct {
	res  *serverbench.StreamResult
	err  error
	skip string
	load [2]string
}

// streamsAt is both servers' streams at n streams; nil where a server was not asked for.
type streamsAt struct {
	n             int
	trellis, peer *streamOutcome
}

func measureStreams(ctx context.Context, o options, n int, self string, stderr io.Writer) *streamOutcome {
	out := &streamOutcome{load: [2]string{loadavg()}}
	args := []string{"-serve", "-local-queue", "-max-runs", strconv.Itoa(n + 64),
		"-tokens", strconv.Itoa(o.tokens), "-pause", strconv.Itoa(o.pause), "-interval", o.interval.String()}
	switch o.streamsDB {
	case "sqlite":
		dir, err := os.MkdirTemp("", "serverbench-streams-")
		if err != nil {
			out.err = err
			return out
		}
		defer os.RemoveAll(dir)
		args = append(args, "-data", dir)
	case "postgres":
		dbURL, drop, skip, err := tempDatabase(ctx, o, stderr)
		if skip != "" || err != nil {
			out.skip, out.err = skip, err
			return out
		}
		defer drop()
		args = append(args, "-db", dbURL)
	default:
		out.err = fmt.Errorf("-streams-db is %q; use sqlite or postgres", o.streamsDB)
		return out
	}
	fmt.Fprintf(stderr, "serverbench: streams: starting a trellis host for %d streams on %s\n", n, o.streamsDB)
	c, err := startChild(ctx, exec.CommandContext(ctx, self, args...), stderr)
	if err != nil {
		out.err = err
		return out
	}
	defer c.stop()
	so := streamOptions(o, n, c.url, stderr)
	for _, p := range []struct {
		path string
		w    *io.Writer
	}{{o.cpuProfile, &so.CPUProfile}, {o.clientProf, &so.ClientCPUProfile}, {o.heapProfile, &so.HeapProfile}, {o.gorDump, &so.Goroutines}} {
		if p.path == "" {
			continue
		}
		if len(o.streams) > 1 {
			// One file per size: "cpu.pprof" at 500 streams is "cpu-500.pprof".
			ext := filepath.Ext(p.path)
			p.path = fmt.Sprintf("%s-%d%s", strings.TrimSuffix(p.path, ext), n, ext)
		}
		f, err := os.Create(p.path)
		if err != nil {
			out.err = err
			return out
		}
		defer f.Close()
		*p.w = f
	}
	out.res, out.err = serverbench.RunStreams(ctx, so)
	out.load[1] = loadavg()
	return out
}

// streamOptions are the streams' options at n streams against the server at url.
func streamOptions(o options, n int, url string, stderr io.Writer) serverbench.StreamOptions {
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	return serverbench.StreamOptions{URL: url, Streams: n, Tokens: o.tokens, PauseAfter: o.pause,
		Mode: o.mode, Client: &http.Client{Transport: tr}, Log: stderr}
}

// measurePeerStreams measures the LangGraph.js API server's streams: the same client and load
// against stream.mjs's graph, with a run worker for every stream (and 64 more, as trellis's
// MaxConcurrentRuns): with fewer, the runs beyond them would queue and never reach the gate.
func measurePeerStreams(ctx context.Context, o options, n int, stderr io.Writer) *streamOutcome {
	out := &streamOutcome{load: [2]string{loadavg()}}
	fmt.Fprintf(stderr, "serverbench: streams: starting the LangGraph.js API server for %d streams\n", n)
	c, skip, err := startPeer(ctx, o, n+64, stderr)
	if skip != "" || err != nil {
		out.skip, out.err = skip, err
		return out
	}
	defer c.stop()
	so := streamOptions(o, n, c.url, stderr)
	so.Peer = true
	out.res, out.err = serverbench.RunStreams(ctx, so)
	out.load[1] = loadavg()
	return out
}

// runsOutcome is one server's runs-per-second measurement, or why there is none.
type runsOutcome struct {
	res        *serverbench.RunsResult
	err        error
	skip       string
	base, peak serverbench.Stats // trellis only
	after      *serverbench.Stats
	load       [2]string
}

func measureTrellisRuns(ctx context.Context, o options, self, dbURL string, stderr io.Writer) runsOutcome {
	out := runsOutcome{load: [2]string{loadavg()}}
	args := []string{"-serve"}
	if dbURL == "" {
		dir, err := os.MkdirTemp("", "serverbench-runs-")
		if err != nil {
			out.err = err
			return out
		}
		defer os.RemoveAll(dir)
		args = append(args, "-data", dir)
	} else {
		args = append(args, "-db", dbURL)
	}
	c, err := startChild(ctx, exec.CommandContext(ctx, self, args...), stderr)
	if err != nil {
		out.err = err
		return out
	}
	defer c.stop()
	tr := &http.Transport{MaxIdleConnsPerHost: o.clients + 4, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	// The baseline is read once the server has run a round of runs: pools and queue workers
	// that start on first use are not what a run leaves behind.
	if err := serverbench.Warm(ctx, client, c.url, o.clients); err != nil {
		out.err = err
		return out
	}
	tr.CloseIdleConnections()
	if out.base, err = serverbench.Steady(ctx, client, c.url); err != nil {
		out.err = err
		return out
	}
	out.res, out.err = serverbench.RunRuns(ctx, serverbench.RunsOptions{URL: c.url, Clients: o.clients, Warmup: o.warmup, Duration: o.duration, Client: client})
	out.load[1] = loadavg()
	if out.err != nil {
		return out
	}
	if out.peak, err = serverbench.FetchStats(ctx, client, c.url); err != nil {
		out.err = err
		return out
	}
	tr.CloseIdleConnections()
	after, err := serverbench.BackToBaseline(ctx, client, c.url, out.base, out.peak, 2*time.Second)
	out.after = &after
	out.err = err
	return out
}

// tempDatabase creates a database of its own in the Postgres at o.pg and returns its URL and
// how to drop it; skip says why there is none when Postgres is unreachable.
func tempDatabase(ctx context.Context, o options, stderr io.Writer) (dbURL string, drop func(), skip string, err error) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, o.pg)
	if err != nil {
		return "", nil, fmt.Sprintf("Postgres at %s is unreachable (%v): skipped", redact(o.pg), err), nil
	}
	u, err := url.Parse(o.pg)
	if err != nil {
		conn.Close(context.Background())
		return "", nil, "", err
	}
	name := fmt.Sprintf("serverbench_%d_%d", os.Getpid(), time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		conn.Close(context.Background())
		return "", nil, "", fmt.Errorf("create database %s: %w", name, err)
	}
	drop = func() {
		if _, err := conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			fmt.Fprintf(stderr, "serverbench: cannot drop database %s: %v\n", name, err)
		}
		conn.Close(context.Background())
	}
	u.Path = "/" + name
	return u.String(), drop, "", nil
}

func measurePostgres(ctx context.Context, o options, self string, stderr io.Writer) runsOutcome {
	dbURL, drop, skip, err := tempDatabase(ctx, o, stderr)
	if skip != "" || err != nil {
		return runsOutcome{skip: skip, err: err}
	}
	defer drop()
	return measureTrellisRuns(ctx, o, self, dbURL, stderr)
}

func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// startPeer starts the LangGraph.js API server (bench/peers/langgraphapi/serve.mjs) with
// workers run workers and the paced model's settings, installing its pinned packages with npm ci
// first when node_modules is missing. skip says why it cannot run here (no node, no npm).
func startPeer(ctx context.Context, o options, workers int, stderr io.Writer) (c *child, skip string, err error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, "node is not on PATH: the LangGraph.js API was not measured (install Node.js 20 or later)", nil
	}
	if _, err := os.Stat(filepath.Join(o.peer, "serve.mjs")); err != nil {
		return nil, "", fmt.Errorf("no serve.mjs in %s (run from the trellis checkout or set -peer)", o.peer)
	}
	if _, err := os.Stat(filepath.Join(o.peer, "node_modules")); errors.Is(err, os.ErrNotExist) {
		npm, err := exec.LookPath("npm")
		if err != nil {
			return nil, fmt.Sprintf("%s has no node_modules and npm is not on PATH: skipped", o.peer), nil
		}
		fmt.Fprintf(stderr, "serverbench: npm ci in %s\n", o.peer)
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir, cmd.Stdout, cmd.Stderr = o.peer, stderr, stderr
		if err := cmd.Run(); err != nil {
			return nil, "", fmt.Errorf("npm ci in %s: %w", o.peer, err)
		}
	}
	// --expose-gc: the bench's stats collect garbage before reading the memory, as a trellis
	// host's do.
	cmd := exec.CommandContext(ctx, node, "--expose-gc", "serve.mjs", "--workers", strconv.Itoa(workers),
		"--tokens", strconv.Itoa(o.tokens), "--pause", strconv.Itoa(o.pause),
		"--interval-ms", strconv.FormatFloat(float64(o.interval)/float64(time.Millisecond), 'f', -1, 64))
	cmd.Dir = o.peer
	c, err = startChild(ctx, cmd, stderr)
	return c, "", err
}

func measurePeer(ctx context.Context, o options, stderr io.Writer) runsOutcome {
	out := runsOutcome{load: [2]string{loadavg()}}
	c, skip, err := startPeer(ctx, o, o.peerWorkers, stderr)
	if skip != "" || err != nil {
		out.skip, out.err = skip, err
		return out
	}
	defer c.stop()
	out.res, out.err = serverbench.RunRuns(ctx, serverbench.RunsOptions{URL: c.url, Clients: o.clients, Warmup: o.warmup, Duration: o.duration})
	out.load[1] = loadavg()
	return out
}
