package graph

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		p       RetryPolicy
		attempt int
		want    time.Duration
	}{
		{RetryPolicy{}, 1, 500 * time.Millisecond}, // defaults: 500ms, factor 2
		{RetryPolicy{}, 3, 2 * time.Second},        // 500ms * 2 * 2
		{RetryPolicy{}, 30, 128 * time.Second},     // capped by the default max
		{RetryPolicy{InitialInterval: time.Millisecond, BackoffFactor: 3}, 3, 9 * time.Millisecond},
		{RetryPolicy{InitialInterval: time.Second, MaxInterval: 3 * time.Second}, 4, 3 * time.Second},
	} {
		if got := backoff(&tc.p, tc.attempt); got != tc.want {
			t.Errorf("backoff(%+v, %d) = %s, want %s", tc.p, tc.attempt, got, tc.want)
		}
	}
	p := RetryPolicy{InitialInterval: time.Second, Jitter: true}
	seen := map[time.Duration]bool{}
	for range 50 {
		d := backoff(&p, 1)
		if d < 750*time.Millisecond || d > 1250*time.Millisecond {
			t.Fatalf("jittered wait %s is outside ±25%% of 1s", d)
		}
		seen[d] = true
	}
	if len(seen) < 2 {
		t.Fatal("jitter never changed the wait")
	}
}
