package server

import (
	"testing"

	"github.com/trellis-go/trellis/server/internal/engine"
)

// TestEngineReadsKwargs: the engine reads the options it acts on from a run's kwargs as the
// server writes them (RunKwargs and engine.Options name them alike in JSON).
func TestEngineReadsKwargs(t *testing.T) {
	t.Parallel()
	run := &Run{RunID: "r", ThreadID: "t", Kwargs: &RunKwargs{Temporary: true, Resumable: true, Webhook: "http://127.0.0.1:1/hook",
		StartAfter: 1_700_000_000_000, Priority: string(PriorityHigh)}}
	got := engine.RunOf(runRow(run)).Options
	want := engine.Options{Temporary: true, Resumable: true, Webhook: "http://127.0.0.1:1/hook", StartAfter: 1_700_000_000_000, Priority: "high"}
	if got != want {
		t.Fatalf("the engine read %+v from the kwargs, want %+v", got, want)
	}
	if p := engine.RunOf(runRow(&Run{Kwargs: &RunKwargs{}})).Priority; p != string(PriorityNormal) {
		t.Fatalf("a run created without a priority has %q to the engine, want normal", p)
	}
}
