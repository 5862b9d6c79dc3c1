package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// JSPeer runs the LangGraph.js workloads of bench/peers/langgraphjs, each in
// a node process of its own.
type JSPeer struct {
	// Dir holds package.json, package-lock.json and run.mjs.
	Dir string
	// Node is the node executable, or "" when the peer is unavailable.
	Node string
	// Unavailable says why Node is "".
	Unavailable string
	// Version is node's own version, for the report.
	Version string
	// Log receives progress messages, npm's output and node's stderr.
	Log io.Writer
}

// PrepareJSPeer finds node and installs the peer's packages with npm ci when
// node_modules is missing. A missing node or a failed install is not an
// error: the JSPeer says why in Unavailable and the report shows it.
func PrepareJSPeer(ctx context.Context, dir string, log io.Writer) (*JSPeer, error) {
	p := &JSPeer{Dir: dir, Log: log}
	if _, err := os.Stat(filepath.Join(dir, "run.mjs")); err != nil {
		p.Unavailable = fmt.Sprintf("no run.mjs in %s", dir)
		return p, nil
	}
	node, err := exec.LookPath("node")
	if err != nil {
		p.Unavailable = "node is not on PATH; install Node.js 18 or later (apt-get install nodejs npm)"
		return p, nil
	}
	if v, err := exec.CommandContext(ctx, node, "--version").Output(); err == nil {
		p.Version = strings.TrimSpace(string(v))
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); errors.Is(err, os.ErrNotExist) {
		npm, err := exec.LookPath("npm")
		if err != nil {
			p.Unavailable = fmt.Sprintf("%s has no node_modules and npm is not on PATH; install npm (apt-get install npm)", dir)
			return p, nil
		}
		fmt.Fprintf(log, "compare: npm ci in %s\n", dir)
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		cmd.Stdout = log
		cmd.Stderr = log
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			p.Unavailable = fmt.Sprintf("npm ci in %s failed (%v); run it there by hand to see why", dir, err)
			return p, nil
		}
	}
	p.Node = node
	return p, nil
}

// JSOptions are the knobs of one LangGraph.js measurement.
type JSOptions struct {
	// Runs is how many timed runs the median is taken over.
	Runs int
	// Budget is the most seconds of timed runs after the third; the peer
	// stops early past it and reports how many runs it made.
	Budget float64
	// MinTime is the least seconds of warm-up and of timed runs, the
	// counterpart of a Go benchmark's -benchtime; 0 means the peer's
	// default (1s).
	MinTime float64
}

// jsLine is the JSON line run.mjs prints for a workload.
type jsLine struct {
	Peer         string  `json:"peer"`
	Version      string  `json:"version"`
	Workload     string  `json:"workload"`
	Variant      string  `json:"variant"`
	Runs         int     `json:"runs"`
	MedianNs     float64 `json:"median_ns"`
	MinNs        float64 `json:"min_ns"`
	MaxNs        float64 `json:"max_ns"`
	Events       int     `json:"events"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
	// The saver variants add these.
	BytesPerThread float64 `json:"bytes_per_thread"`
	Durability     string  `json:"durability"`
	Synchronous    string  `json:"synchronous"`
}

// Run measures one workload in a fresh node process.
func (p *JSPeer) Run(ctx context.Context, w Workload, opts JSOptions) Result {
	if p.Node == "" {
		return missing("%s", p.Unavailable)
	}
	fmt.Fprintf(p.Log, "compare: langgraphjs %s\n", w.ID())
	cmd := exec.CommandContext(ctx, p.Node, "run.mjs", "--child",
		"--workload", w.Name, "--variant", w.Variant,
		"--runs", strconv.Itoa(opts.Runs),
		"--budget", strconv.FormatFloat(opts.Budget, 'f', -1, 64))
	if opts.MinTime > 0 {
		cmd.Args = append(cmd.Args, "--min-time", strconv.FormatFloat(opts.MinTime, 'f', -1, 64))
	}
	cmd.Dir = p.Dir
	var out, errOut bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = io.MultiWriter(p.Log, &errOut)
	err := cmd.Run()
	if ctx.Err() != nil {
		return missing("interrupted")
	}
	if err != nil {
		return missing("langgraphjs %s failed (%v): %s", w.ID(), err, lastLines(errOut.String(), 2))
	}
	line, err := parseJSLine(out.String(), w)
	if err != nil {
		return missing("%v", err)
	}
	r := Result{Runs: line.Runs, MedianNs: line.MedianNs, MinNs: line.MinNs, MaxNs: line.MaxNs, StoredBytes: line.BytesPerThread}
	if w.Saver() {
		if line.BytesPerThread <= 0 {
			return missing("langgraphjs %s reported no bytes_per_thread; run.mjs is older than the saver variants", w.ID())
		}
		r.Note = "durability " + line.Durability
		if line.Synchronous != "" {
			r.Note += ", synchronous=" + line.Synchronous
		}
	}
	// The OS's account of the child, like the Go sides; the peer's own
	// report is the fallback where there is no rusage.
	if r.PeakRSS = peakRSS(cmd.ProcessState); r.PeakRSS == 0 {
		r.PeakRSS = line.PeakRSSBytes
	}
	return r
}

// parseJSLine finds the result line for w in run.mjs's output.
func parseJSLine(out string, w Workload) (jsLine, error) {
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(text, "{") {
			continue
		}
		var l jsLine
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			return jsLine{}, fmt.Errorf("langgraphjs %s printed a line that is not a result (%v): %.80s", w.ID(), err, text)
		}
		if l.Workload != w.Name || l.Variant != w.Variant {
			return jsLine{}, fmt.Errorf("langgraphjs printed a result for %s/%s, want %s", l.Workload, l.Variant, w.ID())
		}
		if l.Runs < 1 || l.MedianNs <= 0 {
			return jsLine{}, fmt.Errorf("langgraphjs %s reported %d runs with median %v ns; want at least one run and a positive median", w.ID(), l.Runs, l.MedianNs)
		}
		return l, nil
	}
	return jsLine{}, fmt.Errorf("langgraphjs %s printed no result line", w.ID())
}
