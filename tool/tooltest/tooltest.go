// Package tooltest checks that a [tool.Tool] behaves as the executor and the models expect. Run
// it from the tests of any Tool implementation (a typed tool, an MCP tool, a graph served as a
// tool):
//
//	func TestMyTool(t *testing.T) {
//		tooltest.Run(t, myTool, tooltest.Options{Valid: json.RawMessage(`{"city":"Oslo"}`)})
//	}
package tooltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/trellis-go/trellis/tool"
)

// Options describe what Run may assume about the tool. The zero value runs only the checks that
// need no valid arguments.
type Options struct {
	// Valid are arguments the tool accepts; with them Run checks a successful call, concurrent
	// calls and, when Invalid is empty, nothing else about bad input. Nil skips those checks.
	Valid json.RawMessage
	// Invalid are arguments that are well-formed JSON objects but break the schema (a wrong
	// type, a missing required argument); Run checks each is refused with an
	// [*tool.ArgumentError] before the tool runs.
	Invalid []json.RawMessage
	// Concurrency is how many calls with Valid run at once; zero means 8.
	Concurrency int
	// CancelWithin, when not zero, makes Run check that a call with Valid arguments under an
	// already-cancelled context returns within this time (a tool that honours its context).
	CancelWithin time.Duration
}

// Run checks t. Each check is a subtest.
func Run(t *testing.T, tl tool.Tool, o Options) {
	t.Helper()
	if tl == nil {
		t.Fatal("tooltest: tool is nil")
	}
	spec := tl.Spec()
	t.Run("Spec", func(t *testing.T) {
		if err := tool.CheckSpec(spec); err != nil {
			t.Fatal(err)
		}
		if again := tl.Spec(); !reflect.DeepEqual(again, spec) {
			t.Errorf("Spec changed between calls: %+v then %+v", spec, again)
		}
		if _, err := tool.CompileSchema(spec.Parameters); err != nil {
			t.Errorf("parameters do not compile: %v", err)
		}
	})
	t.Run("MalformedArguments", func(t *testing.T) {
		for _, raw := range []string{`{"unterminated":`, `[1,2,3]`, `42`, `"text"`, `{]`} {
			res, err := call(context.Background(), t, tl, json.RawMessage(raw))
			if err == nil && (res == nil || !res.IsError) {
				t.Errorf("arguments %s were accepted (result %+v); want an error the model can read", raw, res)
			}
		}
	})
	for i, raw := range o.Invalid {
		t.Run(fmt.Sprintf("Invalid%d", i), func(t *testing.T) {
			_, err := call(context.Background(), t, tl, raw)
			var ae *tool.ArgumentError
			if !errors.As(err, &ae) || len(ae.Problems) == 0 {
				t.Errorf("arguments %s: err = %v, want a *tool.ArgumentError listing the problems", raw, err)
			}
		})
	}
	if o.Valid == nil {
		return
	}
	t.Run("Valid", func(t *testing.T) {
		res, err := call(context.Background(), t, tl, o.Valid)
		if err != nil {
			t.Fatalf("valid arguments %s: %v", o.Valid, err)
		}
		if res == nil {
			t.Fatal("nil result without an error")
		}
		if len(res.Structured) > 0 && !json.Valid(res.Structured) {
			t.Errorf("Structured is not JSON: %s", res.Structured)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		n := o.Concurrency
		if n == 0 {
			n = 8
		}
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = call(context.Background(), t, tl, o.Valid)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("concurrent call %d: %v", i, err)
			}
		}
	})
	if o.CancelWithin > 0 {
		t.Run("Cancelled", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = call(ctx, t, tl, o.Valid)
			}()
			select {
			case <-done:
			case <-time.After(o.CancelWithin):
				t.Errorf("a call under a cancelled context did not return within %v", o.CancelWithin)
			}
		})
	}
}

// call runs the tool; a panic fails the test (a tool must return errors, not panic) and is
// returned as an error.
func call(ctx context.Context, t *testing.T, tl tool.Tool, args json.RawMessage) (res *tool.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("the tool panicked on arguments %s: %v", args, r)
			err = fmt.Errorf("tooltest: the tool panicked: %v", r)
		}
	}()
	return tl.Call(ctx, args)
}
