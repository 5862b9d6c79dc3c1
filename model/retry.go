package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// ErrUnavailable means a model could not answer within its retry budget: it was unreachable,
// too slow to start answering, or kept failing. Match it with errors.Is; the error is an
// *[UnavailableError].
var ErrUnavailable = errors.New("model: unavailable")

// UnavailableError is the final failure of a [Resilient] model: how many attempts were made,
// for how long, and why the last one failed. It deliberately does not unwrap to the last
// attempt's error, so a caller that retries transient provider errors itself (a run queue)
// does not start the whole budget again.
type UnavailableError struct {
	Attempts int
	Elapsed  time.Duration
	// BadAnswer is true when the provider answered but wrongly (an HTTP 5xx, a broken stream),
	// false when it could not be reached or did not start answering in time.
	BadAnswer bool
	// StatusCode is the last HTTP status the provider gave, 0 when none.
	StatusCode int
	// RetryAfter is how long a caller should wait before trying again.
	RetryAfter time.Duration
	// Last is the last attempt's error, as text.
	Last string
}

func (e *UnavailableError) Error() string {
	kind := "unreachable"
	if e.BadAnswer {
		kind = "bad answer"
	}
	return fmt.Sprintf("model: unavailable (%s) after %d attempt(s) in %s: %s", kind, e.Attempts, e.Elapsed.Round(time.Millisecond), e.Last)
}

// Is reports whether target is ErrUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// ErrFirstTokenTimeout is an attempt that produced nothing within ResilientOptions.FirstToken.
var ErrFirstTokenTimeout = errors.New("model: no answer started within the first-token timeout")

// ResilientOptions configure [Resilient]; zero fields take the defaults given.
type ResilientOptions struct {
	// FirstToken bounds the wait for an attempt's first chunk (streaming) or its answer
	// (Generate), connecting included; 0 means 8 seconds.
	FirstToken time.Duration
	// Attempts is the most attempts per call; 0 means 3.
	Attempts int
	// Budget bounds all attempts of a call and the waits between them; 0 means 20 seconds. No
	// attempt starts whose backoff would end past it.
	Budget time.Duration
	// Backoff is the wait before the second attempt, doubled for each further one with up to
	// 20% jitter; 0 means 200 milliseconds.
	Backoff time.Duration
	// RetryAfter is what UnavailableError.RetryAfter says; 0 means 10 seconds.
	RetryAfter time.Duration
	// Retryable decides which errors are worth another attempt; nil means [Transient].
	Retryable func(error) bool
}

func (o *ResilientOptions) withDefaults() ResilientOptions {
	var r ResilientOptions
	if o != nil {
		r = *o
	}
	if r.FirstToken <= 0 {
		r.FirstToken = 8 * time.Second
	}
	if r.Attempts <= 0 {
		r.Attempts = 3
	}
	if r.Budget <= 0 {
		r.Budget = 20 * time.Second
	}
	if r.Backoff <= 0 {
		r.Backoff = 200 * time.Millisecond
	}
	if r.RetryAfter <= 0 {
		r.RetryAfter = 10 * time.Second
	}
	if r.Retryable == nil {
		r.Retryable = Transient
	}
	return r
}

// Transient reports errors worth another attempt: a refused or reset connection, a network
// timeout, a first-token timeout, a stream cut short, and provider answers 408, 429 and 5xx.
// A request the provider rejects (other 4xx), a context too long, an invalid request and a
// cancelled caller are not.
func Transient(err error) bool {
	if err == nil || errors.Is(err, ErrContextWindowExceeded) || errors.Is(err, ErrInvalidRequest) || errors.Is(err, ErrStructuredOutput) || errors.Is(err, ErrConfig) {
		return false
	}
	var pe *ProviderError
	if errors.As(err, &pe) && pe.StatusCode != 0 {
		return pe.StatusCode == http.StatusRequestTimeout || pe.StatusCode == http.StatusTooManyRequests || pe.StatusCode >= 500
	}
	if errors.Is(err, ErrFirstTokenTimeout) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	// Provider SDKs do not always keep the network error's type.
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "connection refused") || strings.Contains(s, "connection reset") || strings.Contains(s, "eof")
}

// Resilient wraps m so that each call has a first-token timeout and retries transient errors
// with backoff within a budget, then fails with an *[UnavailableError]. A stream is retried only
// while nothing has reached the caller; once chunks flow, a failure is passed on as it is. The
// caller's own cancellation is never retried.
func Resilient(m Model, o *ResilientOptions) Model {
	return &resilient{inner: m, o: o.withDefaults()}
}

type resilient struct {
	inner Model
	o     ResilientOptions
}

// Identity passes on the inner model's names.
func (r *resilient) Identity() (provider, name string) {
	if id, ok := r.inner.(Identified); ok {
		return id.Identity()
	}
	return "", ""
}

// attemptFunc runs one try; delivered reports that part of the answer reached the caller, after
// which the call is never tried again.
type attemptFunc func(ctx context.Context) (delivered bool, err error)

func (r *resilient) run(ctx context.Context, try attemptFunc) error {
	start := time.Now()
	deadline := start.Add(r.o.Budget)
	var last error
	for n := 1; ; n++ {
		delivered, err := try(ctx)
		if err == nil || delivered || ctx.Err() != nil || !r.o.Retryable(err) {
			return err
		}
		last = err
		wait := r.o.Backoff << (n - 1)
		wait += time.Duration(rand.Int64N(int64(wait)/5 + 1))
		if n >= r.o.Attempts || time.Now().Add(wait).After(deadline) {
			return r.unavailable(n, start, last)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return last
		case <-t.C:
		}
	}
}

func (r *resilient) unavailable(n int, start time.Time, last error) error {
	e := &UnavailableError{Attempts: n, Elapsed: time.Since(start), RetryAfter: r.o.RetryAfter, Last: last.Error()}
	var pe *ProviderError
	if errors.As(last, &pe) && pe.StatusCode != 0 {
		e.StatusCode = pe.StatusCode
		e.BadAnswer = pe.StatusCode >= 500 || pe.StatusCode == http.StatusRequestTimeout
	} else if errors.Is(last, io.ErrUnexpectedEOF) {
		e.BadAnswer = true
	}
	return e
}

func (r *resilient) Generate(ctx context.Context, req *Request) (*Response, error) {
	var resp *Response
	err := r.run(ctx, func(ctx context.Context) (bool, error) {
		actx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		t := time.AfterFunc(r.o.FirstToken, func() { cancel(ErrFirstTokenTimeout) })
		defer t.Stop()
		var err error
		resp, err = r.inner.Generate(actx, req)
		if err != nil && context.Cause(actx) == ErrFirstTokenTimeout && ctx.Err() == nil {
			err = fmt.Errorf("%w (%s): %v", ErrFirstTokenTimeout, r.o.FirstToken, err)
		}
		return false, err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func (r *resilient) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		stopped := false
		err := r.run(ctx, func(ctx context.Context) (bool, error) {
			actx, cancel := context.WithCancelCause(ctx)
			defer cancel(nil)
			t := time.AfterFunc(r.o.FirstToken, func() { cancel(ErrFirstTokenTimeout) })
			defer t.Stop()
			delivered := false
			for c, err := range r.inner.Stream(actx, req) {
				if err != nil {
					if !delivered && context.Cause(actx) == ErrFirstTokenTimeout && ctx.Err() == nil {
						err = fmt.Errorf("%w (%s): %v", ErrFirstTokenTimeout, r.o.FirstToken, err)
					}
					return delivered, err
				}
				t.Stop()
				delivered = true
				if !yield(c, nil) {
					stopped = true
					return true, nil
				}
			}
			if !delivered && context.Cause(actx) == ErrFirstTokenTimeout && ctx.Err() == nil {
				return false, ErrFirstTokenTimeout
			}
			return delivered, nil
		})
		if err != nil && !stopped {
			yield(Chunk{}, err)
		}
	}
}
