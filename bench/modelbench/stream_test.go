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

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/anthropic"
	"github.com/trellis-go/trellis/model/modeltest"
	"github.com/trellis-go/trellis/model/openai"
	"github.com/trellis-go/trellis/tool"
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

// texts turns a model into a stream of text deltas: directly from Model.Stream, or from the
// messages-mode events of a graph that calls the model.
type texts func(ctx context.Context, m model.Model) iter.Seq2[string, error]

// fromModel reads text deltas straight from Model.Stream.
func fromModel(ctx context.Context, m model.Model) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for c, err := range m.Stream(ctx, &model.Request{Messages: []message.Message{message.User("stream please")}}) {
			if !yield(c.Text, err) {
				return
			}
		}
	}
}

// fromReAct runs a ReAct agent (no checkpointer, one tool bound) on the model and reads text
// deltas from the messages-mode events leaving graph.Stream.
func fromReAct(b *testing.B) texts {
	return func(ctx context.Context, m model.Model) iter.Seq2[string, error] {
		a, err := react.New(m, &react.Options{Tools: []tool.Tool{echoTool(b)}})
		if err != nil {
			b.Fatal(err)
		}
		return func(yield func(string, error) bool) {
			in := react.State{Messages: []message.Message{message.User("stream please")}}
			for ev, err := range a.Stream(ctx, in, graph.WithStreamModes(graph.ModeMessages)) {
				var text string
				if mc, ok := ev.Data.(graph.MessageChunk); ok {
					text = mc.Message.Content
				}
				if !yield(text, err) {
					return
				}
			}
		}
	}
}

func echoTool(b *testing.B) tool.Tool {
	type args struct {
		Text string `json:"text" jsonschema:"the text to echo"`
	}
	t, err := tool.New("echo", "Repeats the text.", func(_ context.Context, a args) (string, error) { return a.Text, nil })
	if err != nil {
		b.Fatal(err)
	}
	return t
}

func measure(b *testing.B, newServer func(testing.TB, ...modeltest.Reply) *modeltest.Server, open func(url string, c *http.Client) model.Model, read texts) {
	gate := make(chan struct{}, 1) // buffered: the first token is sent before the request starts
	srv := newServer(b, modeltest.Reply{Text: strings.Repeat("tok ", b.N), TextChunk: 4, Gate: gate})
	arr := &arrivals{base: http.DefaultTransport}
	m := open(srv.URL, &http.Client{Transport: arr})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	next, stop := iter.Pull2(read(ctx, m))
	defer stop()
	lat := make([]int64, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		gate <- struct{}{}
		for {
			text, err, ok := next()
			if !ok || err != nil {
				b.Fatalf("stream ended early: %v", err)
			}
			if text != "" {
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

func openAI(b *testing.B) func(url string, c *http.Client) model.Model {
	return func(url string, c *http.Client) model.Model {
		m, err := openai.New("gpt-4o", &openai.Options{APIKey: "k", BaseURL: url + "/v1", HTTPClient: c})
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
}

func anthropicModel(b *testing.B) func(url string, c *http.Client) model.Model {
	return func(url string, c *http.Client) model.Model {
		m, err := anthropic.New("claude-sonnet-4-5", &anthropic.Options{APIKey: "k", BaseURL: url, HTTPClient: c})
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
}

func BenchmarkOpenAIStreamChunkLatency(b *testing.B) {
	measure(b, modeltest.NewOpenAI, openAI(b), fromModel)
}

func BenchmarkAnthropicStreamChunkLatency(b *testing.B) {
	measure(b, modeltest.NewAnthropic, anthropicModel(b), fromModel)
}

// The same measure through a ReAct agent: a chunk's arrival to its messages-mode graph.Event.

func BenchmarkOpenAIReActChunkLatency(b *testing.B) {
	measure(b, modeltest.NewOpenAI, openAI(b), fromReAct(b))
}

func BenchmarkAnthropicReActChunkLatency(b *testing.B) {
	measure(b, modeltest.NewAnthropic, anthropicModel(b), fromReAct(b))
}
