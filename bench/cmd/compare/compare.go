package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Config is what the flags say.
type Config struct {
	// Runs is the number of measurements per workload and side (go test
	// -count, and the LangGraph.js peer's timed runs).
	Runs int
	// Filter selects workloads by "name/variant"; nil selects all.
	Filter *regexp.Regexp
	// Out is a file to write the Markdown report to as well, or "".
	Out string
	// Benchtime is passed to the Go benchmarks as -test.benchtime.
	Benchtime string
	// Budget bounds the LangGraph.js timed runs of one workload, in seconds.
	Budget float64
	// MemRuns is the iteration count of the Go sides' memory process.
	MemRuns int
	// Peers are the peers to run: "langgraphjs", "eino".
	Peers []string
	// Root is the trellis module's root directory.
	Root string
	// List prints the workloads and exits.
	List bool
}

var knownPeers = []string{"langgraphjs", "eino"}

// ParseFlags reads args into a Config and checks it.
func ParseFlags(args []string, stderr io.Writer) (Config, error) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./bench/cmd/compare [flags]\n\n"+
			"Runs the trellis runtime benchmarks in ./bench and the same workloads in\n"+
			"LangGraph.js (bench/peers/langgraphjs) and eino (bench/peers/eino), and\n"+
			"prints a Markdown table of medians, ratios and peak memory.\n\n")
		fs.PrintDefaults()
	}
	var (
		c               Config
		filter, peers   string
		root            string
		defaultRootNote = "the module root above the working directory"
	)
	fs.IntVar(&c.Runs, "runs", 5, "measurements per workload and side")
	fs.StringVar(&filter, "filter", "", "regular expression selecting workloads by `name/variant`, e.g. 'sequential|wide_state_25'")
	fs.StringVar(&c.Out, "out", "", "also write the Markdown report to this `file`")
	fs.StringVar(&c.Benchtime, "benchtime", "", "-test.benchtime for the Go benchmarks (default Go's 1s); a duration is also the LangGraph.js peer's least warm-up and timed time")
	fs.IntVar(&c.MemRuns, "memruns", 5, "iterations of the separate process measuring a Go benchmark's peak RSS; 0 takes it from the timing process")
	fs.Float64Var(&c.Budget, "budget", 60, "at most this many `seconds` of LangGraph.js runs per workload after the third")
	fs.StringVar(&peers, "peers", strings.Join(knownPeers, ","), "comma-separated peers to run; empty for trellis alone")
	fs.StringVar(&root, "root", "", "trellis module root (default "+defaultRootNote+")")
	fs.BoolVar(&c.List, "list", false, "print the workloads and their benchmarks, then exit")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q; every option is a flag (see -h)", fs.Arg(0))
	}
	if c.Runs < 1 {
		return Config{}, fmt.Errorf("-runs %d: want at least 1", c.Runs)
	}
	if c.MemRuns < 0 {
		return Config{}, fmt.Errorf("-memruns %d: want 0 or more", c.MemRuns)
	}
	if !(c.Budget > 0) {
		return Config{}, fmt.Errorf("-budget %v: want a positive number of seconds", c.Budget)
	}
	if c.Benchtime != "" {
		if _, err := time.ParseDuration(c.Benchtime); err != nil && !regexp.MustCompile(`^\d+x$`).MatchString(c.Benchtime) {
			return Config{}, fmt.Errorf("-benchtime %q: want a duration such as 500ms or a count such as 100x", c.Benchtime)
		}
	}
	if filter != "" {
		re, err := regexp.Compile(filter)
		if err != nil {
			return Config{}, fmt.Errorf("-filter %q is not a regular expression: %v", filter, err)
		}
		c.Filter = re
		if len(c.Selected()) == 0 {
			return Config{}, fmt.Errorf("-filter %q matches no workload; -list shows them", filter)
		}
	}
	for p := range strings.SplitSeq(peers, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !slices.Contains(knownPeers, p) {
			return Config{}, fmt.Errorf("-peers: unknown peer %q; want some of %s", p, strings.Join(knownPeers, ", "))
		}
		c.Peers = append(c.Peers, p)
	}
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return Config{}, err
		}
		if root, err = findModuleRoot(wd); err != nil {
			return Config{}, err
		}
	}
	c.Root = root
	return c, nil
}

// Selected is the workloads the filter lets through.
func (c Config) Selected() []Workload {
	var ws []Workload
	for _, w := range Workloads {
		if c.Filter == nil || c.Filter.MatchString(w.ID()) {
			ws = append(ws, w)
		}
	}
	return ws
}

func (c Config) peer(name string) bool { return slices.Contains(c.Peers, name) }

const modulePath = "github.com/trellis-go/trellis"

// commandLine is the command as a shell would take it back: arguments that
// are empty or hold shell metacharacters are quoted.
func commandLine(args []string) string {
	parts := []string{"go", "run", "./bench/cmd/compare"}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t|&;<>()$`\\\"'*?[]#~{}!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// findModuleRoot walks up from dir to the go.mod of the trellis module.
func findModuleRoot(dir string) (string, error) {
	for d := dir; ; {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module "+modulePath+"\n")) {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod of %s above %s; run from the trellis checkout or pass -root", modulePath, dir)
		}
		d = parent
	}
}

// Run is the whole command: measure, then print the report.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := ParseFlags(args, stderr)
	if err != nil {
		return err
	}
	if c.List {
		fmt.Fprintf(stdout, "%-40s %-45s %s\n", "WORKLOAD", "TRELLIS BENCHMARK", "PEERS")
		for _, w := range c.Selected() {
			peers := "langgraphjs"
			if w.Eino != "" {
				peers += ", eino " + w.Eino
			}
			fmt.Fprintf(stdout, "%-40s %-45s %s\n", w.ID(), w.Trellis, peers)
		}
		return nil
	}

	tmp, err := os.MkdirTemp("", "trellis-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	selected := c.Selected()
	trellis, err := BuildGoBench(ctx, "trellis", filepath.Join(c.Root, "bench"), tmp, stderr)
	if err != nil {
		return err
	}
	var eino *GoBench
	if c.peer("eino") && slices.ContainsFunc(selected, func(w Workload) bool { return w.Eino != "" }) {
		if eino, err = BuildGoBench(ctx, "eino", filepath.Join(c.Root, "bench", "peers", "eino"), tmp, stderr); err != nil {
			return err
		}
	}
	var js *JSPeer
	if c.peer("langgraphjs") {
		if js, err = PrepareJSPeer(ctx, filepath.Join(c.Root, "bench", "peers", "langgraphjs"), stderr); err != nil {
			return err
		}
	}

	goOpts := GoBenchOptions{Count: c.Runs, Benchtime: c.Benchtime, MemRuns: c.MemRuns}
	jsOpts := JSOptions{Runs: c.Runs, Budget: c.Budget}
	if d, err := time.ParseDuration(c.Benchtime); err == nil {
		jsOpts.MinTime = d.Seconds()
	}
	var rows []Row
	for _, w := range selected {
		t := trellis.Run(ctx, w.Trellis, goOpts)
		if js != nil {
			rows = append(rows, Row{Workload: w, Peer: peerJS, Trellis: t, Other: js.Run(ctx, w, jsOpts)})
		}
		if eino != nil && w.Eino != "" {
			rows = append(rows, Row{Workload: w, Peer: peerEino, Trellis: t, Other: eino.Run(ctx, w.Eino, goOpts)})
		}
		if js == nil && (eino == nil || w.Eino == "") {
			rows = append(rows, Row{Workload: w, Peer: "–", Trellis: t, Other: missing("no peer selected")})
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}

	nodeVersion := ""
	if js != nil {
		nodeVersion = js.Version
	}
	rep := Report{
		Command: commandLine(args),
		Date:    time.Now().UTC().Format("2006-01-02 15:04 MST"),
		Machine: DescribeMachine(c.Root, nodeVersion),
		Rows:    rows,
	}
	var buf bytes.Buffer
	if err := rep.WriteMarkdown(&buf); err != nil {
		return err
	}
	if _, err := stdout.Write(buf.Bytes()); err != nil {
		return err
	}
	if c.Out != "" {
		if err := os.WriteFile(c.Out, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("writing the report: %w", err)
		}
	}
	return nil
}
