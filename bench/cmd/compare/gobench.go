package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// GoBench runs the benchmarks of one Go package from a test binary built
// once, each benchmark in its own process so that the peak RSS the
// operating system reports for that process belongs to that benchmark.
type GoBench struct {
	// Label names the side in progress messages: "trellis", "eino".
	Label string
	// Dir is the package directory; the binary runs there, as go test would.
	Dir string
	// Binary is the test binary, or "" when it could not be built.
	Binary string
	// Unavailable says why Binary is "" (the package is missing, has no
	// tests, or does not build).
	Unavailable string
	// Log receives progress messages and the test binary's stderr.
	Log io.Writer
}

// BuildGoBench builds the test binary of the package in dir into tmp. A
// package that is missing, has no test files or does not build is not an
// error: the returned GoBench says so in Unavailable, so that the report
// can show the side as missing. Only a missing go command is an error.
func BuildGoBench(ctx context.Context, label, dir, tmp string, log io.Writer) (*GoBench, error) {
	gb := &GoBench{Label: label, Dir: dir, Log: log}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("the go command is not on PATH (%w); install Go or fix PATH", err)
	}
	if !hasTestFiles(dir) {
		gb.Unavailable = fmt.Sprintf("no *_test.go files in %s yet", dir)
		return gb, nil
	}
	bin := filepath.Join(tmp, label+".test")
	fmt.Fprintf(log, "compare: building the %s benchmarks in %s\n", label, dir)
	cmd := exec.CommandContext(ctx, goCmd, "test", "-c", "-o", bin, ".")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		gb.Unavailable = fmt.Sprintf("%s does not build: %s", dir, firstLines(out.String(), 3))
		return gb, nil
	}
	if _, err := os.Stat(bin); err != nil {
		gb.Unavailable = fmt.Sprintf("go test -c wrote no binary for %s: %s", dir, firstLines(out.String(), 3))
		return gb, nil
	}
	gb.Binary = bin
	return gb, nil
}

func hasTestFiles(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	return len(m) > 0
}

// GoBenchOptions are the knobs of one benchmark run.
type GoBenchOptions struct {
	// Count is -test.count: how many times the benchmark is measured.
	Count int
	// Benchtime is -test.benchtime; "" keeps Go's default (1s).
	Benchtime string
	// MemRuns is the iteration count of the separate process that measures
	// peak RSS (-test.benchtime=MemRunsx); 0 takes the peak RSS of the timing
	// process instead. A separate, fixed count matters because a benchmark
	// whose saver keeps every run's thread grows with b.N: the faster the
	// runtime, the more runs in a second, the more memory.
	MemRuns int
}

// Run measures the benchmark at path ("BenchmarkX/variant") in a process of
// its own. A benchmark that does not exist yet gives a Result with Missing
// set; one that fails gives Missing with the failure.
func (gb *GoBench) Run(ctx context.Context, path string, opts GoBenchOptions) Result {
	if gb.Binary == "" {
		return missing("%s", gb.Unavailable)
	}
	fmt.Fprintf(gb.Log, "compare: %s %s\n", gb.Label, path)
	extra := []string{"-test.count=" + strconv.Itoa(opts.Count)}
	if opts.Benchtime != "" {
		extra = append(extra, "-test.benchtime="+opts.Benchtime)
	}
	lines, rss, miss := gb.exec(ctx, path, extra)
	if miss != "" {
		return missing("%s", miss)
	}
	var samples []float64
	var bytesOp, allocsOp, stored float64
	for _, l := range lines {
		samples = append(samples, l.NsPerOp)
		bytesOp, allocsOp = l.BytesPerOp, l.AllocsPerOp
		if v, ok := l.Metrics["bytes/thread"]; ok {
			stored = v
		}
	}
	r := summarize(samples)
	r.BytesPerOp, r.AllocsPerOp, r.StoredBytes = bytesOp, allocsOp, stored
	r.PeakRSS = rss
	if opts.MemRuns > 0 {
		_, rss, miss := gb.exec(ctx, path, []string{"-test.count=1", "-test.benchtime=" + strconv.Itoa(opts.MemRuns) + "x"})
		if miss != "" {
			return missing("%s (measuring memory)", miss)
		}
		r.PeakRSS = rss
	}
	return r
}

// exec runs the benchmark at path once with the extra flags and returns its
// result lines and peak RSS, or why there are none.
func (gb *GoBench) exec(ctx context.Context, path string, extra []string) ([]GoBenchLine, int64, string) {
	args := append([]string{
		"-test.run=^$",
		"-test.bench=" + benchPattern(path),
		"-test.benchmem",
	}, extra...)
	cmd := exec.CommandContext(ctx, gb.Binary, args...)
	cmd.Dir = gb.Dir
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, 0, "interrupted"
	}
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return nil, 0, fmt.Sprintf("cannot run %s: %v", gb.Binary, err)
		}
		return nil, 0, fmt.Sprintf("%s failed (%v): %s", path, err, lastLines(out.String(), 3))
	}
	var lines []GoBenchLine
	for _, l := range ParseGoBench(out.String()) {
		if benchNameMatches(l.Name, path) {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return nil, 0, fmt.Sprintf("no benchmark %s in %s yet", path, gb.Dir)
	}
	return lines, peakRSS(cmd.ProcessState), ""
}

// benchPattern anchors each level of a benchmark path, so that
// "BenchmarkSequential10/checkpoint" does not also run
// BenchmarkSequential1000.
func benchPattern(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// benchNameMatches reports whether a result line's name (GOMAXPROCS suffix
// removed) is the benchmark at path, or its only sub-benchmark when path
// names a top-level benchmark that grew sub-benchmarks.
func benchNameMatches(name, path string) bool {
	return name == path || (!strings.Contains(path, "/") && name == path+"/nocheckpoint")
}

// GoBenchLine is one result line of go test -bench output.
type GoBenchLine struct {
	Name                             string
	Iterations                       int64
	NsPerOp, BytesPerOp, AllocsPerOp float64
	// Metrics are the other values by unit, from b.ReportMetric:
	// "bytes/thread".
	Metrics map[string]float64
}

var procsSuffix = regexp.MustCompile(`-\d+$`)

// ParseGoBench reads the result lines of go test -bench output and skips
// everything else (headers, logs, PASS).
func ParseGoBench(out string) []GoBenchLine {
	var lines []GoBenchLine
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		l := GoBenchLine{Name: procsSuffix.ReplaceAllString(f[0], ""), Iterations: n, NsPerOp: -1}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			switch f[i+1] {
			case "ns/op":
				l.NsPerOp = v
			case "B/op":
				l.BytesPerOp = v
			case "allocs/op":
				l.AllocsPerOp = v
			default:
				if l.Metrics == nil {
					l.Metrics = map[string]float64{}
				}
				l.Metrics[f[i+1]] = v
			}
		}
		if l.NsPerOp >= 0 {
			lines = append(lines, l)
		}
	}
	return lines
}

func firstLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[:n]
	}
	return strings.Join(ls, " / ")
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, " / ")
}
