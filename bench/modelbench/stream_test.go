package modelbench

import (
	"context"
	"io"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/anthropic"
	"github.com/trellis-go/trellis/model/modeltest"
	"github.com/trellis-go/trellis/model/openai"
)

// arrivals wraps response bodies and remembers when bytes last arrived.
type arrivals struct {
	base http.RoundTripper
	last atomic.Int64
}

func (a *arrivals) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.base.RoundTrip(r)
	if err == nil {
		resp.Body = &timedBody{ReadCloser: resp.Body, a: a}
	}
	return resp, err
}

type timedBody struct {
	io.ReadCloser
	a *arrivals
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.a.last.Store(time.Now().UnixNano())
	}
	return n, err
}

func measure(b *testing.B, newServer func(testing.TB, ...modeltest.Reply) *modeltest.Server, open func(url string, c *http.Client) model.Model) {
	gate := make(chan struct{}, 1) // buffered: the first token is sent before the request starts
	srv := newServer(b, modeltest.Reply{Text: strings.Repeat("tok ", b.N), TextChunk: 4, Gate: gate})
	arr := &arrivals{base: http.DefaultTransport}
	m := open(srv.URL, &http.Client{Transport: arr})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	next, stop := iter.Pull2(m.Stream(ctx, &model.Request{Messages: []message.Message{message.User("stream please")}}))
	defer stop()
	lat := make([]int64, 0, b.N)
	b.ResetTimer()
	for range b.N {
		gate <- struct{}{}
		for {
			c, err, ok := next()
			if !ok || err != nil {
				b.Fatalf("stream ended early: %v", err)
			}
			if c.Text != "" {
				lat = append(lat, time.Now().UnixNano()-arr.last.Load())
				break
			}
		}
	}
	b.StopTimer()
	close(gate)
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)]), "p99-ns")
	b.ReportMetric(float64(lat[len(lat)-1]), "max-ns")
}

func BenchmarkOpenAIStreamChunkLatency(b *testing.B) {
	measure(b, modeltest.NewOpenAI, func(url string, c *http.Client) model.Model {
		m, err := openai.New(openai.Options{Model: "gpt-4o", APIKey: "k", BaseURL: url + "/v1", HTTPClient: c})
		if err != nil {
			b.Fatal(err)
		}
		return m
	})
}

func BenchmarkAnthropicStreamChunkLatency(b *testing.B) {
	measure(b, modeltest.NewAnthropic, func(url string, c *http.Client) model.Model {
		m, err := anthropic.New(anthropic.Options{Model: "claude-sonnet-4-5", APIKey: "k", BaseURL: url, HTTPClient: c})
		if err != nil {
			b.Fatal(err)
		}
		return m
	})
}
