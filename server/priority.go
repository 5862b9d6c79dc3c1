package server

import (
	"context"
)

// Priority orders the runs waiting for a slot in a process: high ones start before normal
// ones, normal ones before low ones, and runs of one priority in the order they were queued. A
// run is created with one (the API's "priority" field, RunRequest.Priority); it orders nothing
// else (the runs of one thread still execute one at a time, in the order they were created).
type Priority string

// Run priorities; the empty Priority is normal.
const (
	PriorityLow    Priority = "low"
	PriorityNormal Priority = "normal"
	PriorityHigh   Priority = "high"
)

// priorityLevels is the number of priorities; rank numbers them from 0 (high) to 2 (low).
const priorityLevels = 3

func (p Priority) rank() int {
	switch p {
	case PriorityHigh:
		return 0
	case PriorityLow:
		return 2
	}
	return 1
}

// riverPriority is the River job priority of a run's: River starts 1 before 2 before 3.
func (p Priority) riverPriority() int { return p.rank() + 1 }

func priorityOfRiver(n int) Priority {
	switch n {
	case 1:
		return PriorityHigh
	case 3, 4:
		return PriorityLow
	}
	return PriorityNormal
}

// parsePriority checks the API's "priority" field.
func parsePriority(s string) (Priority, error) {
	switch p := Priority(s); p {
	case "":
		return PriorityNormal, nil
	case PriorityLow, PriorityNormal, PriorityHigh:
		return p, nil
	}
	return "", badRequest("use low, normal or high", "field \"priority\" is %q", s)
}

// PriorityQueue is a [Queue] that starts waiting runs by priority. Both queues of this package
// are; the server enqueues through EnqueuePriority when its queue has it, through Enqueue (every
// run normal) otherwise.
type PriorityQueue interface {
	Queue
	EnqueuePriority(ctx context.Context, runID string, p Priority) error
}

// runPriority is the priority a run was created with.
func runPriority(run *Run) Priority {
	if run.Kwargs == nil {
		return PriorityNormal
	}
	p, _ := parsePriority(run.Kwargs.Priority)
	return p
}
