package server

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// serveGCPercent is the GOGC TuneGC sets when the operator set neither GOGC nor
// GOMEMLIMIT. A server's live heap is small (a few megabytes when idle) and each request leaves
// garbage of the same order, so Go's default of 100, which collects whenever the heap doubles,
// collects every few hundred runs; at 400 the collector runs a quarter as often, for a peak heap
// still small beside the memory limit set with it.
const serveGCPercent = 400

// serveMemoryShare is the share of the memory the process may use (its cgroup's limit, else
// the machine's) at which the collector works harder (GOMEMLIMIT), so that the higher GOGC can
// never take the heap to an out-of-memory kill.
const serveMemoryShare = 0.75

// gcPolicy is what TuneGC asks of the garbage collector.
type gcPolicy struct {
	Percent int   // GOGC
	Limit   int64 // GOMEMLIMIT in bytes; 0 sets none
	// Why says where the settings came from, for the start-up log.
	Why string
}

// chooseGC picks the collector's settings: the operator's GOGC or GOMEMLIMIT stand as Go
// applies them (ok is false: nothing to change); otherwise serveGCPercent under a limit of
// serveMemoryShare of available bytes (no limit when available is unknown, 0).
func chooseGC(getenv func(string) string, available int64) (p gcPolicy, ok bool) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return gcPolicy{}, false
	}
	p = gcPolicy{Percent: serveGCPercent}
	if available > 0 {
		p.Limit = int64(float64(available) * serveMemoryShare)
		p.Why = fmt.Sprintf("GOGC=%d, GOMEMLIMIT=%s (%.0f%% of %s); set GOGC or GOMEMLIMIT to choose",
			p.Percent, mib(p.Limit), serveMemoryShare*100, mib(available))
	} else {
		p.Why = fmt.Sprintf("GOGC=%d (memory size unknown: no GOMEMLIMIT); set GOGC or GOMEMLIMIT to choose", p.Percent)
	}
	return p, true
}

func mib(n int64) string { return strconv.FormatInt(n>>20, 10) + " MiB" }

// TuneGC sets the garbage collector as trellis serve runs it and returns what it set, for a log
// line ("" when it changed nothing): unless GOGC or GOMEMLIMIT is set, GOGC=400 under a soft
// memory limit of three quarters of what the process may use (its cgroup's memory.max, else the
// machine's memory). A server's live heap is a few megabytes and each run leaves garbage of
// that order, so Go's default (GOGC=100) collects every few hundred runs; at 400 it collects a
// quarter as often, and the limit makes it collect harder long before memory runs out. A
// program embedding the server calls it once at start, as trellis serve does.
func TuneGC() string {
	p, ok := chooseGC(os.Getenv, availableMemory())
	if !ok {
		return ""
	}
	debug.SetGCPercent(p.Percent)
	if p.Limit > 0 {
		debug.SetMemoryLimit(p.Limit)
	}
	return p.Why
}

// availableMemory is the memory this process may use: its cgroup's limit (v2, then v1) when
// one is set, else the machine's total; 0 when neither can be read.
func availableMemory() int64 {
	total := memTotal(readFile("/proc/meminfo"))
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if n := cgroupLimit(readFile(f)); n > 0 && (total == 0 || n < total) {
			return n
		}
	}
	return total
}

func readFile(name string) []byte {
	b, _ := os.ReadFile(name)
	return b
}

// cgroupLimit parses a cgroup memory limit file: a number of bytes, or "max" (no limit: 0).
func cgroupLimit(b []byte) int64 {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// memTotal reads MemTotal from /proc/meminfo ("MemTotal:  24575580 kB"); 0 when absent.
func memTotal(meminfo []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0
			}
			if len(f) >= 3 && f[2] == "kB" {
				n <<= 10
			}
			return n
		}
	}
	return 0
}
