// Package client is a Go client of the Agent Protocol API that `trellis serve` and the LangGraph
// API server speak: assistants, threads and their state, runs (waited for, in the background, or
// streamed in every stream mode as an iter.Seq2), crons and the store. It is what the LangGraph
// SDK is to Python and JavaScript, in Go's idiom, and [Remote] runs an assistant of another server
// as a node of a local graph.
//
//	c, err := client.New("http://127.0.0.1:2024", nil)
//	th, err := c.Threads.Create(ctx, nil)
//	for part, err := range c.Runs.Stream(ctx, th.ThreadID, &client.RunRequest{
//		AssistantID: "example",
//		Input:       map[string]any{"messages": []map[string]any{{"role": "user", "content": "hi"}}},
//		StreamMode:  []string{"messages-tuple", "values"},
//	}) {
//		...
//	}
//
// Every method returns an [*APIError] when the server refuses a request (its status, the API's
// detail and hint) and an [*UnreachableError] when no server answers.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client talks to one server. Its fields group the API as the LangGraph SDK does. It is safe for
// concurrent use.
type Client struct {
	Assistants *Assistants
	Threads    *Threads
	Runs       *Runs
	Crons      *Crons
	Store      *Store

	t *transport
}

// Options configure [New]. Nil options, and every zero field, are the defaults.
type Options struct {
	// APIKey, when set, is sent as the x-api-key header (LangGraph's) and as a bearer token
	// (trellis's API keys and JWTs), so it works with either server.
	APIKey string
	// Headers are added to every request.
	Headers http.Header
	// HTTPClient sends the requests; nil means a client with no overall timeout (streams may
	// last), whose requests end with their context.
	HTTPClient *http.Client
}

// New returns a client of the server at baseURL (http or https, e.g. http://127.0.0.1:2024).
func New(baseURL string, o *Options) (*Client, error) {
	base := strings.TrimRight(strings.TrimSpace(baseURL), "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: %q is not an http(s) URL such as http://127.0.0.1:2024", baseURL)
	}
	var opts Options
	if o != nil {
		opts = *o
	}
	t := &transport{base: base, hc: opts.HTTPClient, headers: opts.Headers.Clone(), key: opts.APIKey}
	if t.hc == nil {
		t.hc = &http.Client{}
	}
	return &Client{Assistants: &Assistants{t}, Threads: &Threads{t}, Runs: &Runs{t}, Crons: &Crons{t}, Store: &Store{t}, t: t}, nil
}

// BaseURL is the server's address as New was given it, without a trailing slash.
func (c *Client) BaseURL() string { return c.t.base }

// APIError is a request the server refused: its status and what its body said.
type APIError struct {
	Method, Path string
	Status       int
	// Detail is the API's explanation ("detail", or "message"/"error" from other servers), Hint
	// what to do when the server says.
	Detail, Hint string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("client: %s %s: %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// IsNotFound reports whether err is the server's 404.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// UnreachableError says no server answered at URL.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("client: no server answers at %s (%v); is it running, and is the URL right?", e.URL, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

type transport struct {
	base    string
	hc      *http.Client
	headers http.Header
	key     string
}

// do sends one request and returns the response when its status is 2xx.
func (t *transport) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("client: %s %s: encoding the body: %w", method, path, err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	for k, v := range t.headers {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if t.key != "" {
		req.Header.Set("X-Api-Key", t.key)
		req.Header.Set("Authorization", "Bearer "+t.key)
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &UnreachableError{URL: t.base, Err: err}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	ae := &APIError{Method: method, Path: path, Status: resp.StatusCode}
	var b struct {
		Detail  json.RawMessage `json:"detail"`
		Message string          `json:"message"`
		Error   string          `json:"error"`
		Hint    string          `json:"hint"`
	}
	if json.Unmarshal(raw, &b) == nil {
		var detail string
		if json.Unmarshal(b.Detail, &detail) != nil && len(b.Detail) > 0 {
			detail = string(b.Detail) // FastAPI's validation errors are a list
		}
		ae.Detail = firstOf(detail, b.Message, b.Error)
		ae.Hint = b.Hint
	}
	if ae.Detail == "" {
		ae.Detail = strings.TrimSpace(string(raw))
	}
	return nil, ae
}

// call sends a request and decodes the JSON answer into out (nil: the answer is dropped).
func (t *transport) call(ctx context.Context, method, path string, body, out any) error {
	resp, err := t.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("client: %s %s: the answer is not the JSON expected: %w", method, path, err)
	}
	return nil
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// esc escapes one path segment.
func esc(s string) string { return url.PathEscape(s) }
