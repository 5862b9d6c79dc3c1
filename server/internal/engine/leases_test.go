package engine

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"
)

var discard = slog.New(slog.DiscardHandler)

// TestLeasesRenewAndLose: every held lease is renewed in one call; a run whose lease the call
// did not keep is stopped once and its lease dropped; a dropped lease is renewed no more; a
// failed renewal stops nothing.
func TestLeasesRenewAndLose(t *testing.T) {
	l := &Leases{held: map[string]held{}}
	var lost []string
	l.Hold("a", "w1", func() { lost = append(lost, "a") })
	l.Hold("b", "w2", func() { lost = append(lost, "b") })
	l.Hold("c", "w3", nil)
	var calls [][]string
	renew := func(fail bool) Renewer {
		return func(ctx context.Context, ids []string) (map[string]bool, error) {
			calls = append(calls, slices.Sorted(slices.Values(ids)))
			if fail {
				return nil, errors.New("database down")
			}
			kept := map[string]bool{}
			for _, id := range ids {
				kept[id] = id != "b"
			}
			return kept, nil
		}
	}
	ctx := context.Background()
	l.renew(ctx, renew(true), discard)
	if len(lost) != 0 || !l.Holding("b") {
		t.Fatalf("a failed renewal stopped %v", lost)
	}
	l.renew(ctx, renew(false), discard)
	if !slices.Equal(lost, []string{"b"}) || l.Holding("b") || !l.Holding("a") || !l.Holding("c") {
		t.Fatalf("after b's lease was not kept: lost %v", lost)
	}
	l.Drop("a")
	l.renew(ctx, renew(false), discard)
	if want := [][]string{{"a", "b", "c"}, {"a", "b", "c"}, {"c"}}; !slices.EqualFunc(calls, want, slices.Equal) {
		t.Fatalf("renewed %v, want %v", calls, want)
	}
	if !slices.Equal(lost, []string{"b"}) {
		t.Fatalf("lost %v, want b once", lost)
	}
}

// TestLeasesHeldAgain: a lease not kept is not dropped when another worker of this process
// holds the run again meanwhile (the owner changed).
func TestLeasesHeldAgain(t *testing.T) {
	l := &Leases{held: map[string]held{}}
	lost := false
	l.Hold("a", "w1", func() { lost = true })
	renew := func(ctx context.Context, ids []string) (map[string]bool, error) {
		l.Hold("a", "w2", nil) // taken again while the renewal was under way
		return map[string]bool{}, nil
	}
	l.renew(context.Background(), renew, discard)
	if lost || !l.Holding("a") {
		t.Fatal("a lease held again by another worker was dropped")
	}
}

// TestLeasesRenewEveryInterval: NewLeases renews the leases held on its own, until Stop (whose
// waiting for a renewal under way package periodic tests).
func TestLeasesRenewEveryInterval(t *testing.T) {
	calls := make(chan []string, 1)
	l := NewLeases(time.Millisecond, func(ctx context.Context, ids []string) (map[string]bool, error) {
		select {
		case calls <- ids:
		default:
		}
		return map[string]bool{"a": true}, nil
	}, discard)
	defer l.Stop()
	l.Hold("a", "w1", nil)
	for ids := range calls {
		if slices.Equal(ids, []string{"a"}) {
			return
		}
	}
}
