package main

import (
	"fmt"
	"slices"
)

// Result is what one side measured for one workload. A zero Result with a
// Missing reason stands for a side that could not be measured.
type Result struct {
	// Runs is how many measurements the median is taken over.
	Runs int
	// MedianNs, MinNs and MaxNs are nanoseconds per run of the workload.
	MedianNs, MinNs, MaxNs float64
	// BytesPerOp and AllocsPerOp come from -test.benchmem (Go sides only;
	// zero otherwise).
	BytesPerOp, AllocsPerOp float64
	// PeakRSS is the highest resident set size of the measuring process, in
	// bytes, from the operating system's account of the child (rusage).
	PeakRSS int64
	// StoredBytes is what one thread leaves in the database (the saver
	// rows' "bytes/thread" metric, and the peer's bytes_per_thread); zero
	// when not measured.
	StoredBytes float64
	// Note is a remark for the report, such as the peer's SQLite
	// synchronous setting.
	Note string
	// Missing says why there is no measurement; empty when there is one.
	Missing string
}

// OK reports whether r holds a measurement.
func (r Result) OK() bool { return r.Missing == "" && r.Runs > 0 }

func missing(format string, args ...any) Result {
	return Result{Missing: fmt.Sprintf(format, args...)}
}

// summarize turns several nanoseconds-per-run samples into a Result.
func summarize(samples []float64) Result {
	if len(samples) == 0 {
		return missing("no samples")
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return Result{Runs: len(s), MedianNs: median(s), MinNs: s[0], MaxNs: s[len(s)-1]}
}

// median of sorted values; the mean of the middle two for an even count.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
