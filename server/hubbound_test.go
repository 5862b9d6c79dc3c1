package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The event logs kept in memory are bounded in bytes: past the bound, the logs of the runs
// that finished first go first; running runs' logs count but stay.
func TestHubBoundsEventLogBytes(t *testing.T) {
	h := newHub(time.Hour, 1000)
	data := json.RawMessage(`"` + strings.Repeat("x", 390) + `"`)
	running := h.open("running")
	running.append("values", data)
	for _, id := range []string{"a", "b", "c"} {
		l := h.open(id)
		l.append("values", data)
		l.close()
	}
	if got := h.bytes.Load(); got > 1000 {
		t.Fatalf("logs hold %d bytes, past the bound of 1000", got)
	}
	if h.get("a") != nil || h.get("b") != nil || h.get("c") == nil || h.get("running") == nil {
		t.Fatalf("after the bound: a %v b %v c %v running %v (want the first finished gone)", h.get("a") != nil, h.get("b") != nil, h.get("c") != nil, h.get("running") != nil)
	}
	// A running log past the bound on its own stays; the finished ones make room.
	for range 5 {
		running.append("values", data)
	}
	h.open("d").close()
	if h.get("running") == nil || h.get("c") != nil {
		t.Fatalf("a running log was dropped, or a finished one kept past the bound")
	}
	// Dropped logs give their bytes back.
	running.close()
	h.drop("running")
	h.drop("d")
	if got := h.bytes.Load(); got != 0 {
		t.Fatalf("empty hub counts %d bytes", got)
	}
}

// Runs with large inputs do not hold more than Config.EventLogBytes of events in memory once
// they finish; a resumable run whose log was dropped is still joined from the database.
func TestEventLogBytesBoundThroughTheServer(t *testing.T) {
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
	if got := b.srv.hub.bytes.Load(); got > 256<<10 {
		t.Fatalf("finished runs' logs hold %d bytes, past the bound of %d", got, 256<<10)
	}
	if b.srv.hub.evicted.Load() == 0 {
		t.Fatal("no log was dropped for the bound")
	}
	_, evs := b.stream("GET", first+"/stream", nil, nil, nil)
	if n := len(evs); n < 3 || evs[len(evs)-1].Event != "end" {
		t.Fatalf("joining a dropped resumable run's stream: %v", names(evs))
	}
}
