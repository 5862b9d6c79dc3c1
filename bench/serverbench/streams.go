package serverbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// StreamOptions configure [RunStreams]. Tokens and PauseAfter must be those of the host's
// PacedModel.
type StreamOptions struct {
	// URL is the bench host's base URL.
	URL string
	// Streams is how many runs stream at once. Required.
	Streams int
	// Tokens and PauseAfter are the host's PacedModel settings (zero Tokens means 40).
	Tokens, PauseAfter int
	// Mode is the stream_mode requested: "messages-tuple" (token deltas, the default) or
	// "messages" (the message so far in each messages/partial event).
	Mode string
	// Opening bounds how many streams are being opened at once (request sent, headers not yet
	// received); zero means 256.
	Opening int
	// Settle is how long the streams stay idle at the gate before the memory is read; zero means
	// 2 seconds.
	Settle time.Duration
	// Retention is the host's event retention (HostConfig.EventRetention): after the runs end
	// the bench waits this long before checking that memory went back. Zero means 2 seconds.
	Retention time.Duration
	// Client sends the requests; nil means a client of its own with no connection limit.
	Client *http.Client
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// CPUProfile, when set, receives the host's CPU profile over the streams' second part: from
	// the gate's opening until every stream has ended. ClientCPUProfile receives this
	// process's over the same span.
	CPUProfile, ClientCPUProfile io.Writer
	// HeapProfile, when set, receives the host's heap profile while the streams are idle at the
	// gate, and Goroutines its goroutines (grouped by stack) then.
	HeapProfile, Goroutines io.Writer
	// Peer says the server is the LangGraph.js API peer (bench/peers/langgraphapi, serving
	// stream.mjs's graph as [StreamGraph] and the same /bench routes): its streams end by
	// closing without an end event, its stats count no goroutines, and it is not held to go
	// back to its baseline after the runs (its memory then is read and reported). The
	// profiles above are trellis's and must be nil.
	Peer bool
}

// StreamResult is what [RunStreams] measured.
type StreamResult struct {
	Streams int
	// Tokens is how many tokens arrived in all; every stream must bring all of its own.
	Tokens int
	// Open is how long it took until every stream had its first PauseAfter tokens (all open).
	Open time.Duration
	// Latency percentiles of the time from a token's emission by the model to its arrival at
	// the client, over every token.
	P50, P90, P99, Max time.Duration
	// The same percentiles (p50, p90, p99, max) over the tokens before the gate, while streams
	// are still being opened (each run's start writes to the database), and over those after
	// it, when all streams are open and only stream (and end).
	Opening, Flowing [4]time.Duration
	// The host's stats before the streams, while they were all open and idle at the gate, and
	// after they ended.
	Base, Idle, After Stats
	// Per idle stream: the host's live heap, resident memory and goroutines while idle, minus
	// the baseline, divided by Streams.
	HeapPerStream, RSSPerStream float64
	GoroutinesPerStream         float64
	// StackPerStream is the part of RSSPerStream that is goroutine stacks.
	StackPerStream float64
	// Flow is the streams' second part, from the gate's opening until every stream ended;
	// FlowTokens the tokens delivered in it. HostCPU and ClientCPU are the CPU time the host
	// and this process used in it (0 where the platform does not say).
	Flow               time.Duration
	FlowTokens         int
	HostCPU, ClientCPU time.Duration
}

// HostCPUPerToken is the host's CPU time per token of the second part.
func (r *StreamResult) HostCPUPerToken() time.Duration {
	return r.HostCPU / time.Duration(max(r.FlowTokens, 1))
}

// ClientCPUPerToken is this process's CPU time per token of the second part.
func (r *StreamResult) ClientCPUPerToken() time.Duration {
	return r.ClientCPU / time.Duration(max(r.FlowTokens, 1))
}

type streamRecord struct {
	latencies []time.Duration
	next      int // the next token index expected
	err       error
}

// RunStreams opens Streams runs of [StreamGraph] streaming tokens over SSE, waits until all are
// idle at the gate, reads the host's memory, releases them, checks that every stream received
// every token in order, and that the host's goroutines and heap went back to their baseline.
func RunStreams(ctx context.Context, o StreamOptions) (*StreamResult, error) {
	if o.Streams <= 0 {
		return nil, errors.New("serverbench: StreamOptions.Streams must be positive")
	}
	if o.Tokens <= 0 {
		o.Tokens = 40
	}
	if o.PauseAfter <= 0 || o.PauseAfter >= o.Tokens {
		return nil, fmt.Errorf("serverbench: StreamOptions.PauseAfter is %d; want 1 to Tokens-1 (%d), as on the host", o.PauseAfter, o.Tokens-1)
	}
	switch o.Mode {
	case "":
		o.Mode = "messages-tuple"
	case "messages-tuple", "messages":
	default:
		return nil, fmt.Errorf("serverbench: StreamOptions.Mode is %q; want messages-tuple or messages", o.Mode)
	}
	if o.Peer && (o.CPUProfile != nil || o.HeapProfile != nil || o.Goroutines != nil) {
		return nil, errors.New("serverbench: the server's profiles are a trellis host's; a peer has none")
	}
	if o.Opening <= 0 {
		o.Opening = 256
	}
	if o.Settle <= 0 {
		o.Settle = 2 * time.Second
	}
	if o.Retention <= 0 {
		o.Retention = 2 * time.Second
	}
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	client := o.Client
	if client == nil {
		tr := &http.Transport{MaxIdleConns: 0, MaxIdleConnsPerHost: 64, MaxConnsPerHost: 0, DisableCompression: true}
		defer tr.CloseIdleConnections()
		client = &http.Client{Transport: tr}
	}
	base, err := Steady(ctx, client, o.URL)
	if err != nil {
		return nil, err
	}
	res := &StreamResult{Streams: o.Streams, Base: base}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body, _ := json.Marshal(map[string]any{
		"assistant_id": StreamGraph,
		"input":        map[string]any{"messages": []map[string]any{{"role": "user", "content": "speak"}}},
		"stream_mode":  []string{o.Mode},
	})
	records := make([]*streamRecord, o.Streams)
	var paused, failed atomic.Int64
	var firstFailure error // set by the first stream that fails, before it closes allPaused
	allPaused := make(chan struct{})
	var pausedOnce sync.Once
	sem := make(chan struct{}, o.Opening)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range records {
		rec := &streamRecord{latencies: make([]time.Duration, 0, o.Tokens)}
		records[i] = rec
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			onPause := func() {
				if paused.Add(1) == int64(o.Streams) {
					pausedOnce.Do(func() { close(allPaused) })
				}
			}
			rec.err = streamOne(ctx, client, o, body, rec, func() { <-sem }, onPause)
			if rec.err != nil && failed.Add(1) == 1 {
				fmt.Fprintf(logw, "serverbench: stream failed: %v\n", rec.err)
				// One failure fails the measurement: stop the others and the wait for the gate.
				firstFailure = rec.err
				cancel()
				pausedOnce.Do(func() { close(allPaused) })
			}
		}()
	}
	fmt.Fprintf(logw, "serverbench: %d streams requested in %s; waiting for them to reach the pause\n", o.Streams, time.Since(start).Round(time.Millisecond))
	if err := waitPaused(ctx, client, o, allPaused, &paused); err != nil {
		cancel()
		wg.Wait()
		if failed.Load() > 0 {
			err = firstFailure
		}
		return nil, err
	}
	if failed.Load() > 0 {
		cancel()
		wg.Wait()
		return nil, fmt.Errorf("%d of %d streams open when one failed: %w", paused.Load(), o.Streams, firstFailure)
	}
	res.Open = time.Since(start)
	fmt.Fprintf(logw, "serverbench: %d streams open and idle after %s\n", o.Streams, res.Open.Round(time.Millisecond))
	select {
	case <-time.After(o.Settle):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if res.Idle, err = FetchStats(ctx, client, o.URL); err != nil {
		return nil, err
	}
	if o.HeapProfile != nil {
		if err := get(ctx, client, o.URL+"/debug/pprof/heap?gc=1", o.HeapProfile); err != nil {
			return nil, err
		}
	}
	if o.Goroutines != nil {
		if err := get(ctx, client, o.URL+"/bench/goroutines", o.Goroutines); err != nil {
			return nil, err
		}
	}
	if res.Idle.Waiting != o.Streams {
		return nil, fmt.Errorf("serverbench: %d answers wait at the host's gate, want %d: the host's PacedModel does not match StreamOptions", res.Idle.Waiting, o.Streams)
	}
	if o.CPUProfile != nil {
		if err := post(ctx, client, o.URL+"/bench/cpuprofile/start", nil); err != nil {
			return nil, err
		}
	}
	if o.ClientCPUProfile != nil {
		if err := pprof.StartCPUProfile(o.ClientCPUProfile); err != nil {
			return nil, err
		}
	}
	before, err := fetchStats(ctx, client, o.URL, false)
	if err != nil {
		return nil, err
	}
	clientBefore := cpuTime()
	released := time.Now()
	if err := Release(ctx, client, o.URL); err != nil {
		return nil, err
	}
	wg.Wait()
	res.Flow = time.Since(released)
	res.ClientCPU = cpuTime() - clientBefore
	if o.ClientCPUProfile != nil {
		pprof.StopCPUProfile()
	}
	if failed.Load() > 0 {
		return nil, fmt.Errorf("%d of %d streams failed after the gate opened; the first: %w", failed.Load(), o.Streams, firstFailure)
	}
	after, err := fetchStats(ctx, client, o.URL, false)
	if err != nil {
		return nil, err
	}
	res.HostCPU = after.CPU - before.CPU
	res.FlowTokens = o.Streams * (o.Tokens - o.PauseAfter)
	if o.CPUProfile != nil {
		if err := post(ctx, client, o.URL+"/bench/cpuprofile/stop", o.CPUProfile); err != nil {
			return nil, err
		}
	}
	var all, opening, flowing []time.Duration
	for _, r := range records {
		all = append(all, r.latencies...)
		opening = append(opening, r.latencies[:min(o.PauseAfter, len(r.latencies))]...)
		flowing = append(flowing, r.latencies[min(o.PauseAfter, len(r.latencies)):]...)
		res.Tokens += len(r.latencies)
	}
	// Where the slow tokens are: the p99 of each token index, in the log.
	byIndex := make([]string, 0, o.Tokens)
	for i := range o.Tokens {
		var at []time.Duration
		for _, r := range records {
			if i < len(r.latencies) {
				at = append(at, r.latencies[i])
			}
		}
		slices.Sort(at)
		byIndex = append(byIndex, fmt.Sprintf("%d:%.1f", i, float64(percentile(at, 0.99))/float64(time.Millisecond)))
	}
	fmt.Fprintf(logw, "serverbench: p99 in ms by token index: %s\n", strings.Join(byIndex, " "))
	for _, l := range [][]time.Duration{all, opening, flowing} {
		slices.Sort(l)
	}
	res.P50, res.P90, res.P99, res.Max = percentile(all, 0.50), percentile(all, 0.90), percentile(all, 0.99), percentile(all, 1)
	res.Opening = [4]time.Duration{percentile(opening, 0.50), percentile(opening, 0.90), percentile(opening, 0.99), percentile(opening, 1)}
	res.Flowing = [4]time.Duration{percentile(flowing, 0.50), percentile(flowing, 0.90), percentile(flowing, 0.99), percentile(flowing, 1)}
	n := float64(o.Streams)
	res.HeapPerStream = (float64(res.Idle.HeapAlloc) - float64(base.HeapAlloc)) / n
	res.RSSPerStream = (float64(res.Idle.RSS) - float64(base.RSS)) / n
	res.GoroutinesPerStream = float64(res.Idle.Goroutines-base.Goroutines) / n
	res.StackPerStream = (float64(res.Idle.Stack) - float64(base.Stack)) / n
	fmt.Fprintf(logw, "serverbench: all %d streams complete; waiting %s for the host to let their logs go\n", o.Streams, o.Retention)
	// Idle keep-alive connections hold a goroutine on the host each; they are the client's.
	client.CloseIdleConnections()
	if o.Peer {
		select {
		case <-time.After(o.Retention + 500*time.Millisecond):
		case <-ctx.Done():
			return res, ctx.Err()
		}
		res.After, err = FetchStats(ctx, client, o.URL)
		return res, err
	}
	if res.After, err = BackToBaseline(ctx, client, o.URL, base, res.Idle, o.Retention); err != nil {
		return res, err
	}
	return res, nil
}

// waitPaused waits until every stream has its first PauseAfter tokens. The host's count of
// answers waiting at its gate tells a client whose PauseAfter is not the host's: all answers
// wait there while some streams still expect tokens.
func waitPaused(ctx context.Context, c *http.Client, o StreamOptions, allPaused <-chan struct{}, paused *atomic.Int64) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	stuck := 0
	for {
		select {
		case <-allPaused:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		st, err := FetchStats(ctx, c, o.URL)
		if err != nil {
			return err
		}
		if st.Waiting >= o.Streams && paused.Load() < int64(o.Streams) {
			if stuck++; stuck == 3 {
				return fmt.Errorf("serverbench: all %d answers wait at the host's gate but only %d streams have %d tokens: the host's PacedModel does not match StreamOptions", st.Waiting, paused.Load(), o.PauseAfter)
			}
		} else {
			stuck = 0
		}
	}
}

// BackToBaseline waits until a bench host's goroutines and heap are back near base (peak is
// what they reached), or fails saying how far they are. Finished runs' logs stay joinable for
// the host's event retention and go when the next run opens one, so it waits out the retention
// and runs one short run first. The caller closes its idle connections first: each holds a
// goroutine on the host.
func BackToBaseline(ctx context.Context, c *http.Client, url string, base, idle Stats, retention time.Duration) (Stats, error) {
	select {
	case <-time.After(retention + 500*time.Millisecond):
	case <-ctx.Done():
		return Stats{}, ctx.Err()
	}
	if _, err := shortRun(ctx, c, url, "sweep"); err != nil {
		return Stats{}, err
	}
	// Slack: a few goroutines come and go (idle keep-alive connections, timers); the heap
	// may keep caches that grew, but not a sizeable part of what the streams held. The Go
	// runtime never frees a goroutine's descriptor (about 480 bytes, kept for reuse), so the
	// heap keeps that much for every goroutine the streams had at their peak: 7 MiB at 5,000
	// streams of 3 goroutines each.
	descriptors := uint64(max(idle.Goroutines-base.Goroutines, 0)) * goroutineDescriptor
	heapSlack := max(uint64(8<<20), (idle.HeapAlloc-min(idle.HeapAlloc, base.HeapAlloc))/20) + descriptors
	deadline := time.Now().Add(20 * time.Second)
	for {
		after, err := FetchStats(ctx, c, url)
		if err != nil {
			return after, err
		}
		gOK := after.Goroutines <= base.Goroutines+8
		hOK := after.HeapAlloc <= base.HeapAlloc+heapSlack
		if gOK && hOK {
			return after, nil
		}
		if time.Now().After(deadline) {
			return after, fmt.Errorf("serverbench: the host did not go back to its baseline: %d goroutines (baseline %d), heap %s (baseline %s, slack %s)",
				after.Goroutines, base.Goroutines, MiB(after.HeapAlloc), MiB(base.HeapAlloc), MiB(heapSlack))
		}
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			return after, ctx.Err()
		}
	}
}

// goroutineDescriptor is what the runtime keeps of a goroutine that ended (its g, from
// runtime.malg in a heap profile), rounded up.
const goroutineDescriptor = 512

// MiB formats a byte count.
func MiB(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return sorted[i]
}

// streamOne runs one stream to its end, recording the latency of every token and checking their
// order. opened is called once the response's headers arrived (or the request failed), paused
// once PauseAfter tokens arrived.
func streamOne(ctx context.Context, c *http.Client, o StreamOptions, body []byte, rec *streamRecord, opened, paused func()) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.URL+"/runs/stream", bytes.NewReader(body))
	if err != nil {
		opened()
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.Do(req)
	opened()
	if err != nil {
		return fmt.Errorf("serverbench: open stream: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("serverbench: open stream: status %d: %s", resp.StatusCode, msg)
	}
	// The client shares the server's cores: its parsing is kept cheap (no allocation per event,
	// no JSON decoding when a token's content has nothing to unescape) so that what is measured
	// is the server.
	br := bufio.NewReaderSize(resp.Body, 4096)
	var event, data []byte
	ended := false
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			// The LangGraph.js API server ends a stream by closing it, without an end event.
			if errors.Is(err, io.EOF) && (ended || (o.Peer && rec.next == o.Tokens)) {
				break
			}
			return fmt.Errorf("serverbench: stream cut after %d tokens: %w", rec.next, err)
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if len(event) > 0 {
				now := time.Now()
				before := rec.next
				if err := rec.take(event, data, o.Mode, now); err != nil {
					return err
				}
				if before < o.PauseAfter && rec.next >= o.PauseAfter {
					paused()
				}
				switch string(event) { // no allocation: the conversion is only compared
				case "end":
					ended = true
				case "error":
					return fmt.Errorf("serverbench: the run failed: %s", data)
				}
			}
			event, data = event[:0], data[:0]
		case bytes.HasPrefix(line, []byte("event: ")):
			event = append(event[:0], line[len("event: "):]...)
		case bytes.HasPrefix(line, []byte("data: ")):
			data = append(data, line[len("data: "):]...)
		}
	}
	if rec.next != o.Tokens {
		return fmt.Errorf("serverbench: stream ended after %d tokens, want %d", rec.next, o.Tokens)
	}
	return nil
}

// tupleContent returns the content of the message of a messages-tuple event's data,
// [message, metadata], when it can be read without decoding: the data is a list whose first
// element is an object with a "content" string holding no escape (JSON whitespace allowed
// around the brackets and the colon: the LangGraph.js API server indents its events). ok is
// false otherwise, and the caller decodes the JSON.
func tupleContent(data []byte) (content []byte, ok bool) {
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(data, jsonSpace), []byte(`[`))
	if !ok {
		return nil, false
	}
	if rest, ok = bytes.CutPrefix(bytes.TrimLeft(rest, jsonSpace), []byte(`{`)); !ok {
		return nil, false
	}
	const key = `"content"`
	i := bytes.Index(rest, []byte(key))
	if i < 0 {
		return nil, false
	}
	rest, ok = bytes.CutPrefix(bytes.TrimLeft(rest[i+len(key):], jsonSpace), []byte(`:`))
	if !ok {
		return nil, false
	}
	if rest, ok = bytes.CutPrefix(bytes.TrimLeft(rest, jsonSpace), []byte(`"`)); !ok {
		return nil, false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return nil, false
	}
	return rest[:end], true
}

const jsonSpace = " \t\r\n"

// take reads one event's tokens, checking they continue the stream's sequence.
func (rec *streamRecord) take(event, data []byte, mode string, now time.Time) error {
	var text []byte
	switch {
	case mode == "messages-tuple" && string(event) == "messages":
		if c, ok := tupleContent(data); ok {
			text = c
			break
		}
		var tuple []struct {
			Content string `json:"content"`
		}
		if err := json.Unmarshal(data, &tuple); err != nil || len(tuple) == 0 {
			return fmt.Errorf("serverbench: a messages event is not a [message, metadata] pair: %.120s", data)
		}
		text = []byte(tuple[0].Content)
	case mode == "messages" && string(event) == "messages/partial":
		var msgs []struct {
			Content string `json:"content"`
		}
		if err := json.Unmarshal(data, &msgs); err != nil || len(msgs) == 0 {
			return fmt.Errorf("serverbench: a messages/partial event is not a list of messages: %.120s", data)
		}
		// The whole message so far: the tokens not seen yet are at its end.
		toks := strings.Fields(msgs[len(msgs)-1].Content)
		if len(toks) < rec.next {
			return fmt.Errorf("serverbench: a messages/partial event has %d tokens, fewer than the %d seen before", len(toks), rec.next)
		}
		text = []byte(strings.Join(toks[rec.next:], " "))
	default:
		return nil
	}
	for len(text) > 0 {
		var tok []byte
		if sp := bytes.IndexByte(text, ' '); sp >= 0 {
			tok, text = text[:sp], text[sp+1:]
		} else {
			tok, text = text, nil
		}
		if len(tok) == 0 {
			continue
		}
		i, at, err := parseToken(tok)
		if err != nil {
			return err
		}
		if i != rec.next {
			return fmt.Errorf("serverbench: token %d arrived when %d was due", i, rec.next)
		}
		rec.next++
		rec.latencies = append(rec.latencies, now.Sub(at))
	}
	return nil
}

// get sends a GET and copies a successful answer's body to out.
func get(ctx context.Context, c *http.Client, url string, out io.Writer) error {
	return send(ctx, c, http.MethodGet, url, out)
}

// post sends an empty POST and copies a successful answer's body to out, if not nil.
func post(ctx context.Context, c *http.Client, url string, out io.Writer) error {
	return send(ctx, c, http.MethodPost, url, out)
}

func send(ctx context.Context, c *http.Client, method, url string, out io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("serverbench: %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("serverbench: %s: status %d: %s", url, resp.StatusCode, msg)
	}
	if out != nil {
		if _, err := io.Copy(out, resp.Body); err != nil {
			return fmt.Errorf("serverbench: %s: %w", url, err)
		}
	}
	return nil
}
