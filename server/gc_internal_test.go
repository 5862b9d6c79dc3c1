package server

import (
	"strings"
	"testing"
)

func TestChooseGC(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	if _, ok := chooseGC(env("GOGC", "100"), 8<<30); ok {
		t.Error("GOGC set: the operator's setting must stand")
	}
	if _, ok := chooseGC(env("GOMEMLIMIT", "1GiB"), 8<<30); ok {
		t.Error("GOMEMLIMIT set: the operator's setting must stand")
	}
	p, ok := chooseGC(env(), 8<<30)
	if !ok || p.Percent != serveGCPercent || p.Limit != 6<<30 {
		t.Errorf("8 GiB available: got %+v, %v; want GOGC %d under a 6 GiB limit", p, ok, serveGCPercent)
	}
	if !strings.Contains(p.Why, "6144 MiB") {
		t.Errorf("why %q does not name the limit", p.Why)
	}
	p, ok = chooseGC(env(), 0)
	if !ok || p.Limit != 0 || !strings.Contains(p.Why, "unknown") {
		t.Errorf("memory unknown: got %+v, %v; want GOGC alone, saying why", p, ok)
	}
}

func TestMemorySources(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"max\n": 0, "2147483648\n": 2 << 30, "": 0, "-1": 0, "junk": 0} {
		if got := cgroupLimit([]byte(in)); got != want {
			t.Errorf("cgroupLimit(%q) = %d, want %d", in, got, want)
		}
	}
	meminfo := "MemFree:  100 kB\nMemTotal:       24575580 kB\nBuffers: 1 kB\n"
	if got, want := memTotal([]byte(meminfo)), int64(24575580)<<10; got != want {
		t.Errorf("memTotal = %d, want %d", got, want)
	}
	if got := memTotal([]byte("MemTotal: lots kB\n")); got != 0 {
		t.Errorf("memTotal of a bad line = %d, want 0", got)
	}
	if got := memTotal(nil); got != 0 {
		t.Errorf("memTotal of nothing = %d, want 0", got)
	}
}
