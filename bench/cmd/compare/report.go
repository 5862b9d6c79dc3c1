package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
)

// The goals of the issue: against LangGraph.js, at least 50 times faster
// with at most a fifth of its peak memory; against eino, faster.
const (
	goalSpeedupJS   = 50.0
	goalMemoryJS    = 0.2
	goalSpeedupEino = 1.0
)

// The goals of the durable savers against LangGraph.js's (issue 3): at
// least 10 times faster, with at most a fifth of the bytes stored per
// thread.
const (
	goalSpeedupSaver = 10.0
	goalStoredSaver  = 0.2
)

// Peer names as the report shows them.
const (
	peerJS   = "LangGraph.js"
	peerEino = "eino"
)

// Row is one line of the comparison table.
type Row struct {
	Workload Workload
	Peer     string
	Trellis  Result
	Other    Result
}

// Speedup is how many times faster trellis is than the peer, or 0.
func (r Row) Speedup() float64 {
	if !r.Trellis.OK() || !r.Other.OK() || r.Trellis.MedianNs <= 0 {
		return 0
	}
	return r.Other.MedianNs / r.Trellis.MedianNs
}

// MemoryRatio is trellis's peak RSS over the peer's, or 0.
func (r Row) MemoryRatio() float64 {
	if !r.Trellis.OK() || !r.Other.OK() || r.Other.PeakRSS <= 0 || r.Trellis.PeakRSS <= 0 {
		return 0
	}
	return float64(r.Trellis.PeakRSS) / float64(r.Other.PeakRSS)
}

// StoredRatio is trellis's bytes stored per thread over the peer's, or 0.
func (r Row) StoredRatio() float64 {
	if !r.Trellis.OK() || !r.Other.OK() || r.Trellis.StoredBytes <= 0 || r.Other.StoredBytes <= 0 {
		return 0
	}
	return r.Trellis.StoredBytes / r.Other.StoredBytes
}

// Goal says whether the row meets the goal for its peer.
func (r Row) Goal() string {
	s, m := r.Speedup(), r.MemoryRatio()
	if s == 0 {
		return "–"
	}
	var miss []string
	switch {
	case r.Workload.Saver():
		if s < goalSpeedupSaver {
			miss = append(miss, fmt.Sprintf("speed < %gx", goalSpeedupSaver))
		}
		if st := r.StoredRatio(); st == 0 || st > goalStoredSaver {
			miss = append(miss, fmt.Sprintf("bytes/thread > %g", goalStoredSaver))
		}
	case r.Peer == peerJS:
		if s < goalSpeedupJS {
			miss = append(miss, fmt.Sprintf("speed < %gx", goalSpeedupJS))
		}
		if m == 0 || m > goalMemoryJS {
			miss = append(miss, fmt.Sprintf("memory > %g", goalMemoryJS))
		}
	case r.Peer == peerEino:
		if s <= goalSpeedupEino {
			miss = append(miss, "slower")
		}
	}
	if len(miss) == 0 {
		return "met"
	}
	return "not met: " + strings.Join(miss, ", ")
}

// Machine describes where the comparison ran.
type Machine struct {
	CPU, OS, Go, Node, LangGraphJS, Eino string
	Cores                                int
	MemoryBytes                          int64
}

// DescribeMachine reads what it can of this machine and of the peers'
// pinned versions; what it cannot read it leaves empty.
func DescribeMachine(root string, node string) Machine {
	m := Machine{
		CPU:   cpuModel(),
		OS:    runtime.GOOS + "/" + runtime.GOARCH,
		Go:    runtime.Version(),
		Node:  node,
		Cores: runtime.NumCPU(),
	}
	m.MemoryBytes = memTotal()
	m.LangGraphJS = findIn(root+"/bench/peers/langgraphjs/package.json", `"@langchain/langgraph":\s*"([^"]+)"`)
	m.Eino = findIn(root+"/bench/peers/eino/go.mod", `github.com/cloudwego/eino (v\S+)`)
	return m
}

func cpuModel() string {
	if s := findIn("/proc/cpuinfo", `(?m)^model name\s*:\s*(.+)$`); s != "" {
		return strings.TrimSpace(s)
	}
	return runtime.GOARCH
}

func memTotal() int64 {
	kb, err := strconv.ParseInt(findIn("/proc/meminfo", `(?m)^MemTotal:\s*(\d+) kB`), 10, 64)
	if err != nil {
		return 0
	}
	return kb * 1024
}

func findIn(path, pattern string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	m := regexp.MustCompile(pattern).FindSubmatch(b)
	if m == nil {
		return ""
	}
	return string(m[1])
}

func (m Machine) String() string {
	parts := []string{fmt.Sprintf("%s, %d cores", m.CPU, m.Cores)}
	if m.MemoryBytes > 0 {
		parts = append(parts, fmt.Sprintf("%.0f GiB", float64(m.MemoryBytes)/(1<<30)))
	}
	parts = append(parts, m.OS, m.Go)
	if m.Node != "" {
		parts = append(parts, "node "+m.Node)
	}
	if m.LangGraphJS != "" {
		parts = append(parts, "@langchain/langgraph "+m.LangGraphJS)
	}
	if m.Eino != "" {
		parts = append(parts, "eino "+m.Eino)
	}
	return strings.Join(parts, "; ")
}

// Report is everything the Markdown shows.
type Report struct {
	Command string
	Date    string
	Machine Machine
	Rows    []Row
}

// WriteMarkdown renders the report: the comparison table, the notes on what
// is missing, and every side's raw figures.
func (rep Report) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }

	p("Command: `%s`  \n", rep.Command)
	p("Machine: %s  \n", rep.Machine)
	if rep.Date != "" {
		p("Date: %s\n", rep.Date)
	}
	p("\n")
	var savers []Row
	header := false
	for _, r := range rep.Rows {
		if r.Workload.Saver() {
			savers = append(savers, r)
			continue
		}
		if !header {
			p("| workload | variant | peer | trellis | peer | speed-up | trellis peak RSS | peer peak RSS | RSS ratio | goal |\n")
			p("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
			header = true
		}
		speed, mem := "–", "–"
		if s := r.Speedup(); s > 0 {
			speed = fmt.Sprintf("%.1fx", s)
		}
		if m := r.MemoryRatio(); m > 0 {
			mem = fmt.Sprintf("%.2f", m)
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.Workload.Name, r.Workload.Variant, r.Peer,
			cellTime(r.Trellis), cellTime(r.Other), speed,
			cellRSS(r.Trellis), cellRSS(r.Other), mem, r.Goal())
	}

	if len(savers) > 0 {
		p("\nDurable savers at durability sync, one new thread per run; bytes/thread is what the last run's thread occupies in the database (goal: %gx faster, at most %g of the bytes):\n\n", goalSpeedupSaver, goalStoredSaver)
		p("| workload | saver | trellis | LangGraph.js | speed-up | trellis bytes/thread | LangGraph.js bytes/thread | bytes ratio | goal | peer settings |\n")
		p("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n")
		for _, r := range savers {
			speed, st := "–", "–"
			if s := r.Speedup(); s > 0 {
				speed = fmt.Sprintf("%.1fx", s)
			}
			if v := r.StoredRatio(); v > 0 {
				st = fmt.Sprintf("%.3f", v)
			}
			p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				r.Workload.Name, r.Workload.Variant, cellTime(r.Trellis), cellTime(r.Other), speed,
				cellStored(r.Trellis), cellStored(r.Other), st, r.Goal(), orDash(r.Other.Note))
		}
	}

	// Why something is missing, once per side and reason.
	type key struct{ side, why string }
	var order []key
	count := map[key]int{}
	for _, r := range rep.Rows {
		for _, s := range []struct {
			side string
			res  Result
		}{{"trellis", r.Trellis}, {r.Peer, r.Other}} {
			if s.res.Missing == "" {
				continue
			}
			k := key{s.side, s.res.Missing}
			if count[k] == 0 {
				order = append(order, k)
			}
			count[k]++
		}
	}
	if len(order) > 0 {
		p("\nMissing measurements:\n\n")
		for _, k := range order {
			p("- %s (%d rows): %s\n", k.side, count[k], k.why)
		}
	}

	p("\nRaw figures (ns per run; B/op and allocs/op from -test.benchmem):\n\n")
	p("| side | workload | runs | min | median | max | B/op | allocs/op | peak RSS |\n")
	p("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	seen := map[string]bool{}
	raw := func(side string, w Workload, r Result) {
		id := side + " " + w.ID()
		if !r.OK() || seen[id] {
			return
		}
		seen[id] = true
		p("| %s | %s | %d | %.0f | %.0f | %.0f | %s | %s | %s |\n",
			side, w.ID(), r.Runs, r.MinNs, r.MedianNs, r.MaxNs,
			optional(r.BytesPerOp), optional(r.AllocsPerOp), formatBytes(r.PeakRSS))
	}
	for _, r := range rep.Rows {
		raw("trellis", r.Workload, r.Trellis)
	}
	for _, r := range rep.Rows {
		raw(r.Peer, r.Workload, r.Other)
	}
	return bw.Flush()
}

func cellTime(r Result) string {
	if !r.OK() {
		return "missing"
	}
	return formatDuration(r.MedianNs)
}

func cellStored(r Result) string {
	if !r.OK() || r.StoredBytes <= 0 {
		return "–"
	}
	return formatBytes(int64(r.StoredBytes))
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func cellRSS(r Result) string {
	if !r.OK() {
		return "–"
	}
	return formatBytes(r.PeakRSS)
}

func optional(v float64) string {
	if v == 0 {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// formatDuration shows nanoseconds with three significant digits in the
// largest unit that keeps the number at least 1.
func formatDuration(ns float64) string {
	switch {
	case ns >= 1e9:
		return sig3(ns/1e9) + " s"
	case ns >= 1e6:
		return sig3(ns/1e6) + " ms"
	case ns >= 1e3:
		return sig3(ns/1e3) + " µs"
	default:
		return sig3(ns) + " ns"
	}
}

func sig3(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

func formatBytes(b int64) string {
	if b <= 0 {
		return "–"
	}
	return sig3(float64(b)/(1<<20)) + " MiB"
}
