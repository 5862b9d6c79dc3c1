package serverbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// RunsOptions configure [RunRuns].
type RunsOptions struct {
	// URL is the server's base URL: a trellis bench host or the LangGraph.js peer, both serving
	// [ShortGraph].
	URL string
	// Clients is how many clients send runs at once, each waiting for its run's answer before
	// sending the next; zero means 8.
	Clients int
	// Warmup is how long runs are sent before the timed part, which lasts Duration; zero means
	// 1 second and 5 seconds.
	Warmup, Duration time.Duration
	// Client sends the requests; nil means a client of its own.
	Client *http.Client
}

// RunsResult is what [RunRuns] measured.
type RunsResult struct {
	// Runs is how many runs finished in the timed part, in Elapsed.
	Runs    int
	Elapsed time.Duration
	// PerSecond is Runs over Elapsed.
	PerSecond float64
	// P50 and P99 are the latencies of one run (request to answer) in the timed part.
	P50, P99 time.Duration
}

// RunRuns sends short runs of [ShortGraph] through POST /runs/wait from Clients clients, checks
// every answer, and counts the runs that finish in the timed part.
func RunRuns(ctx context.Context, o RunsOptions) (*RunsResult, error) {
	if o.Clients <= 0 {
		o.Clients = 8
	}
	if o.Warmup <= 0 {
		o.Warmup = time.Second
	}
	if o.Duration <= 0 {
		o.Duration = 5 * time.Second
	}
	client := o.Client
	if client == nil {
		tr := &http.Transport{MaxIdleConnsPerHost: o.Clients, DisableCompression: true}
		defer tr.CloseIdleConnections()
		client = &http.Client{Transport: tr, Timeout: time.Minute}
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		timing    atomic.Bool
		seq       atomic.Int64
		mu        sync.Mutex
		latencies []time.Duration
		firstErr  error
		wg        sync.WaitGroup
	)
	for range o.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for ctx.Err() == nil {
				counted := timing.Load()
				t0 := time.Now()
				_, err := shortRun(ctx, client, o.URL, "t"+strconv.FormatInt(seq.Add(1), 10))
				if err != nil {
					if ctx.Err() == nil {
						mu.Lock()
						if firstErr == nil {
							firstErr = err
						}
						mu.Unlock()
						cancel()
					}
					break
				}
				// A run counts when it was sent and answered inside the timed part.
				if counted && timing.Load() {
					mine = append(mine, time.Since(t0))
				}
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			mu.Unlock()
		}()
	}
	var start time.Time
	select {
	case <-time.After(o.Warmup):
		timing.Store(true)
		start = time.Now()
	case <-ctx.Done():
	}
	if ctx.Err() == nil {
		select {
		case <-time.After(o.Duration):
		case <-ctx.Done():
		}
	}
	timing.Store(false)
	elapsed := time.Since(start)
	cancel()
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if start.IsZero() {
		return nil, fmt.Errorf("serverbench: stopped during the warm-up: %w", parent.Err())
	}
	if len(latencies) == 0 {
		return nil, fmt.Errorf("serverbench: no run finished in %s at %s", o.Duration, o.URL)
	}
	slices.Sort(latencies)
	return &RunsResult{Runs: len(latencies), Elapsed: elapsed, PerSecond: float64(len(latencies)) / elapsed.Seconds(),
		P50: percentile(latencies, 0.5), P99: percentile(latencies, 0.99)}, nil
}

// shortRun runs ShortGraph once on a throwaway thread and checks its answer.
func shortRun(ctx context.Context, c *http.Client, url, topic string) (time.Duration, error) {
	body, _ := json.Marshal(map[string]any{"assistant_id": ShortGraph, "input": map[string]any{"topic": topic}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/runs/wait", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, fmt.Errorf("serverbench: run: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("serverbench: run: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("serverbench: run: status %d: %.200s", resp.StatusCode, data)
	}
	var out ShortState
	if err := json.Unmarshal(data, &out); err != nil {
		return 0, fmt.Errorf("serverbench: run: the answer is not the graph's state (%v): %.200s", err, data)
	}
	if want := []string{"plan:" + topic, "act"}; !slices.Equal(out.Steps, want) {
		return 0, fmt.Errorf("serverbench: run: steps are %q, want %q: %w", out.Steps, want, errWrongAnswer)
	}
	return time.Since(t0), nil
}

var errWrongAnswer = errors.New("serverbench: wrong answer")

// Warm sends n short runs at once and waits for them, so that what a server starts on first
// use (pools, queue workers) is running before a baseline is read.
func Warm(ctx context.Context, c *http.Client, url string, n int) error {
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := shortRun(ctx, c, url, "warm"+strconv.Itoa(i))
			errs <- err
		}()
	}
	var all []error
	for range n {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}
