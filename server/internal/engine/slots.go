package engine

import "slices"

// Slots keeps the runs of each thread in this process in line: one current run per thread,
// which may execute, and the others waiting in the order they were placed. A run's priority, of
// the server's type P, travels with it, so that the next run reaches the queue with its own.
//
// Slots is not safe for concurrent use: the runner's lock guards it with the rest of its state.
type Slots[P any] struct {
	threads map[string]*slot
	prio    map[string]P
}

// slot is one thread's line.
type slot struct {
	current string
	waiting []string
	// ended: the current run's final statuses are written, and it only tidies up (lease, log)
	// before the slot moves on. It no longer counts as unfinished: a client told it finished
	// may start the next run at once.
	ended bool
}

// NewSlots returns empty slots.
func NewSlots[P any]() *Slots[P] {
	return &Slots[P]{threads: map[string]*slot{}, prio: map[string]P{}}
}

// Place puts run at the end of thread's line and reports whether it is the current run, to be
// started now, rather than waiting behind another. Runs must be placed in the order they are to
// execute.
func (s *Slots[P]) Place(thread, run string, p P) (first bool) {
	sl := s.threads[thread]
	if sl == nil {
		sl = &slot{}
		s.threads[thread] = sl
	}
	s.prio[run] = p
	if sl.current != "" {
		sl.waiting = append(sl.waiting, run)
		return false
	}
	sl.current = run
	return true
}

// Scheduled reports whether run is in thread's line, current or waiting.
func (s *Slots[P]) Scheduled(thread, run string) bool {
	sl := s.threads[thread]
	return sl != nil && (sl.current == run || slices.Contains(sl.waiting, run))
}

// Current reports whether run is thread's current run.
func (s *Slots[P]) Current(thread, run string) bool {
	sl := s.threads[thread]
	return sl != nil && sl.current == run
}

// Unfinished returns thread's runs that have not ended: the current one unless End marked it,
// then the waiting ones in order.
func (s *Slots[P]) Unfinished(thread string) []string {
	sl := s.threads[thread]
	if sl == nil {
		return nil
	}
	var out []string
	if sl.current != "" && !sl.ended {
		out = append(out, sl.current)
	}
	return append(out, sl.waiting...)
}

// Busy reports whether thread has a run that has not ended.
func (s *Slots[P]) Busy(thread string) bool {
	sl := s.threads[thread]
	return sl != nil && ((sl.current != "" && !sl.ended) || len(sl.waiting) > 0)
}

// HasWaiting reports whether runs wait behind thread's current one.
func (s *Slots[P]) HasWaiting(thread string) bool {
	sl := s.threads[thread]
	return sl != nil && len(sl.waiting) > 0
}

// End marks run, if it is thread's current run, as ended: its outcome is recorded and it only
// tidies up before Release.
func (s *Slots[P]) End(thread, run string) {
	if sl := s.threads[thread]; sl != nil && sl.current == run {
		sl.ended = true
	}
}

// Unwait takes run out of thread's waiting runs and reports whether it was waiting there.
func (s *Slots[P]) Unwait(thread, run string) bool {
	sl := s.threads[thread]
	if sl == nil {
		return false
	}
	i := slices.Index(sl.waiting, run)
	if i < 0 {
		return false
	}
	sl.waiting = slices.Delete(sl.waiting, i, i+1)
	delete(s.prio, run)
	return true
}

// Release ends run, if it is thread's current run, and moves the line on: it returns the run
// that is current now, with its priority, or ok false when none is (the line is empty, or drop
// is set: a process shutting down starts nothing more, and forgets the thread's line).
func (s *Slots[P]) Release(thread, run string, drop bool) (next string, p P, ok bool) {
	sl := s.threads[thread]
	if sl == nil || sl.current != run {
		return "", p, false
	}
	delete(s.prio, run)
	if len(sl.waiting) == 0 || drop {
		for _, w := range sl.waiting {
			delete(s.prio, w)
		}
		delete(s.threads, thread)
		return "", p, false
	}
	next = sl.waiting[0]
	sl.waiting = sl.waiting[1:]
	sl.current, sl.ended = next, false
	return next, s.prio[next], true
}
