package engine

import (
	"slices"
	"testing"
)

// TestSlotsKeepOrder: a thread's runs start one at a time in the order they were placed, each
// with its priority; other threads are not held up.
func TestSlotsKeepOrder(t *testing.T) {
	s := NewSlots[int]()
	if !s.Place("t1", "a", 1) || s.Place("t1", "b", 2) || s.Place("t1", "c", 3) {
		t.Fatal("only the first run of a thread is current")
	}
	if !s.Place("t2", "x", 9) {
		t.Fatal("another thread's first run waited")
	}
	if got := s.Unfinished("t1"); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("unfinished %v", got)
	}
	if !s.Scheduled("t1", "c") || s.Scheduled("t1", "x") || !s.Current("t1", "a") || s.Current("t1", "b") {
		t.Fatal("Scheduled or Current is wrong")
	}
	if _, _, ok := s.Release("t1", "b", false); ok {
		t.Fatal("releasing a waiting run moved the line")
	}
	next, p, ok := s.Release("t1", "a", false)
	if !ok || next != "b" || p != 2 {
		t.Fatalf("after a: %q %d %v, want b 2", next, p, ok)
	}
	next, p, ok = s.Release("t1", "b", false)
	if !ok || next != "c" || p != 3 {
		t.Fatalf("after b: %q %d %v, want c 3", next, p, ok)
	}
	if _, _, ok := s.Release("t1", "c", false); ok || s.Busy("t1") || s.Scheduled("t1", "c") {
		t.Fatal("the line did not empty")
	}
	if !s.Busy("t2") {
		t.Fatal("t2 lost its run")
	}
	if len(s.prio) != 1 {
		t.Fatalf("priorities kept for runs gone: %v", s.prio)
	}
}

// TestSlotsEnded: a run marked ended no longer counts as unfinished or busy, but stays current
// until released, so a run placed meanwhile waits for it.
func TestSlotsEnded(t *testing.T) {
	s := NewSlots[int]()
	s.Place("t", "a", 0)
	s.End("t", "b") // not current: nothing
	if !s.Busy("t") {
		t.Fatal("End of another run ended the current one")
	}
	s.End("t", "a")
	if s.Busy("t") || len(s.Unfinished("t")) != 0 || s.HasWaiting("t") {
		t.Fatal("an ended run still counts")
	}
	if s.Place("t", "b", 0) {
		t.Fatal("a run placed behind an ended one started before it was released")
	}
	if !s.Busy("t") || !s.HasWaiting("t") || !slices.Equal(s.Unfinished("t"), []string{"b"}) {
		t.Fatal("the waiting run does not count")
	}
	if next, _, ok := s.Release("t", "a", false); !ok || next != "b" {
		t.Fatalf("release gave %q %v", next, ok)
	}
	if !s.Busy("t") {
		t.Fatal("the next run inherited the ended mark")
	}
}

// TestSlotsUnwaitAndDrop: a waiting run can leave the line; a release while shutting down
// starts nothing and forgets the thread.
func TestSlotsUnwaitAndDrop(t *testing.T) {
	s := NewSlots[int]()
	s.Place("t", "a", 0)
	s.Place("t", "b", 0)
	s.Place("t", "c", 0)
	if s.Unwait("t", "a") || s.Unwait("u", "b") {
		t.Fatal("Unwait took a current run, or one of another thread")
	}
	if !s.Unwait("t", "b") || s.Scheduled("t", "b") {
		t.Fatal("Unwait did not take the waiting run out")
	}
	if _, _, ok := s.Release("t", "a", true); ok {
		t.Fatal("a release while dropping started the next run")
	}
	if s.Scheduled("t", "c") || len(s.prio) != 0 {
		t.Fatalf("dropping kept the line: %v", s.prio)
	}
}
