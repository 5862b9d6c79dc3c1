package limits

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestLimitsFallBackWithoutRedis checks that the process's own limits apply while Redis cannot
// be reached: requests and streams are still limited, and none fails because of Redis.
func TestLimitsFallBackWithoutRedis(t *testing.T) {
	l := New(0.2, 2, 1)
	var logged strings.Builder
	l.shared = &Shared{client: redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1}),
		log: slog.New(slog.NewTextHandler(&logged, nil)), mine: map[string]map[string]bool{}}
	defer l.shared.client.Close()
	for i := range 2 {
		if ok, _ := l.Allow("t"); !ok {
			t.Fatalf("request %d within the burst was refused", i)
		}
	}
	if ok, wait := l.Allow("t"); ok || wait <= 0 {
		t.Fatalf("the request after the burst: allowed %v, wait %v", ok, wait)
	}
	done, ok := l.OpenStream("t")
	if !ok {
		t.Fatal("the first stream was refused")
	}
	if _, ok := l.OpenStream("t"); ok {
		t.Fatal("a second stream over the limit of one was allowed")
	}
	done()
	if !strings.Contains(logged.String(), "cannot reach Redis") || strings.Count(logged.String(), "cannot reach Redis") != 1 {
		t.Fatalf("log: %q, want one warning", logged.String())
	}
}
