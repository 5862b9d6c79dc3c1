package worker_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/trellis-go/trellis/tool/worker"
)

// cpuTime is the CPU (user and system) this process and its reaped children have used.
func cpuTime() (self, children time.Duration) {
	var s, c syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &s)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &c)
	tv := func(r *syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return tv(&s), tv(&c)
}

func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	pct := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}

// reportCPU reports the CPU a call cost, this process (the pool: the call and the spawn of the
// replacement) and the workers (start, call, exit), once every worker has been reaped.
func reportCPU(b *testing.B, p *worker.Pool, self0, child0 time.Duration, n int) {
	_ = p.StopAll(context.Background())
	self1, child1 := cpuTime()
	b.ReportMetric(float64((self1-self0).Microseconds())/1000/float64(n), "pool-cpu-ms/call")
	b.ReportMetric(float64((child1-child0).Microseconds())/1000/float64(n), "worker-cpu-ms/call")
}

// BenchmarkWarmCall measures what a call through a warm subprocess worker adds (the echo tool
// does no work), each worker replaced after its call: every call waits until the pool is full
// again, so it always finds a fresh worker waiting. Run it with -benchtime=200x; it reports the
// latency's p50, p99 and maximum and the CPU time per call of the pool's process and of the
// workers (each worker's start, call and exit).
func BenchmarkWarmCall(b *testing.B) {
	const size = 4
	p, _ := startPool(b, size, 0)
	params := json.RawMessage(`{"text":"x"}`)
	lat := make([]time.Duration, 0, b.N)
	full := func() bool { st, _ := p.Stats("testskill"); return st.Idle == size && st.Live == size }
	self0, child0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for !full() {
			time.Sleep(100 * time.Microsecond)
		}
		t0 := time.Now()
		if _, err := p.Execute(context.Background(), "testskill", "echo", params, 0); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	reportLatency(b, lat)
	reportCPU(b, p, self0, child0, b.N)
}

// BenchmarkRate asks for 200 calls a second, open loop (a call starts every 5 ms whether or not
// the earlier ones have finished), on a pool of 8 workers replaced after every call. It reports
// the rate kept (calls finished per second of wall time), the latency of a call including its
// wait for a free worker, and the CPU per call. Run it with -benchtime=1000x (five seconds).
func BenchmarkRate(b *testing.B) {
	const rate = 200
	p, _ := startPool(b, 8, 0)
	params := json.RawMessage(`{"text":"x"}`)
	lat := make([]time.Duration, b.N)
	var wg sync.WaitGroup
	var failed sync.Once
	gap := time.Second / rate
	self0, child0 := cpuTime()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if d := time.Until(start.Add(time.Duration(i) * gap)); d > 0 {
			time.Sleep(d)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			if _, err := p.Execute(context.Background(), "testskill", "echo", params, 0); err != nil {
				failed.Do(func() { b.Error(err) })
			}
			lat[i] = time.Since(t0)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	reportLatency(b, lat)
	reportCPU(b, p, self0, child0, b.N)
}

// BenchmarkStart measures a subprocess worker's start (spawn to ready line) and stop, one at a
// time, and the CPU each costs.
func BenchmarkStart(b *testing.B) {
	rt := &worker.Subprocess{}
	spec := worker.Spec{Name: "testskill", Command: self(b)}
	lat := make([]time.Duration, 0, b.N)
	self0, child0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		in, err := rt.Start(context.Background(), spec, "bench")
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		_ = in.Stop(context.Background())
	}
	b.StopTimer()
	reportLatency(b, lat)
	self1, child1 := cpuTime()
	b.ReportMetric(float64((self1-self0).Microseconds())/1000/float64(b.N), "pool-cpu-ms/start")
	b.ReportMetric(float64((child1-child0).Microseconds())/1000/float64(b.N), "worker-cpu-ms/start")
}
