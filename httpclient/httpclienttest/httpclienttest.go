// Package httpclienttest is a local server that answers as an external API does, from recorded
// exchanges: for the tests of a client, and for an application's offline demo, whose data then
// travels through the same client as the real API's.
//
// A recording is JSON, one exchange per entry:
//
//	[
//	  {"request": {"method": "GET", "path": "/buy/browse/v1/item_summary/search", "query": {"q": "lamp"}},
//	   "response": {"status": 200, "headers": {"Content-Type": "application/json"}, "body": {"total": 1, "itemSummaries": []}}}
//	]
//
// A request matches an exchange when the method and path are equal and every query parameter the
// exchange names has the value given ("*" matches any value); the first match answers. A body
// that is a JSON string is sent as that text; any other JSON is sent as JSON.
package httpclienttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"
)

// Exchange is one recorded request and its answer.
type Exchange struct {
	Request  Request  `json:"request"`
	Response Response `json:"response"`
}

// Request is what an exchange answers.
type Request struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Query  map[string]string `json:"query,omitempty"`
	// Header values the request must carry (an API key, say); "*" means present.
	Header map[string]string `json:"header,omitempty"`
}

// Response is a recorded answer.
type Response struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    json.RawMessage   `json:"body,omitempty"`
	// Delay holds the answer back (a slow API), as a Go duration ("2s").
	Delay string `json:"delay,omitempty"`
}

// Load reads a recording file.
func Load(path string) ([]Exchange, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse reads a recording.
func Parse(b []byte) ([]Exchange, error) {
	var xs []Exchange
	if err := json.Unmarshal(b, &xs); err != nil {
		return nil, fmt.Errorf("httpclienttest: a recording is a JSON list of {request, response}: %w", err)
	}
	for i, x := range xs {
		if x.Request.Method == "" || !strings.HasPrefix(x.Request.Path, "/") {
			return nil, fmt.Errorf("httpclienttest: exchange %d: request needs a method and a path starting with '/'", i+1)
		}
		if x.Response.Delay != "" {
			if _, err := time.ParseDuration(x.Response.Delay); err != nil {
				return nil, fmt.Errorf("httpclienttest: exchange %d: delay %q: %w", i+1, x.Response.Delay, err)
			}
		}
	}
	return xs, nil
}

// Server answers from recorded exchanges, and records what it was sent.
type Server struct {
	*httptest.Server

	mu        sync.Mutex
	exchanges []Exchange
	failures  []int
	requests  []Recorded
}

// Recorded is a request the server received.
type Recorded struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// NewServer starts a server answering from exchanges on a loopback port. Close it.
func NewServer(exchanges []Exchange) *Server {
	s := &Server{exchanges: exchanges}
	s.Server = httptest.NewServer(s)
	return s
}

// Handler returns the handler alone (for an app that serves its demo API under its own routes or
// on a listener of its own).
func Handler(exchanges []Exchange) *Server { return &Server{exchanges: exchanges} }

// Add appends exchanges.
func (s *Server) Add(xs ...Exchange) {
	s.mu.Lock()
	s.exchanges = append(s.exchanges, xs...)
	s.mu.Unlock()
}

// FailNext makes the next requests answer with the given statuses, one each, before the
// recording answers again (429 and 503 carry Retry-After: 0).
func (s *Server) FailNext(statuses ...int) {
	s.mu.Lock()
	s.failures = append(s.failures, statuses...)
	s.mu.Unlock()
}

// Requests returns what the server has received.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.requests...)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 10<<20))
	s.mu.Lock()
	s.requests = append(s.requests, Recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	if len(s.failures) > 0 {
		status := s.failures[0]
		s.failures = s.failures[1:]
		s.mu.Unlock()
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "0")
		}
		http.Error(w, `{"error":"injected failure"}`, status)
		return
	}
	var hit *Exchange
	for i := range s.exchanges {
		if matches(s.exchanges[i].Request, r) {
			hit = &s.exchanges[i]
			break
		}
	}
	s.mu.Unlock()
	if hit == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":"no recorded exchange for %s %s"}`, r.Method, strings.ReplaceAll(r.URL.RequestURI(), `"`, `'`))
		return
	}
	if d, _ := time.ParseDuration(hit.Response.Delay); d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range hit.Response.Headers {
		w.Header().Set(k, v)
	}
	out := []byte(hit.Response.Body)
	var text string
	if json.Unmarshal(out, &text) == nil {
		out = []byte(text)
	} else if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	status := hit.Response.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	w.Write(out)
}

func matches(want Request, r *http.Request) bool {
	if !strings.EqualFold(want.Method, r.Method) || want.Path != r.URL.Path {
		return false
	}
	q := r.URL.Query()
	for k, v := range want.Query {
		if !q.Has(k) || (v != "*" && q.Get(k) != v) {
			return false
		}
	}
	for k, v := range want.Header {
		got := r.Header.Get(k)
		if got == "" || (v != "*" && got != v) {
			return false
		}
	}
	return true
}
