package model_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/openai"
)

// flaky is a local Chat Completions server: it refuses nothing itself, but hangs or answers 500
// for the first fail requests, then streams "ok".
type flaky struct {
	mode  string // "hang" or "500"
	fail  int64
	calls atomic.Int64
	stop  chan struct{}
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.calls.Add(1)
	if n <= f.fail {
		switch f.mode {
		case "hang":
			select {
			case <-r.Context().Done():
			case <-f.stop:
			}
			return
		case "500":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			fmt.Fprint(w, `{"error":{"message":"upstream exploded","type":"server_error"}}`)
			return
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\n")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func resilientOver(t *testing.T, base string) model.Model {
	t.Helper()
	m, err := openai.New("m", &openai.Options{APIKey: "k", BaseURL: base + "/v1", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return model.Resilient(m, &model.ResilientOptions{FirstToken: 400 * time.Millisecond, Attempts: 3, Budget: 5 * time.Second, Backoff: 10 * time.Millisecond, RetryAfter: 7 * time.Second})
}

func hi() *model.Request { return &model.Request{Messages: []message.Message{message.User("hi")}} }

func TestResilientGivesUpOnAModelThatRefusesHangsOrFails(t *testing.T) {
	t.Parallel()
	// A port nothing listens on: connections are refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()

	hang := &flaky{mode: "hang", fail: 1 << 30, stop: make(chan struct{})}
	hs := httptest.NewServer(hang)
	t.Cleanup(func() { close(hang.stop); hs.Close() })
	five := &flaky{mode: "500", fail: 1 << 30}
	fs := httptest.NewServer(five)
	t.Cleanup(fs.Close)

	for _, c := range []struct {
		name      string
		base      string
		calls     *atomic.Int64
		badAnswer bool
		status    int
	}{
		{"refused", refused, nil, false, 0},
		{"hangs", hs.URL, &hang.calls, false, 0},
		{"500", fs.URL, &five.calls, true, 500},
	} {
		for _, streaming := range []bool{true, false} {
			m := resilientOver(t, c.base)
			before := int64(0)
			if c.calls != nil {
				before = c.calls.Load()
			}
			start := time.Now()
			var err error
			if streaming {
				_, err = model.Collect(m.Stream(context.Background(), hi()))
			} else {
				_, err = m.Generate(context.Background(), hi())
			}
			took := time.Since(start)
			var ue *model.UnavailableError
			if !errors.As(err, &ue) || !errors.Is(err, model.ErrUnavailable) {
				t.Fatalf("%s (stream %v): err = %v, want an UnavailableError", c.name, streaming, err)
			}
			if ue.Attempts != 3 || ue.BadAnswer != c.badAnswer || ue.StatusCode != c.status || ue.RetryAfter != 7*time.Second {
				t.Errorf("%s (stream %v): %+v", c.name, streaming, ue)
			}
			if c.calls != nil && c.calls.Load()-before != 3 {
				t.Errorf("%s (stream %v): the server got %d requests, want 3", c.name, streaming, c.calls.Load()-before)
			}
			// Three attempts of at most 400 ms and two short waits.
			if took > 3*time.Second {
				t.Errorf("%s (stream %v): gave up after %s", c.name, streaming, took)
			}
			// The server's run queue must not take it for a transient provider error.
			var pe *model.ProviderError
			if errors.As(err, &pe) {
				t.Errorf("%s: the final error unwraps to a ProviderError: %v", c.name, err)
			}
		}
	}
}

func TestResilientRecoversWithinTheBudget(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"hang", "500"} {
		f := &flaky{mode: mode, fail: 2, stop: make(chan struct{})}
		s := httptest.NewServer(f)
		m := resilientOver(t, s.URL)
		resp, err := model.Collect(m.Stream(context.Background(), hi()))
		close(f.stop)
		s.Close()
		if err != nil || resp.Message.Content != "ok" || f.calls.Load() != 3 {
			t.Errorf("%s: %v %+v after %d calls", mode, err, resp, f.calls.Load())
		}
	}
}

func TestResilientDoesNotRetryWhatCannotSucceed(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`)
	}))
	defer s.Close()
	m := resilientOver(t, s.URL)
	_, err := m.Generate(context.Background(), hi())
	if err == nil || errors.Is(err, model.ErrUnavailable) || calls.Load() != 1 {
		t.Errorf("a 400: err %v after %d calls, want the provider's error after 1", err, calls.Load())
	}
	// A caller that gives up is not retried either.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Generate(ctx, hi()); errors.Is(err, model.ErrUnavailable) {
		t.Errorf("a cancelled call: %v", err)
	}
	// The budget bounds the attempts: a budget smaller than the first wait allows one attempt.
	var n atomic.Int64
	s2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1); w.WriteHeader(503) }))
	defer s2.Close()
	inner, _ := openai.New("m", &openai.Options{APIKey: "k", BaseURL: s2.URL + "/v1", MaxRetries: -1})
	tight := model.Resilient(inner, &model.ResilientOptions{Attempts: 5, Budget: time.Millisecond, Backoff: 50 * time.Millisecond})
	var ue *model.UnavailableError
	if _, err := tight.Generate(context.Background(), hi()); !errors.As(err, &ue) || ue.Attempts != 1 || n.Load() != 1 {
		t.Errorf("a tight budget: %v after %d calls", err, n.Load())
	}
}
