package serverbench

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func startHost(t *testing.T, m *PacedModel, localQueue bool, maxRuns int) *Host {
	t.Helper()
	h, err := StartHost(HostConfig{DataDir: t.TempDir(), Model: m, LocalQueue: localQueue, MaxConcurrentRuns: maxRuns, EventRetention: 300 * time.Millisecond})
	if err != nil {
		t.Fatalf("StartHost: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// TestStreams is the small variant of the streams measurement: 200 streams of 8 tokens, paused
// after 4. RunStreams itself fails unless every stream brings every token in order and the
// host's goroutines and heap go back to their baseline; nothing here depends on timing.
func TestStreams(t *testing.T) {
	const n, tokens, pause = 200, 8, 4
	for _, mode := range []string{"messages-tuple", "messages"} {
		t.Run(mode, func(t *testing.T) {
			m := &PacedModel{Tokens: tokens, PauseAfter: pause, Interval: 10 * time.Millisecond}
			h := startHost(t, m, true, n+8)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := RunStreams(ctx, StreamOptions{URL: h.URL, Streams: n, Tokens: tokens, PauseAfter: pause, Mode: mode,
				Settle: 100 * time.Millisecond, Retention: 300 * time.Millisecond})
			if err != nil {
				t.Fatalf("RunStreams: %v", err)
			}
			if res.Tokens != n*tokens {
				t.Errorf("%d tokens arrived, want %d", res.Tokens, n*tokens)
			}
			if res.Idle.Waiting != n {
				t.Errorf("%d answers waited at the gate, want %d", res.Idle.Waiting, n)
			}
			if res.P50 <= 0 || res.P99 < res.P50 || res.Max < res.P99 {
				t.Errorf("latency percentiles out of order: p50 %s p99 %s max %s", res.P50, res.P99, res.Max)
			}
			if res.GoroutinesPerStream <= 0 {
				t.Errorf("idle streams held no goroutines (%v per stream): were they open?", res.GoroutinesPerStream)
			}
			t.Logf("%d streams: p50 %s p99 %s; per idle stream %.0f B heap, %.1f goroutines", n, res.P50, res.P99, res.HeapPerStream, res.GoroutinesPerStream)
		})
	}
}

// TestStreamsMismatch: a client that expects another model than the host's says so instead of
// waiting forever.
func TestStreamsMismatch(t *testing.T) {
	h := startHost(t, &PacedModel{Tokens: 4, PauseAfter: 2, Interval: time.Millisecond}, true, 16)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := RunStreams(ctx, StreamOptions{URL: h.URL, Streams: 2, Tokens: 4, PauseAfter: 3}); err == nil {
		t.Fatal("RunStreams passed with PauseAfter 3 against a host pausing after 2")
	}
	if _, err := RunStreams(ctx, StreamOptions{URL: h.URL, Streams: 2, Tokens: 4, PauseAfter: 4}); err == nil {
		t.Fatal("RunStreams accepted PauseAfter equal to Tokens")
	}
	if _, err := RunStreams(ctx, StreamOptions{URL: h.URL, Streams: 2, Tokens: 4, PauseAfter: 2, Mode: "values"}); err == nil {
		t.Fatal("RunStreams accepted mode values")
	}
}

// TestRuns sends short runs through the default River queue on SQLite and checks every answer.
// The timed part is long enough for a run to finish in it under -race on a loaded machine (a
// run took over the 300 ms it was before).
func TestRuns(t *testing.T) {
	h := startHost(t, nil, false, 0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := RunRuns(ctx, RunsOptions{URL: h.URL, Clients: 2, Warmup: 100 * time.Millisecond, Duration: 2 * time.Second})
	if err != nil {
		t.Fatalf("RunRuns: %v", err)
	}
	if res.Runs < 1 || res.PerSecond <= 0 || res.P99 < res.P50 {
		t.Errorf("implausible result %+v", res)
	}
}

// TestRunsWrongAnswer: a server whose answer is not the graph's is caught.
func TestRunsWrongAnswer(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"topic":"x","steps":["act"]}`))
	}))
	defer ts.Close()
	_, err := RunRuns(context.Background(), RunsOptions{URL: ts.URL, Clients: 1, Warmup: 50 * time.Millisecond, Duration: 50 * time.Millisecond})
	if !errors.Is(err, errWrongAnswer) {
		t.Fatalf("RunRuns against a wrong server: %v, want errWrongAnswer", err)
	}
}

func TestToken(t *testing.T) {
	at := time.Unix(1700000000, 123456789)
	i, got, err := ParseToken(FormatToken(17, at))
	if err != nil || i != 17 || !got.Equal(at) {
		t.Fatalf("ParseToken(FormatToken(17, %v)) = %d, %v, %v", at, i, got, err)
	}
	for _, bad := range []string{"", "17", "@5", "x@5", "3@", "3@-1", "-1@5", "3@99999999999999999999", "3@9223372036854775808"} {
		if _, _, err := ParseToken(bad); !errors.Is(err, ErrBadToken) {
			t.Errorf("ParseToken(%q) = %v, want ErrBadToken", bad, err)
		}
	}
}

// TestTupleContent: the client's cheap reading of a messages-tuple event takes the content
// only when nothing needs unescaping, and leaves anything else to the JSON decoder.
func TestTupleContent(t *testing.T) {
	for _, c := range []struct {
		data, want string
		ok         bool
	}{
		{`[{"content":"3@17 ","type":"AIMessageChunk"},{"node":"model"}]`, "3@17 ", true},
		{`[{"type":"AIMessageChunk","content":""},{}]`, "", true},
		{`[{"content":"a\"b"},{}]`, "", false},
		{`{"content":"x"}`, "", false},
		{`[{"type":"x"},{}]`, "", false},
		// The LangGraph.js API server's indented JSON, its data lines joined.
		{`[  {    "content": "0@17 ",    "type": "ai"  },  {}]`, "0@17 ", true},
		{"[\n{\n\"content\" :\t\"5@9 \"}]", "5@9 ", true},
		{`[  {    "content": 5}]`, "", false},
		{`[  {    "content" "x"}]`, "", false},
	} {
		got, ok := tupleContent([]byte(c.data))
		if ok != c.ok || (ok && string(got) != c.want) {
			t.Errorf("tupleContent(%s) = %q, %v; want %q, %v", c.data, got, ok, c.want, c.ok)
		}
	}
}
