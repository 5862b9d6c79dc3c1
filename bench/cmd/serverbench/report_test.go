package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/bench/serverbench"
)

func TestParseCounts(t *testing.T) {
	got, err := parseCounts("500, 2000")
	if err != nil || !slices.Equal(got, []int{500, 2000}) {
		t.Fatalf("parseCounts(500, 2000) = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "-5", "500,x", "500,500"} {
		if _, err := parseCounts(bad); err == nil {
			t.Errorf("parseCounts(%q) passed", bad)
		}
	}
}

func TestWants(t *testing.T) {
	o := options{only: "streams,postgres"}
	for what, want := range map[string]bool{"trellis-streams": true, "langgraphjs-streams": true, "postgres": true, "sqlite": false, "langgraphjs": false} {
		if o.wants(what) != want {
			t.Errorf("-only %s: wants(%s) = %v", o.only, what, !want)
		}
	}
}

func TestRunsGoal(t *testing.T) {
	res := func(perSecond float64, p99 time.Duration) *serverbench.RunsResult {
		return &serverbench.RunsResult{PerSecond: perSecond, P99: p99}
	}
	for _, c := range []struct {
		name    string
		res     *serverbench.RunsResult
		clients int
		want    string
	}{
		{"trellis, SQLite", res(700, 20*time.Millisecond), 8, ": met"},
		{"trellis, SQLite", res(600, 20*time.Millisecond), 8, "**missed** (46.2x)"},
		{"trellis, SQLite", res(700, 30*time.Millisecond), 8, "**missed** (p99 30.00 ms)"},
		{"trellis, Postgres", res(330, 49*time.Millisecond), 8, ": met"},
		{"trellis, Postgres", res(300, 60*time.Millisecond), 8, "**missed** (23.1x, p99 60.00 ms)"},
		{"trellis, SQLite", res(700, 20*time.Millisecond), 4, "not judged"},
	} {
		if got := runsGoal(c.name, c.res, 13, c.clients); !strings.Contains(got, c.want) {
			t.Errorf("runsGoal(%s, %v/s, p99 %s, %d clients) = %q, want it to say %q", c.name, c.res.PerSecond, c.res.P99, c.clients, got, c.want)
		}
	}
}

func TestStreamsVerdict(t *testing.T) {
	at := func(p99 time.Duration, heap float64) *streamOutcome {
		return &streamOutcome{res: &serverbench.StreamResult{P99: p99, HeapPerStream: heap}}
	}
	for _, c := range []struct {
		streams []streamsAt
		want    string
	}{
		{[]streamsAt{{n: 2000, trellis: at(20*time.Millisecond, 40000), peer: at(300*time.Millisecond, 300000)}}, ": **met** (p99 20.00 ms against 300.00 ms, 15.0x lower"},
		{[]streamsAt{{n: 2000, trellis: at(40*time.Millisecond, 40000), peer: at(300*time.Millisecond, 300000)}}, "**missed** (p99 40.00 ms against 300.00 ms, 7.5x lower)"},
		{[]streamsAt{{n: 2000, trellis: at(20*time.Millisecond, 52000), peer: at(300*time.Millisecond, 300000)}}, "**missed** (live heap 52.0 KB per idle stream)"},
		{[]streamsAt{{n: 500, trellis: at(20*time.Millisecond, 40000), peer: at(300*time.Millisecond, 300000)}}, "not judged (-streams has no 2000)"},
		{[]streamsAt{{n: 2000, trellis: &streamOutcome{err: errFake}, peer: at(300*time.Millisecond, 300000)}}, "not judged (no trellis figure"},
		{[]streamsAt{{n: 2000, trellis: at(20*time.Millisecond, 40000), peer: &streamOutcome{skip: "no node"}}}, "p99 not judged (the LangGraph.js API server's streams skipped)"},
	} {
		r := &report{streams: c.streams}
		if got := r.streamsVerdict(); !strings.Contains(got, c.want) {
			t.Errorf("verdict %q, want it to say %q", got, c.want)
		}
	}
}

var errFake = errors.New("failed")
