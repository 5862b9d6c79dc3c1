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
	streams     *serverbench.StreamResult
	streamsErr  error
	streamsLoad [2]string
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
	if r.streamsErr != nil {
		errs = append(errs, fmt.Errorf("streams: %w", r.streamsErr))
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
	if o.wants("streams") {
		fmt.Fprintf(&b, "\n### Concurrent streams\n\n%d streams, %d tokens each at one per %s, stream_mode %s, paused idle after %d tokens; server in its own process (%s, runs in memory), load from this one. Load average %s before, %s after.\n\n",
			o.streams, o.tokens, o.interval, o.mode, o.pause, o.streamsDB, r.streamsLoad[0], r.streamsLoad[1])
		if s := r.streams; s != nil {
			goalLat := "meets the goal (< 5 ms)"
			if s.P99 >= 5*time.Millisecond {
				goalLat = "misses the goal (< 5 ms)"
			}
			goalMem := "meets the goal (< 50 KB)"
			if s.HeapPerStream >= 50000 || s.RSSPerStream >= 50000 {
				goalMem = "misses the goal (< 50 KB)"
			}
			fmt.Fprintf(&b, "| figure | value | |\n| --- | --- | --- |\n")
			fmt.Fprintf(&b, "| streams open at once | %d (all open and idle %s after the first request) | |\n", s.Streams, s.Open.Round(time.Millisecond))
			fmt.Fprintf(&b, "| tokens delivered, in order | %d | |\n", s.Tokens)
			fmt.Fprintf(&b, "| latency added per token p50 / p90 / p99 / max | %s / %s / %s / %s | p99 %s |\n", ms(s.P50), ms(s.P90), ms(s.P99), ms(s.Max), goalLat)
			for _, part := range []struct {
				name string
				p    [4]time.Duration
			}{{"tokens before the gate (streams opening)", s.Opening}, {"tokens after the gate (all open)", s.Flowing}} {
				fmt.Fprintf(&b, "| of them, %s | %s / %s / %s / %s | |\n", part.name, ms(part.p[0]), ms(part.p[1]), ms(part.p[2]), ms(part.p[3]))
			}
			fmt.Fprintf(&b, "| server memory per idle stream: live heap / RSS | %s / %s | %s |\n", kb(s.HeapPerStream), kb(s.RSSPerStream), goalMem)
			fmt.Fprintf(&b, "| server goroutines per idle stream (their stacks) | %.1f (%s; a new stack starts at %s) | |\n", s.GoroutinesPerStream, kb(s.StackPerStream), kb(float64(s.Idle.StackStart)))
			fmt.Fprintf(&b, "| after the gate: %d tokens in %s; CPU per token: server / clients | %.1f µs / %.1f µs | server %.2f cores, clients %.2f |\n",
				s.FlowTokens, s.Flow.Round(time.Millisecond), us(s.HostCPUPerToken()), us(s.ClientCPUPerToken()),
				float64(s.HostCPU)/float64(max(s.Flow, 1)), float64(s.ClientCPU)/float64(max(s.Flow, 1)))
			fmt.Fprintf(&b, "| server before / idle / after: goroutines | %d / %d / %d | back to baseline |\n", s.Base.Goroutines, s.Idle.Goroutines, s.After.Goroutines)
			fmt.Fprintf(&b, "| server before / idle / after: live heap | %s / %s / %s | |\n", serverbench.MiB(s.Base.HeapAlloc), serverbench.MiB(s.Idle.HeapAlloc), serverbench.MiB(s.After.HeapAlloc))
			fmt.Fprintf(&b, "| server before / idle / after: RSS | %s / %s / %s | |\n", serverbench.MiB(s.Base.RSS), serverbench.MiB(s.Idle.RSS), serverbench.MiB(s.After.RSS))
		}
		if r.streamsErr != nil {
			fmt.Fprintf(&b, "\nFAILED: %v\n", r.streamsErr)
		}
	}
	if len(r.runs) > 0 {
		fmt.Fprintf(&b, "\n### Short runs per second\n\nPOST /runs/wait of the two-node graph \"short\" from %d clients, %s warm-up, %s timed; each server in its own process.\n\n", o.clients, o.warmup, o.duration)
		fmt.Fprintf(&b, "| server | runs/s | p50 | p99 | vs LangGraph.js | memory after | load avg before → after |\n| --- | --- | --- | --- | --- | --- | --- |\n")
		var peer float64
		for _, n := range r.runs {
			if strings.HasPrefix(n.name, "LangGraph.js") && n.res != nil {
				peer = n.res.PerSecond
			}
		}
		for _, n := range r.runs {
			switch {
			case n.skip != "":
				fmt.Fprintf(&b, "| %s | skipped: %s | | | | | |\n", n.name, n.skip)
			case n.res == nil:
				fmt.Fprintf(&b, "| %s | FAILED: %v | | | | | |\n", n.name, n.err)
			default:
				ratio := ""
				if peer > 0 && !strings.HasPrefix(n.name, "LangGraph.js") {
					goal := "meets the goal (≥ 10x)"
					if n.res.PerSecond < 10*peer {
						goal = "misses the goal (≥ 10x)"
					}
					ratio = fmt.Sprintf("%.1fx, %s", n.res.PerSecond/peer, goal)
				}
				mem := "not measured"
				if n.after != nil {
					mem = fmt.Sprintf("goroutines %d → %d, heap %s → %s", n.base.Goroutines, n.after.Goroutines, serverbench.MiB(n.base.HeapAlloc), serverbench.MiB(n.after.HeapAlloc))
					if n.err != nil {
						mem += " (NOT back: " + n.err.Error() + ")"
					}
				}
				fmt.Fprintf(&b, "| %s | %.0f | %s | %s | %s | %s | %s → %s |\n", n.name, n.res.PerSecond, ms(n.res.P50), ms(n.res.P99), ratio, mem, n.load[0], n.load[1])
			}
		}
	}
	return b.String()
}
