package einopeer

import (
	"context"
	"strings"
	"testing"
)

func TestWorkloads(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		build func() (*Workload, error)
	}{
		{"sequential_1", func() (*Workload, error) { return Sequential(ctx, 1) }},
		{"sequential_1000", func() (*Workload, error) { return Sequential(ctx, 1000) }},
		{"static_fanout_1", func() (*Workload, error) { return StaticFanout(ctx, 1) }},
		{"static_fanout_100", func() (*Workload, error) { return StaticFanout(ctx, 100) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := tc.build()
			if err != nil {
				t.Fatal(err)
			}
			if w.Name != tc.name {
				t.Errorf("Name = %q, want %q", w.Name, tc.name)
			}
			// Twice: a compiled graph must be reusable across runs.
			for range 2 {
				if err := w.Run(ctx); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestBadSizes(t *testing.T) {
	ctx := context.Background()
	if _, err := Sequential(ctx, 0); err == nil || !strings.Contains(err.Error(), "at least one node") {
		t.Errorf("Sequential(0) error = %v, want one saying it needs at least one node", err)
	}
	if _, err := StaticFanout(ctx, -1); err == nil || !strings.Contains(err.Error(), "at least one worker") {
		t.Errorf("StaticFanout(-1) error = %v, want one saying it needs at least one worker", err)
	}
}

func TestRunCountsEvents(t *testing.T) {
	w, err := Sequential(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	w.want = 4 // one more than the graph produces
	if err := w.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "3 node events, want 4") {
		t.Errorf("Run error = %v, want a node event count mismatch", err)
	}
}

func benchmark(b *testing.B, build func(context.Context) (*Workload, error)) {
	ctx := context.Background()
	w, err := build(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Run(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// The benchmark names and sub-benchmark match the trellis ones in bench/, so
// that bench/cmd/compare runs both sides with one pattern.

func BenchmarkSequential1000(b *testing.B) {
	b.Run("nocheckpoint", func(b *testing.B) {
		benchmark(b, func(ctx context.Context) (*Workload, error) { return Sequential(ctx, 1000) })
	})
}

func BenchmarkStaticFanout100(b *testing.B) {
	b.Run("nocheckpoint", func(b *testing.B) {
		benchmark(b, func(ctx context.Context) (*Workload, error) { return StaticFanout(ctx, 100) })
	})
}
