package serverbench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// Stats is a process's account of itself: what [ReadStats] returns and GET /bench/stats serves.
type Stats struct {
	Goroutines int `json:"goroutines"`
	// HeapAlloc is the bytes of live heap objects (after a collection, when asked for one).
	HeapAlloc uint64 `json:"heap_alloc"`
	// Sys is the bytes the Go runtime holds from the OS.
	Sys uint64 `json:"sys"`
	// Stack is the bytes of goroutine stacks (MemStats.StackInuse); StackStart the size a new
	// goroutine's stack starts at (the runtime sets it from the average it sees).
	Stack      uint64 `json:"stack"`
	StackStart uint64 `json:"stack_start"`
	// RSS is the resident set size, from /proc/self/statm; 0 where there is none.
	RSS uint64 `json:"rss"`
	// Waiting is how many paced answers wait at the gate (see PacedModel.PauseAfter).
	Waiting int `json:"waiting"`
	// CPU is the CPU time (user and system) the process has used so far; 0 where unknown.
	CPU time.Duration `json:"cpu_ns"`
}

// ReadStats reads this process's Stats. With settle it first collects garbage and returns freed
// memory to the OS, so that HeapAlloc and RSS count what is live.
func ReadStats(settle bool) Stats {
	if settle {
		debug.FreeOSMemory()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	sample := []metrics.Sample{{Name: "/gc/stack/starting-size:bytes"}}
	metrics.Read(sample)
	var start uint64
	if sample[0].Value.Kind() == metrics.KindUint64 {
		start = sample[0].Value.Uint64()
	}
	return Stats{Goroutines: runtime.NumGoroutine(), HeapAlloc: ms.HeapAlloc, Sys: ms.Sys, Stack: ms.StackInuse, StackStart: start, RSS: readRSS(), CPU: cpuTime()}
}

func readRSS() uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// FetchStats asks a bench host (see [Host]) for its Stats, settled.
func FetchStats(ctx context.Context, c *http.Client, baseURL string) (Stats, error) {
	return fetchStats(ctx, c, baseURL, true)
}

// fetchStats asks for the host's Stats, settled (after a collection) or as they are.
func fetchStats(ctx context.Context, c *http.Client, baseURL string, settle bool) (Stats, error) {
	var st Stats
	u := baseURL + "/bench/stats"
	if settle {
		u += "?settle=1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return st, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return st, fmt.Errorf("serverbench: stats: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("serverbench: stats: status %d (is %s a bench host?)", resp.StatusCode, baseURL)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("serverbench: stats: %w", err)
	}
	return st, nil
}

// Release asks a bench host to open its paced model's gate.
func Release(ctx context.Context, c *http.Client, baseURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/bench/release", nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("serverbench: release: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("serverbench: release: status %d", resp.StatusCode)
	}
	return nil
}

// Steady reads a bench host's Stats once its goroutine count has held still for three readings a
// second apart (at most 30 seconds): a fresh server starts services a few seconds after it
// opens (River elects a leader, which then runs its maintenance), and a baseline read before
// them would blame them on the runs.
func Steady(ctx context.Context, c *http.Client, baseURL string) (Stats, error) {
	var last Stats
	same := 0
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := FetchStats(ctx, c, baseURL)
		if err != nil {
			return st, err
		}
		if st.Goroutines == last.Goroutines {
			same++
		} else {
			same = 0
		}
		last = st
		if same >= 2 || time.Now().After(deadline) {
			return st, nil
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return st, ctx.Err()
		}
	}
}
