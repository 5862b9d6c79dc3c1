package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/trellis-go/trellis/bench/serverbench"
)

type namedRuns struct {
	name string
	runsOutcome
}

// report collects the measurements and prints them as Markdown.
type report struct {
	o           options
	machineLine string
	streams     []streamsAt
	runs        []namedRuns
}

func (r *report) machine() {
	cpu := "?"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	r.machineLine = fmt.Sprintf("%d cores (%s), %s, %s/%s; load average at start %s", runtime.NumCPU(), cpu, runtime.Version(), runtime.GOOS, runtime.GOARCH, loadavg())
}

func (r *report) add(name string, o runsOutcome) { r.runs = append(r.runs, namedRuns{name, o}) }

func (r *report) err() error {
	var errs []error
	for _, sz := range r.streams {
		for _, side := range []struct {
			name string
			out  *streamOutcome
		}{{"trellis", sz.trellis}, {"LangGraph.js API", sz.peer}} {
			if side.out != nil && side.out.err != nil {
				errs = append(errs, fmt.Errorf("%s, %d streams: %w", side.name, sz.n, side.out.err))
			}
		}
	}
	for _, n := range r.runs {
		if n.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.name, n.err))
		}
	}
	return errors.Join(errs...)
}

func kb(b float64) string { return fmt.Sprintf("%.1f KB", b/1000) }

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func (r *report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Machine: %s\n", r.machineLine)
	o := r.o
	if len(r.streams) > 0 {
		r.writeStreams(&b)
	}
	if len(r.runs) > 0 {
		fmt.Fprintf(&b, "\n### Short runs per second\n\nPOST /runs/wait of the two-node graph \"short\" from %d clients, %s warm-up, %s timed; each server in its own process.\n\n", o.clients, o.warmup, o.duration)
		fmt.Fprintf(&b, "| server | runs/s | p50 | p99 | vs LangGraph.js | goal (issue 37, at 8 clients) | memory after | load avg before → after |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
		var peer float64
		for _, n := range r.runs {
			if n.name == peerName && n.res != nil {
				peer = n.res.PerSecond
			}
		}
		for _, n := range r.runs {
			switch {
			case n.skip != "":
				fmt.Fprintf(&b, "| %s | skipped: %s | | | | | | |\n", n.name, n.skip)
			case n.res == nil:
				fmt.Fprintf(&b, "| %s | FAILED: %v | | | | | | |\n", n.name, n.err)
			default:
				ratio, goal := "", ""
				if n.name != peerName {
					if peer > 0 {
						ratio = fmt.Sprintf("%.1fx", n.res.PerSecond/peer)
					}
					goal = runsGoal(n.name, n.res, peer, o.clients)
				}
				mem := "not measured"
				if n.after != nil {
					mem = fmt.Sprintf("goroutines %d → %d, heap %s → %s", n.base.Goroutines, n.after.Goroutines, serverbench.MiB(n.base.HeapAlloc), serverbench.MiB(n.after.HeapAlloc))
					if n.err != nil {
						mem += " (NOT back: " + n.err.Error() + ")"
					}
				}
				fmt.Fprintf(&b, "| %s | %.0f | %s | %s | %s | %s | %s | %s → %s |\n", n.name, n.res.PerSecond, ms(n.res.P50), ms(n.res.P99), ratio, goal, mem, n.load[0], n.load[1])
			}
		}
	}
	return b.String()
}

// The goals of issue 37 for short runs: runs per second against the LangGraph.js API server's
// and p99, at 8 clients.
var runsGoals = map[string]struct {
	ratio float64
	p99   time.Duration
}{
	"trellis, SQLite":   {50, 30 * time.Millisecond},
	"trellis, Postgres": {25, 50 * time.Millisecond},
}

// runsGoal judges one trellis server's runs against its goal.
func runsGoal(name string, res *serverbench.RunsResult, peer float64, clients int) string {
	g, ok := runsGoals[name]
	if !ok {
		return ""
	}
	want := fmt.Sprintf("≥ %.0fx, p99 < %.0f ms", g.ratio, float64(g.p99)/float64(time.Millisecond))
	if clients != 8 {
		return fmt.Sprintf("%s: not judged (the goal is at 8 clients, this ran %d)", want, clients)
	}
	if peer <= 0 {
		return want + ": not judged (no LangGraph.js figure in this run)"
	}
	var missed []string
	if res.PerSecond < g.ratio*peer {
		missed = append(missed, fmt.Sprintf("%.1fx", res.PerSecond/peer))
	}
	if res.P99 >= g.p99 {
		missed = append(missed, "p99 "+ms(res.P99))
	}
	if len(missed) > 0 {
		return fmt.Sprintf("%s: **missed** (%s)", want, strings.Join(missed, ", "))
	}
	return want + ": met"
}

// writeStreams writes the streams' tables, one per size with both servers side by side, and
// the goal's verdict.
func (r *report) writeStreams(b *strings.Builder) {
	o := r.o
	fmt.Fprintf(b, "\n### Concurrent streams\n\nA ReAct agent without tools whose paced model streams %d tokens, one per %s, paused idle after %d tokens until every stream is open; stream_mode %s over SSE; each server in its own process, the load from this one. trellis: %s, runs in memory; LangGraph.js: its API server in memory, a run worker per stream.\n",
		o.tokens, o.interval, o.pause, o.mode, o.streamsDB)
	for _, sz := range r.streams {
		fmt.Fprintf(b, "\n#### %d streams\n\n| figure | trellis | %s |\n| --- | --- | --- |\n", sz.n, peerName)
		row := func(figure string, cell func(*streamOutcome) string) {
			fmt.Fprintf(b, "| %s | %s | %s |\n", figure, streamCell(sz.trellis, cell), streamCell(sz.peer, cell))
		}
		res := func(f func(*serverbench.StreamResult) string) func(*streamOutcome) string {
			return func(out *streamOutcome) string { return f(out.res) }
		}
		row("all open and idle after", res(func(s *serverbench.StreamResult) string { return s.Open.Round(time.Millisecond).String() }))
		row("tokens delivered, every one in order", res(func(s *serverbench.StreamResult) string { return fmt.Sprintf("%d: yes", s.Tokens) }))
		row("latency added per token p50 / p90 / p99 / max", res(func(s *serverbench.StreamResult) string {
			return fmt.Sprintf("%s / %s / %s / %s", ms(s.P50), ms(s.P90), ms(s.P99), ms(s.Max))
		}))
		row("of them, before the gate (streams opening)", res(func(s *serverbench.StreamResult) string { return quartet(s.Opening) }))
		row("of them, after the gate (all open)", res(func(s *serverbench.StreamResult) string { return quartet(s.Flowing) }))
		row("memory per idle stream: live heap / RSS", res(func(s *serverbench.StreamResult) string {
			return fmt.Sprintf("%s / %s", kb(s.HeapPerStream), kb(s.RSSPerStream))
		}))
		fmt.Fprintf(b, "| goroutines per idle stream (their stacks) | %s | |\n", streamCell(sz.trellis, res(func(s *serverbench.StreamResult) string {
			return fmt.Sprintf("%.1f (%s; a new stack starts at %s)", s.GoroutinesPerStream, kb(s.StackPerStream), kb(float64(s.Idle.StackStart)))
		})))
		row("after the gate: CPU per token, server / clients", res(func(s *serverbench.StreamResult) string {
			return fmt.Sprintf("%.1f µs / %.1f µs (%d tokens in %s; server %.2f cores, clients %.2f)", us(s.HostCPUPerToken()), us(s.ClientCPUPerToken()),
				s.FlowTokens, s.Flow.Round(time.Millisecond), float64(s.HostCPU)/float64(max(s.Flow, 1)), float64(s.ClientCPU)/float64(max(s.Flow, 1)))
		}))
		row("server before / idle / after: live heap", res(func(s *serverbench.StreamResult) string {
			return fmt.Sprintf("%s / %s / %s", serverbench.MiB(s.Base.HeapAlloc), serverbench.MiB(s.Idle.HeapAlloc), serverbench.MiB(s.After.HeapAlloc))
		}))
		row("server before / idle / after: RSS", res(func(s *serverbench.StreamResult) string {
			return fmt.Sprintf("%s / %s / %s", serverbench.MiB(s.Base.RSS), serverbench.MiB(s.Idle.RSS), serverbench.MiB(s.After.RSS))
		}))
		fmt.Fprintf(b, "| server before / idle / after: goroutines | %s | |\n", streamCell(sz.trellis, res(func(s *serverbench.StreamResult) string {
			return fmt.Sprintf("%d / %d / %d (back to baseline)", s.Base.Goroutines, s.Idle.Goroutines, s.After.Goroutines)
		})))
		row("load average before → after", func(out *streamOutcome) string { return out.load[0] + " → " + out.load[1] })
		for _, side := range []struct {
			name string
			out  *streamOutcome
		}{{"trellis", sz.trellis}, {peerName, sz.peer}} {
			switch {
			case side.out == nil:
			case side.out.skip != "":
				fmt.Fprintf(b, "\n%s: skipped: %s\n", side.name, side.out.skip)
			case side.out.err != nil:
				fmt.Fprintf(b, "\n%s: FAILED: %v\n", side.name, side.out.err)
			}
		}
	}
	fmt.Fprintf(b, "\n%s\n", r.streamsVerdict())
}

// streamCell renders one server's figure: the value, or why there is none (said in full under
// the table).
func streamCell(out *streamOutcome, cell func(*streamOutcome) string) string {
	switch {
	case out == nil:
		return "not measured"
	case out.skip != "":
		return "skipped"
	case out.res == nil:
		return "FAILED"
	}
	return cell(out)
}

func quartet(p [4]time.Duration) string {
	return fmt.Sprintf("%s / %s / %s / %s", ms(p[0]), ms(p[1]), ms(p[2]), ms(p[3]))
}

// The goal of issue 37 for streams: at goalStreams streams, trellis's p99 per token at most a
// tenth of the LangGraph.js API server's, every token in order, under goalHeap bytes of live
// heap per idle stream.
const (
	goalStreams = 2000
	goalHeap    = 50000
)

// streamsVerdict judges the streams against the goal.
func (r *report) streamsVerdict() string {
	const goal = "Goal (issue 37): at 2,000 streams trellis's p99 per token is at most a tenth of the LangGraph.js API server's, every token in order, under 50 KB of live heap per idle stream"
	var at *streamsAt
	for i := range r.streams {
		if r.streams[i].n == goalStreams {
			at = &r.streams[i]
		}
	}
	if at == nil {
		return goal + ": not judged (-streams has no 2000)."
	}
	t, p := at.trellis, at.peer
	if t == nil || t.res == nil {
		return goal + ": not judged (no trellis figure at 2,000 streams)."
	}
	var missed []string
	// RunStreams fails a measurement in which a token is missing or out of order, so a result
	// means every token arrived in order.
	if t.res.HeapPerStream >= goalHeap {
		missed = append(missed, fmt.Sprintf("live heap %s per idle stream", kb(t.res.HeapPerStream)))
	}
	if p == nil || p.res == nil {
		why := "not measured"
		if p != nil && p.skip != "" {
			why = "skipped"
		} else if p != nil {
			why = "failed"
		}
		return fmt.Sprintf("%s: p99 not judged (the LangGraph.js API server's streams %s); every token in order: yes; %s of live heap per idle stream: %s.", goal, why, kb(t.res.HeapPerStream), verdictWord(len(missed) == 0))
	}
	ratio := float64(p.res.P99) / float64(max(t.res.P99, 1))
	if t.res.P99*10 > p.res.P99 {
		missed = append(missed, fmt.Sprintf("p99 %s against %s, %.1fx lower", ms(t.res.P99), ms(p.res.P99), ratio))
	}
	if len(missed) > 0 {
		return fmt.Sprintf("%s: **missed** (%s).", goal, strings.Join(missed, "; "))
	}
	return fmt.Sprintf("%s: **met** (p99 %s against %s, %.1fx lower; every token in order; %s of live heap per idle stream).", goal, ms(t.res.P99), ms(p.res.P99), ratio, kb(t.res.HeapPerStream))
}

func verdictWord(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}
