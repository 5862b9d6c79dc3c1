package stream

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The event logs kept in memory are bounded in bytes: past the bound, the logs of the runs
// that finished first go first; running runs' logs count but stay.
func TestHubBoundsEventLogBytes(t *testing.T) {
	h := NewHub(time.Hour, 1000)
	data := json.RawMessage(`"` + strings.Repeat("x", 390) + `"`)
	running := h.Open("running")
	running.Append("values", data)
	for _, id := range []string{"a", "b", "c"} {
		l := h.Open(id)
		l.Append("values", data)
		l.Close()
	}
	if got := h.Bytes(); got > 1000 {
		t.Fatalf("logs hold %d bytes, past the bound of 1000", got)
	}
	if h.Get("a") != nil || h.Get("b") != nil || h.Get("c") == nil || h.Get("running") == nil {
		t.Fatalf("after the bound: a %v b %v c %v running %v (want the first finished gone)", h.Get("a") != nil, h.Get("b") != nil, h.Get("c") != nil, h.Get("running") != nil)
	}
	// A running log past the bound on its own stays; the finished ones make room.
	for range 5 {
		running.Append("values", data)
	}
	h.Open("d").Close()
	if h.Get("running") == nil || h.Get("c") != nil {
		t.Fatalf("a running log was dropped, or a finished one kept past the bound")
	}
	// Dropped logs give their bytes back.
	running.Close()
	h.Drop("running")
	h.Drop("d")
	if got := h.Bytes(); got != 0 {
		t.Fatalf("empty hub counts %d bytes", got)
	}
}

// TestHubDropsEndedLogsAfterRetention checks that a finished run's log stays joinable for the
// retention and goes after it, also when no run starts (sweep, which the runner calls every
// heartbeat), while a running run's log stays.
func TestHubDropsEndedLogsAfterRetention(t *testing.T) {
	h := NewHub(40*time.Millisecond, 0)
	h.Open("ended").Close()
	h.Open("running")
	if h.Get("ended") == nil {
		t.Fatal("a log was dropped before its retention")
	}
	time.Sleep(60 * time.Millisecond) // past the retention and the least gap between sweeps
	h.Sweep()
	if h.Get("ended") != nil {
		t.Error("a log ended past the retention is still kept")
	}
	if h.Get("running") == nil {
		t.Error("a running run's log was dropped")
	}
}
