package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestParseGoBench(t *testing.T) {
	out := `goos: linux
goarch: amd64
pkg: example.com/x
cpu: AMD EPYC
BenchmarkSequential1000/nocheckpoint-2         	      63	  18652661 ns/op	 4246919 B/op	   49125 allocs/op
BenchmarkSequential1000/nocheckpoint-2         	      60	  18000000 ns/op	 4246919 B/op	   49125 allocs/op
BenchmarkFirstEvent 	 1000	 1234.5 ns/op	 12.5 events/op
BenchmarkReactAgent100xSaver/sqlite-2 	 3	 90000000 ns/op	 1234567 bytes/thread	 100 B/op
BenchmarkBroken-2   	 notanumber	 1 ns/op
BenchmarkNoTime-2   	 10	 5 B/op
--- FAIL: BenchmarkOther
PASS
ok  	example.com/x	2.957s
`
	got := ParseGoBench(out)
	want := []GoBenchLine{
		{Name: "BenchmarkSequential1000/nocheckpoint", Iterations: 63, NsPerOp: 18652661, BytesPerOp: 4246919, AllocsPerOp: 49125},
		{Name: "BenchmarkSequential1000/nocheckpoint", Iterations: 60, NsPerOp: 18000000, BytesPerOp: 4246919, AllocsPerOp: 49125},
		{Name: "BenchmarkFirstEvent", Iterations: 1000, NsPerOp: 1234.5, Metrics: map[string]float64{"events/op": 12.5}},
		{Name: "BenchmarkReactAgent100xSaver/sqlite", Iterations: 3, NsPerOp: 9e7, BytesPerOp: 100, Metrics: map[string]float64{"bytes/thread": 1234567}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseGoBench:\n got %+v\nwant %+v", got, want)
	}
}

func TestBenchPattern(t *testing.T) {
	for _, tc := range []struct {
		path string
		want string
		// names that the pattern's levels must not match
		notFirst string
	}{
		{"BenchmarkSequential10/checkpoint", "^BenchmarkSequential10$/^checkpoint$", "BenchmarkSequential1000"},
		{"BenchmarkSequential1000FirstEvent", "^BenchmarkSequential1000FirstEvent$", "BenchmarkSequential1000"},
	} {
		got := benchPattern(tc.path)
		if got != tc.want {
			t.Errorf("benchPattern(%q) = %q, want %q", tc.path, got, tc.want)
		}
		first := regexp.MustCompile(strings.Split(got, "/")[0])
		if first.MatchString(tc.notFirst) {
			t.Errorf("pattern %q also selects %s", got, tc.notFirst)
		}
	}
}

func TestBenchNameMatches(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		want       bool
	}{
		{"BenchmarkA/checkpoint", "BenchmarkA/checkpoint", true},
		{"BenchmarkA/nocheckpoint", "BenchmarkA/checkpoint", false},
		{"BenchmarkA", "BenchmarkA", true},
		{"BenchmarkA/nocheckpoint", "BenchmarkA", true},
		{"BenchmarkA/checkpoint", "BenchmarkA", false},
		{"BenchmarkAB", "BenchmarkA", false},
	} {
		if got := benchNameMatches(tc.name, tc.path); got != tc.want {
			t.Errorf("benchNameMatches(%q, %q) = %v, want %v", tc.name, tc.path, got, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	r := summarize([]float64{30, 10, 20})
	if r.Runs != 3 || r.MedianNs != 20 || r.MinNs != 10 || r.MaxNs != 30 || !r.OK() {
		t.Errorf("odd count: %+v", r)
	}
	r = summarize([]float64{40, 10, 20, 30})
	if r.MedianNs != 25 {
		t.Errorf("even count: median %v, want 25", r.MedianNs)
	}
	if r := summarize(nil); r.OK() || r.Missing == "" {
		t.Errorf("no samples: %+v, want a missing result", r)
	}
}

func TestParseJSLine(t *testing.T) {
	w := Workload{Name: "sequential_10", Variant: "checkpoint"}
	good := `{"peer":"langgraphjs","version":"1.7.3","workload":"sequential_10","variant":"checkpoint","runs":5,"median_ns":123,"min_ns":100,"max_ns":150,"events":10,"peak_rss_bytes":4096}`
	l, err := parseJSLine("noise\n"+good+"\n", w)
	if err != nil {
		t.Fatal(err)
	}
	if l.Runs != 5 || l.MedianNs != 123 || l.PeakRSSBytes != 4096 {
		t.Errorf("parsed %+v", l)
	}
	for _, tc := range []struct {
		name, out, wantErr string
	}{
		{"nothing", "warming up\n", "no result line"},
		{"bad json", "{not json\n", "not a result"},
		{"other workload", strings.Replace(good, "sequential_10", "sequential_1000", 1), "want sequential_10/checkpoint"},
		{"no runs", strings.Replace(good, `"runs":5`, `"runs":0`, 1), "at least one run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseJSLine(tc.out, w)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"-runs", "0"}, "-runs 0: want at least 1"},
		{[]string{"-filter", "("}, "not a regular expression"},
		{[]string{"-filter", "no_such_workload"}, "matches no workload"},
		{[]string{"-peers", "langgraphjs,crewai"}, `unknown peer "crewai"`},
		{[]string{"-budget", "0"}, "want a positive number of seconds"},
		{[]string{"-memruns", "-1"}, "-memruns -1: want 0 or more"},
		{[]string{"-benchtime", "soon"}, "want a duration"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		_, err := ParseFlags(append(tc.args, "-root", root), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ParseFlags(%q) error = %v, want one containing %q", tc.args, err, tc.wantErr)
		}
	}

	c, err := ParseFlags([]string{"-root", root, "-filter", "^sequential_1000/", "-peers", "eino", "-benchtime", "100x"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, w := range c.Selected() {
		ids = append(ids, w.ID())
	}
	if want := []string{"sequential_1000/nocheckpoint", "sequential_1000/checkpoint"}; !slices.Equal(ids, want) {
		t.Errorf("selected %q, want %q", ids, want)
	}
	if !slices.Equal(c.Peers, []string{"eino"}) || c.Runs != 5 {
		t.Errorf("config %+v", c)
	}
}

func TestFindModuleRoot(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "go.mod"), "module "+modulePath+"\n\ngo 1.25\n")
	deep := filepath.Join(root, "bench", "cmd", "compare")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	// A nested module of another path is skipped on the way up.
	writeFile(t, filepath.Join(root, "bench", "go.mod"), "module example.com/other\n")
	got, err := findModuleRoot(deep)
	if err != nil || got != root {
		t.Errorf("findModuleRoot = %q, %v; want %q", got, err, root)
	}
	if _, err := findModuleRoot(t.TempDir()); err == nil || !strings.Contains(err.Error(), "pass -root") {
		t.Errorf("outside the module: error = %v, want a hint to pass -root", err)
	}
}

// The issue names the trellis benchmarks; the table must use exactly those.
func TestWorkloadNames(t *testing.T) {
	want := []string{
		"BenchmarkSequential10", "BenchmarkSequential1000", "BenchmarkFanoutToSubgraph10x",
		"BenchmarkFanoutToSubgraph100x", "BenchmarkReactAgent10x", "BenchmarkReactAgent100x",
		"BenchmarkWideState25x300", "BenchmarkWideState15x600", "BenchmarkWideState9x1200",
		"BenchmarkStaticFanout100",
	}
	seen := map[string]bool{}
	for _, w := range Workloads {
		if seen[w.ID()] {
			t.Errorf("workload %s listed twice", w.ID())
		}
		seen[w.ID()] = true
		seen[w.Trellis] = true
	}
	for _, b := range want {
		for _, v := range []string{"nocheckpoint", "checkpoint"} {
			if !seen[b+"/"+v] {
				t.Errorf("no row runs %s/%s", b, v)
			}
		}
	}
	if !seen["BenchmarkSequential1000FirstEvent"] {
		t.Error("no row runs BenchmarkSequential1000FirstEvent")
	}
}

// Every row must be a workload the LangGraph.js peer knows.
func TestWorkloadsMatchJSPeer(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node unreachable: not on PATH")
	}
	dir := filepath.Join("..", "..", "peers", "langgraphjs")
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		t.Skipf("LangGraph.js peer unreachable: %v (run npm ci in %s)", err, dir)
	}
	cmd := exec.Command(node, "run.mjs", "--list")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node run.mjs --list: %v", err)
	}
	js := strings.Fields(string(out))
	for _, w := range Workloads {
		if !slices.Contains(js, w.ID()) {
			t.Errorf("the LangGraph.js peer has no workload %s", w.ID())
		}
	}
}

func TestReport(t *testing.T) {
	ok := func(ns float64, rss int64) Result {
		return Result{Runs: 3, MedianNs: ns, MinNs: ns, MaxNs: ns, PeakRSS: rss}
	}
	seq := Workload{Name: "sequential_1000", Variant: "nocheckpoint"}
	wide := Workload{Name: "wide_state_25x300", Variant: "checkpoint"}
	react := Workload{Name: "react_agent_10x", Variant: "checkpoint"}
	rows := []Row{
		{Workload: seq, Peer: peerJS, Trellis: ok(1e6, 10<<20), Other: ok(100e6, 100<<20)},
		{Workload: seq, Peer: peerEino, Trellis: ok(1e6, 10<<20), Other: ok(2e6, 20<<20)},
		{Workload: wide, Peer: peerJS, Trellis: ok(10e6, 60<<20), Other: ok(100e6, 100<<20)},
		{Workload: react, Peer: peerJS, Trellis: missing("no benchmark X"), Other: ok(5e6, 90<<20)},
		{Workload: wide, Peer: peerEino, Trellis: ok(3e6, 10<<20), Other: ok(2e6, 20<<20)},
	}
	if g := rows[0].Goal(); g != "met" {
		t.Errorf("100x faster, a tenth of the memory: goal %q, want met", g)
	}
	if g := rows[2].Goal(); !strings.Contains(g, "speed < 50x") || !strings.Contains(g, "memory > 0.2") {
		t.Errorf("10x faster, 0.6 of the memory: goal %q, want both misses", g)
	}
	if g := rows[4].Goal(); g != "not met: slower" {
		t.Errorf("slower than eino: goal %q", g)
	}
	stored := func(ns, bytes float64) Result {
		r := ok(ns, 50<<20)
		r.StoredBytes = bytes
		return r
	}
	pg := Workload{Name: "react_agent_100x", Variant: "postgres"}
	lite := Workload{Name: "react_agent_100x", Variant: "sqlite"}
	saverRows := []Row{
		{Workload: pg, Peer: peerJS, Trellis: stored(1e8, 1e6), Other: stored(4e10, 2.2e7)},
		{Workload: lite, Peer: peerJS, Trellis: stored(1e9, 5e6), Other: stored(4e9, 2e7)},
	}
	saverRows[1].Other.Note = "durability sync, synchronous=FULL"
	// Peak memory plays no part in the savers' goal.
	if g := saverRows[0].Goal(); g != "met" {
		t.Errorf("400x faster, 0.045 of the bytes: goal %q, want met", g)
	}
	if g := saverRows[1].Goal(); !strings.Contains(g, "speed < 10x") || !strings.Contains(g, "bytes/thread > 0.2") {
		t.Errorf("4x faster, 0.25 of the bytes: goal %q, want both misses", g)
	}
	var sbuf bytes.Buffer
	if err := (Report{Rows: saverRows}).WriteMarkdown(&sbuf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sbuf.String(), "| workload | variant | peer |") {
		t.Errorf("a report of saver rows alone prints the empty main table:\n%s", sbuf.String())
	}
	for _, want := range []string{
		"| react_agent_100x | postgres | 100 ms | 40.0 s | 400.0x | 0.95 MiB | 21.0 MiB | 0.045 | met | – |",
		"| react_agent_100x | sqlite | 1.00 s | 4.00 s | 4.0x | 4.77 MiB | 19.1 MiB | 0.250 | not met: speed < 10x, bytes/thread > 0.2 | durability sync, synchronous=FULL |",
	} {
		if !strings.Contains(sbuf.String(), want) {
			t.Errorf("saver report lacks\n%s\n\n%s", want, sbuf.String())
		}
	}
	var buf bytes.Buffer
	rep := Report{Command: "go run ./bench/cmd/compare", Machine: Machine{CPU: "cpu", Cores: 2, OS: "linux/amd64", Go: "go1.26"}, Rows: rows}
	if err := rep.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"| sequential_1000 | nocheckpoint | LangGraph.js | 1.00 ms | 100 ms | 100.0x | 10.0 MiB | 100 MiB | 0.10 | met |",
		"| sequential_1000 | nocheckpoint | eino | 1.00 ms | 2.00 ms | 2.0x |",
		"| react_agent_10x | checkpoint | LangGraph.js | missing | 5.00 ms | – |",
		"- trellis (1 rows): no benchmark X",
		"| LangGraph.js | react_agent_10x/checkpoint | 3 |",
		"Machine: cpu, 2 cores; linux/amd64; go1.26",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	// trellis's sequential_1000 figures appear once in the raw table even
	// though two rows share them.
	if n := strings.Count(md, "| trellis | sequential_1000/nocheckpoint |"); n != 1 {
		t.Errorf("trellis sequential_1000 raw figures appear %d times, want 1", n)
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		ns   float64
		want string
	}{
		{512, "512 ns"}, {1500, "1.50 µs"}, {18652661, "18.7 ms"}, {708353368, "708 ms"}, {2.5e9, "2.50 s"},
	} {
		if got := formatDuration(tc.ns); got != tc.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tc.ns, got, tc.want)
		}
	}
	if got := formatBytes(0); got != "–" {
		t.Errorf("formatBytes(0) = %q", got)
	}
	if got := formatBytes(208338944); got != "199 MiB" {
		t.Errorf("formatBytes = %q, want 199 MiB", got)
	}
}

// setupGoPackage writes a throwaway module with the given test file and
// returns the package directory.
func setupGoPackage(t *testing.T, testFile string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/fakebench\n\ngo 1.25\n")
	writeFile(t, filepath.Join(dir, "fake.go"), "package fakebench\n")
	if testFile != "" {
		writeFile(t, filepath.Join(dir, "fake_test.go"), testFile)
	}
	return dir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGoBench(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command unreachable: not on PATH")
	}
	ctx := context.Background()
	dir := setupGoPackage(t, `package fakebench

import "testing"

var sink []byte

func BenchmarkFake(b *testing.B) {
	b.Run("nocheckpoint", func(b *testing.B) {
		for b.Loop() {
			sink = make([]byte, 1<<20)
		}
	})
	b.Run("checkpoint", func(b *testing.B) { b.Fatal("broken on purpose") })
}

// BenchmarkGrow keeps 1 MiB per iteration, like a saver keeping every
// run's thread.
var kept [][]byte

func BenchmarkGrow(b *testing.B) {
	for b.Loop() {
		m := make([]byte, 1<<20)
		for i := range m {
			m[i] = 1
		}
		kept = append(kept, m)
	}
}
`)
	gb, err := BuildGoBench(ctx, "fake", dir, t.TempDir(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if gb.Binary == "" {
		t.Fatalf("not built: %s", gb.Unavailable)
	}
	opts := GoBenchOptions{Count: 3, Benchtime: "20x"}

	r := gb.Run(ctx, "BenchmarkFake/nocheckpoint", opts)
	if !r.OK() {
		t.Fatalf("BenchmarkFake/nocheckpoint: %s", r.Missing)
	}
	if r.Runs != 3 || r.MedianNs <= 0 || r.BytesPerOp < 1<<20 || r.PeakRSS <= 0 {
		t.Errorf("result %+v: want 3 runs, a positive median, >= 1 MiB/op and a peak RSS", r)
	}

	// Peak RSS from the timing process grows with the iterations; the
	// memory process runs a fixed few.
	grow := gb.Run(ctx, "BenchmarkGrow", GoBenchOptions{Count: 1, Benchtime: "100x"})
	fixed := gb.Run(ctx, "BenchmarkGrow", GoBenchOptions{Count: 1, Benchtime: "100x", MemRuns: 2})
	if !grow.OK() || !fixed.OK() {
		t.Fatalf("BenchmarkGrow: %q, %q", grow.Missing, fixed.Missing)
	}
	if grow.PeakRSS < 100<<20 || fixed.PeakRSS > 50<<20 {
		t.Errorf("peak RSS %d MiB from the timing process (want >= 100), %d MiB from the memory process (want <= 50)",
			grow.PeakRSS>>20, fixed.PeakRSS>>20)
	}

	if r := gb.Run(ctx, "BenchmarkFake/checkpoint", opts); r.OK() || !strings.Contains(r.Missing, "failed") {
		t.Errorf("failing benchmark: %+v, want a missing result saying it failed", r)
	}
	if r := gb.Run(ctx, "BenchmarkAbsent/nocheckpoint", opts); r.OK() || !strings.Contains(r.Missing, "no benchmark BenchmarkAbsent/nocheckpoint") {
		t.Errorf("absent benchmark: %+v, want a missing result naming it", r)
	}
}

func TestGoBenchUnavailable(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command unreachable: not on PATH")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name, dir, want string
	}{
		{"no such dir", filepath.Join(t.TempDir(), "bench"), "no *_test.go files"},
		{"no tests", setupGoPackage(t, ""), "no *_test.go files"},
		{"does not build", setupGoPackage(t, "package fakebench\n\nfunc broken( {}\n"), "does not build"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gb, err := BuildGoBench(ctx, "fake", tc.dir, t.TempDir(), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			r := gb.Run(ctx, "BenchmarkX/nocheckpoint", GoBenchOptions{Count: 1})
			if r.OK() || !strings.Contains(r.Missing, tc.want) {
				t.Errorf("result %+v, want missing with %q", r, tc.want)
			}
		})
	}
}

// fakeRunMJS prints a result line for whatever it is asked, or fails for
// the workload "broken".
const fakeRunMJS = `
const a = process.argv.slice(2);
const get = (k) => a[a.indexOf(k) + 1];
if (get("--workload") === "broken") { console.error("boom"); process.exit(3); }
const buf = Buffer.alloc(8 << 20, 1);
console.log(JSON.stringify({peer: "langgraphjs", version: "0", workload: get("--workload"),
  variant: get("--variant"), runs: Number(get("--runs")), median_ns: 42, min_ns: 40, max_ns: 50,
  events: buf[0], peak_rss_bytes: 1}));
`

func setupJSPeer(t *testing.T, withModules bool) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node unreachable: not on PATH")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "run.mjs"), fakeRunMJS)
	writeFile(t, filepath.Join(dir, "package.json"), `{"name":"fake-peer","version":"0.0.0","private":true}`)
	writeFile(t, filepath.Join(dir, "package-lock.json"), `{"name":"fake-peer","version":"0.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"fake-peer","version":"0.0.0"}}}`)
	if withModules {
		if err := os.Mkdir(filepath.Join(dir, "node_modules"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestJSPeer(t *testing.T) {
	ctx := context.Background()
	dir := setupJSPeer(t, true)
	p, err := PrepareJSPeer(ctx, dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if p.Node == "" {
		t.Fatalf("unavailable: %s", p.Unavailable)
	}
	w := Workload{Name: "sequential_10", Variant: "checkpoint"}
	r := p.Run(ctx, w, JSOptions{Runs: 4, Budget: 1, MinTime: 0.1})
	if !r.OK() || r.Runs != 4 || r.MedianNs != 42 {
		t.Fatalf("result %+v, want 4 runs with median 42", r)
	}
	// The peak RSS comes from the kernel, not from the peer's own line (1),
	// and covers the 8 MiB buffer.
	if r.PeakRSS < 8<<20 {
		t.Errorf("peak RSS %d, want the child's rusage (more than 8 MiB)", r.PeakRSS)
	}
	r = p.Run(ctx, Workload{Name: "broken", Variant: "nocheckpoint"}, JSOptions{Runs: 1, Budget: 1})
	if r.OK() || !strings.Contains(r.Missing, "boom") {
		t.Errorf("failing workload: %+v, want missing with the child's stderr", r)
	}
}

func TestJSPeerInstallsWithNpmCI(t *testing.T) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm unreachable: not on PATH")
	}
	dir := setupJSPeer(t, false)
	// A local dependency, so that npm ci has something to install without
	// any registry.
	if err := os.Mkdir(filepath.Join(dir, "dep"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "dep", "package.json"), `{"name":"local-dep","version":"1.0.0"}`)
	writeFile(t, filepath.Join(dir, "package.json"), `{"name":"fake-peer","version":"0.0.0","private":true,"dependencies":{"local-dep":"file:./dep"}}`)
	lock := exec.Command(npm, "install", "--package-lock-only", "--offline", "--no-audit", "--no-fund")
	lock.Dir = dir
	if out, err := lock.CombinedOutput(); err != nil {
		t.Fatalf("making the lock file: %v\n%s", err, out)
	}

	p, err := PrepareJSPeer(context.Background(), dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if p.Node == "" {
		t.Fatalf("unavailable: %s", p.Unavailable)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "local-dep", "package.json")); err != nil {
		t.Errorf("npm ci did not install the dependency: %v", err)
	}
}

func TestJSPeerUnavailable(t *testing.T) {
	p, err := PrepareJSPeer(context.Background(), t.TempDir(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	r := p.Run(context.Background(), Workload{Name: "sequential_10", Variant: "checkpoint"}, JSOptions{Runs: 1, Budget: 1})
	if r.OK() || !strings.Contains(r.Missing, "no run.mjs") {
		t.Errorf("result %+v, want missing saying there is no run.mjs", r)
	}
}

// With no trellis benchmarks and no peers, Run still prints a report that
// says what is missing, and writes it to -out.
func TestRunReportsMissingTrellis(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command unreachable: not on PATH")
	}
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "go.mod"), "module "+modulePath+"\n\ngo 1.25\n")
	out := filepath.Join(t.TempDir(), "report.md")
	var stdout bytes.Buffer
	err := Run(context.Background(), []string{"-root", root, "-peers", "", "-filter", "^sequential_10/", "-out", out}, &stdout, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	md := stdout.String()
	if !strings.Contains(md, "| sequential_10 | checkpoint | – | missing | missing |") ||
		!strings.Contains(md, "no *_test.go files in "+filepath.Join(root, "bench")) {
		t.Errorf("report:\n%s", md)
	}
	file, err := os.ReadFile(out)
	if err != nil || string(file) != md {
		t.Errorf("-out file differs from stdout (err %v)", err)
	}
}

func TestRunList(t *testing.T) {
	var stdout bytes.Buffer
	if err := Run(context.Background(), []string{"-root", t.TempDir(), "-list", "-filter", "static"}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(stdout.String(), "BenchmarkStaticFanout100/"); got != 3 {
		t.Errorf("-list -filter static printed %d benchmark references, want 3 (two rows, one eino):\n%s", got, stdout.String())
	}
}

func TestRowRatios(t *testing.T) {
	r := Row{Trellis: Result{Runs: 1, MedianNs: 2, PeakRSS: 5}, Other: Result{Runs: 1, MedianNs: 100, PeakRSS: 50}}
	if s := r.Speedup(); math.Abs(s-50) > 1e-9 {
		t.Errorf("Speedup = %v, want 50", s)
	}
	if m := r.MemoryRatio(); math.Abs(m-0.1) > 1e-9 {
		t.Errorf("MemoryRatio = %v, want 0.1", m)
	}
	r.Other = missing("x")
	if r.Speedup() != 0 || r.MemoryRatio() != 0 || r.Goal() != "–" {
		t.Errorf("missing peer: speed-up %v, memory %v, goal %q", r.Speedup(), r.MemoryRatio(), r.Goal())
	}
}

func TestCommandLine(t *testing.T) {
	got := commandLine([]string{"-peers", "", "-filter", "sequential|wide", "-runs", "3", "-filter", "it's"})
	want := `go run ./bench/cmd/compare -peers '' -filter 'sequential|wide' -runs 3 -filter 'it'\''s'`
	if got != want {
		t.Errorf("commandLine =\n %s\nwant\n %s", got, want)
	}
}
