package server

import (
	"strings"
	"testing"
)

// Runs with large inputs do not hold more than Config.EventLogBytes of events in memory once
// they finish; a resumable run whose log was dropped is still joined from the database.
func TestEventLogBytesBoundThroughTheServer(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: Config{EventLogBytes: 256 << 10}})
	big := strings.Repeat("y", 100<<10)
	var first string
	for i := range 8 {
		tid := b.newThread(nil)
		var run Run
		b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": big}, "interrupt_before": []string{"approve"},
			"stream_mode": []string{"values", "updates"}, "stream_resumable": true}, &run, 200)
		b.mustDo("GET", "/threads/"+tid+"/runs/"+run.RunID+"/join", nil, nil, 200)
		if i == 0 {
			first = "/threads/" + tid + "/runs/" + run.RunID
		}
	}
	if got := b.srv.hub.Bytes(); got > 256<<10 {
		t.Fatalf("finished runs' logs hold %d bytes, past the bound of %d", got, 256<<10)
	}
	if b.srv.hub.Evicted() == 0 {
		t.Fatal("no log was dropped for the bound")
	}
	_, evs := b.stream("GET", first+"/stream", nil, nil, nil)
	if n := len(evs); n < 3 || evs[len(evs)-1].Event != "end" {
		t.Fatalf("joining a dropped resumable run's stream: %v", names(evs))
	}
}
