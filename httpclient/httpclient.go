// Package httpclient is the client every application uses for an external API (a marketplace, a
// listings service, a search engine): a base URL that configuration sets (so tests and offline
// demos point it at a local server), authentication, retries with backoff on 429 and 5xx,
// timeouts, a cap on what a response may weigh, and errors that say what the API answered.
//
//	c, err := httpclient.New("https://api.example.com/v1", &httpclient.Options{Auth: httpclient.Bearer(key)})
//	var out SearchResult
//	err = c.GetJSON(ctx, "/search", url.Values{"q": {"lamp"}}, &out)
//
// Package httpclienttest serves recorded answers for tests and demos.
package httpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/internal/netguard"
)

// Options tunes a Client. The zero value is usable.
type Options struct {
	// Auth adds credentials to every request; nil sends none.
	Auth Auth
	// Timeout bounds one attempt, from sending to reading the whole answer. Zero means 30 s.
	Timeout time.Duration
	// Retries is how many times a failed attempt is tried again: answers 429, 500, 502, 503 and
	// 504, and connection errors and timeouts. Zero means 3; negative means none. POST and PATCH
	// are retried only with RetryUnsafe, as they may have taken effect.
	Retries int
	// RetryUnsafe retries POST and PATCH too (for APIs whose writes are idempotent, or reads
	// sent as POST).
	RetryUnsafe bool
	// Backoff is the wait before the first retry; it doubles with each, with jitter, up to
	// MaxBackoff. Zero means 250 ms; MaxBackoff zero means 10 s. A Retry-After header is honoured
	// up to MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// MaxResponseBytes caps an answer's body. Zero means 10 MiB.
	MaxResponseBytes int64
	// UserAgent is sent with every request. Empty means "trellis-httpclient".
	UserAgent string
	// Header is sent with every request (an API version header, say).
	Header http.Header
	// AllowPrivate lets requests reach loopback and private addresses. Without it such
	// addresses are refused (a redirect or a name that resolves inward cannot reach the
	// machine's own services), except when the base URL itself names a loopback host: a local
	// server the operator chose.
	AllowPrivate bool
	// Transport replaces the HTTP transport (and the address guard with it).
	Transport http.RoundTripper
	// Logger notes retries. Nil logs nothing.
	Logger *slog.Logger
	// Name names the API in errors and logs ("ebay"). Empty means the base URL's host.
	Name string
}

// Client calls one external API. It is safe for concurrent use.
type Client struct {
	base *url.URL
	opts Options
	http *http.Client
}

// New returns a client for the API at baseURL (http or https; a path, if any, prefixes every
// request's). opts may be nil.
func New(baseURL string, opts *Options) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("httpclient: base URL %q: want an absolute http or https URL such as https://api.example.com/v1", baseURL)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Retries == 0 {
		o.Retries = 3
	} else if o.Retries < 0 {
		o.Retries = 0
	}
	if o.Backoff <= 0 {
		o.Backoff = 250 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 10 * time.Second
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = 10 << 20
	}
	if o.UserAgent == "" {
		o.UserAgent = "trellis-httpclient"
	}
	if o.Name == "" {
		o.Name = u.Host
	}
	rt := o.Transport
	if rt == nil {
		rt = netguard.Policy{AllowPrivate: o.AllowPrivate || isLocalHost(u.Hostname())}.Transport()
	}
	return &Client{base: u, opts: o, http: &http.Client{Transport: rt}}, nil
}

func isLocalHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// BaseURL is the API's base URL.
func (c *Client) BaseURL() string { return c.base.String() }

// GetJSON sends GET path?query and decodes the JSON answer into out (nil ignores it).
func (c *Client) GetJSON(ctx context.Context, path string, query url.Values, out any) error {
	return c.JSON(ctx, http.MethodGet, path, query, nil, out)
}

// PostJSON sends body as JSON and decodes the JSON answer into out (nil ignores it).
func (c *Client) PostJSON(ctx context.Context, path string, body, out any) error {
	return c.JSON(ctx, http.MethodPost, path, nil, body, out)
}

// JSON sends a request with an optional JSON body and decodes a JSON answer into out.
func (c *Client) JSON(ctx context.Context, method, path string, query url.Values, body, out any) error {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return fmt.Errorf("httpclient: %s: the request body is not JSON: %w", c.opts.Name, err)
		}
	}
	resp, data, err := c.send(ctx, method, path, query, raw, "application/json")
	if err != nil {
		return err
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &DecodeError{API: c.opts.Name, Method: method, URL: resp.Request.URL.Redacted(), Err: err, Body: snippet(data)}
	}
	return nil
}

// Form posts form values and decodes the JSON answer into out.
func (c *Client) Form(ctx context.Context, path string, form url.Values, out any) error {
	resp, data, err := c.send(ctx, http.MethodPost, path, nil, []byte(form.Encode()), "application/x-www-form-urlencoded")
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &DecodeError{API: c.opts.Name, Method: http.MethodPost, URL: resp.Request.URL.Redacted(), Err: err, Body: snippet(data)}
	}
	return nil
}

// Bytes sends a request and returns the answer's status, headers and body (within the cap),
// for answers that are not JSON. A status of 400 or more is a *StatusError.
func (c *Client) Bytes(ctx context.Context, method, path string, query url.Values, body []byte, contentType string) (*http.Response, []byte, error) {
	return c.send(ctx, method, path, query, body, contentType)
}

// resolve joins the base URL and a request path (which may carry its own query).
func (c *Client) resolve(path string, query url.Values) (*url.URL, error) {
	if strings.Contains(path, "://") || strings.HasPrefix(path, "//") {
		return nil, fmt.Errorf("httpclient: %s: path %q is a full URL: give a path under the base URL %s", c.opts.Name, path, c.base)
	}
	ref, err := url.Parse(path)
	if err != nil {
		return nil, fmt.Errorf("httpclient: %s: path %q: %w", c.opts.Name, path, err)
	}
	u := *c.base
	u.Path = c.base.Path + "/" + strings.TrimLeft(ref.Path, "/")
	q := ref.Query()
	for k, vs := range query {
		q[k] = append(q[k], vs...)
	}
	u.RawQuery = q.Encode()
	return &u, nil
}

func (c *Client) send(ctx context.Context, method, path string, query url.Values, body []byte, contentType string) (*http.Response, []byte, error) {
	u, err := c.resolve(path, query)
	if err != nil {
		return nil, nil, err
	}
	retryable := method == http.MethodGet || method == http.MethodHead || method == http.MethodPut ||
		method == http.MethodDelete || method == http.MethodOptions || c.opts.RetryUnsafe
	var lastErr error
	reauthed := false
	for attempt := 0; ; attempt++ {
		resp, data, err := c.once(ctx, method, u, body, contentType)
		if err == nil {
			return resp, data, nil
		}
		lastErr = err
		var se *StatusError
		if errors.As(err, &se) && se.Status == http.StatusUnauthorized && !reauthed {
			if r, ok := c.opts.Auth.(refresher); ok {
				r.forget()
				reauthed = true
				attempt--
				continue
			}
		}
		if !retryable || attempt >= c.opts.Retries || !transient(err) || ctx.Err() != nil {
			return resp, data, lastErr
		}
		wait := c.backoff(attempt, err)
		if c.opts.Logger != nil {
			c.opts.Logger.Info("retrying an API call", "api", c.opts.Name, "method", method, "path", u.Path,
				"attempt", attempt+1, "wait", wait.String(), "error", err.Error())
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, fmt.Errorf("%w (gave up waiting to retry: %v)", lastErr, ctx.Err())
		case <-t.C:
		}
	}
}

func (c *Client) once(ctx context.Context, method string, u *url.URL, body []byte, contentType string) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, nil, fmt.Errorf("httpclient: %s: %w", c.opts.Name, err)
	}
	for k, vs := range c.opts.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if c.opts.Auth != nil {
		if err := c.opts.Auth.apply(ctx, req); err != nil {
			return nil, nil, fmt.Errorf("httpclient: %s: credentials: %w", c.opts.Name, err)
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, &TransportError{API: c.opts.Name, Method: method, URL: u.Redacted(), Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxResponseBytes+1))
	if err != nil {
		return resp, nil, &TransportError{API: c.opts.Name, Method: method, URL: u.Redacted(), Err: err}
	}
	if int64(len(data)) > c.opts.MaxResponseBytes {
		return resp, nil, &TooLargeError{API: c.opts.Name, URL: u.Redacted(), Limit: c.opts.MaxResponseBytes}
	}
	if resp.StatusCode >= 400 {
		return resp, data, &StatusError{API: c.opts.Name, Status: resp.StatusCode, Method: method, URL: u.Redacted(),
			Body: snippet(data), RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	}
	return resp, data, nil
}

func (c *Client) backoff(attempt int, err error) time.Duration {
	var se *StatusError
	if errors.As(err, &se) && se.RetryAfter > 0 {
		return min(se.RetryAfter, c.opts.MaxBackoff)
	}
	d := c.opts.Backoff << attempt
	if d <= 0 || d > c.opts.MaxBackoff {
		d = c.opts.MaxBackoff
	}
	// Full jitter over the upper half, so replicas retrying together spread out.
	return d/2 + rand.N(d/2+1)
}

// transient reports whether an attempt's failure may pass on a retry.
func transient(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		switch se.Status {
		case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
			http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	var te *TransportError
	if errors.As(err, &te) {
		var be *netguard.BlockedError
		return !errors.As(err, &be)
	}
	return false
}

func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

func snippet(b []byte) string {
	const n = 2048
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// StatusError is an answer with status 400 or more.
type StatusError struct {
	API, Method, URL string
	Status           int
	// Body is the start of the answer (2 KB at most): most APIs say what was wrong there.
	Body string
	// RetryAfter is the wait the API asked for, if it did.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("httpclient: %s answered %d %s to %s %s", e.API, e.Status, http.StatusText(e.Status), e.Method, e.URL)
	if b := strings.TrimSpace(e.Body); b != "" {
		if len(b) > 300 {
			b = b[:300] + "…"
		}
		msg += ": " + b
	}
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		msg += " (check the API's credentials)"
	case e.Status == http.StatusTooManyRequests:
		msg += " (rate limited: try again later)"
	}
	return msg
}

// TransportError is a request that got no answer: refused, timed out, cut off, or refused by the
// address guard.
type TransportError struct {
	API, Method, URL string
	Err              error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("httpclient: %s: %s %s got no answer: %v", e.API, e.Method, e.URL, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// TooLargeError is an answer heavier than MaxResponseBytes.
type TooLargeError struct {
	API, URL string
	Limit    int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("httpclient: %s: the answer from %s is larger than %d bytes (raise Options.MaxResponseBytes if that is expected)", e.API, e.URL, e.Limit)
}

// DecodeError is an answer that is not the JSON expected.
type DecodeError struct {
	API, Method, URL string
	Err              error
	Body             string
}

func (e *DecodeError) Error() string {
	b := e.Body
	if len(b) > 200 {
		b = b[:200] + "…"
	}
	return fmt.Sprintf("httpclient: %s: the answer to %s %s is not the JSON expected: %v (it began %q)", e.API, e.Method, e.URL, e.Err, b)
}

func (e *DecodeError) Unwrap() error { return e.Err }
