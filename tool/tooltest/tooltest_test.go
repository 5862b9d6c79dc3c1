package tooltest_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/tool"
	"github.com/trellis-go/trellis/tool/tooltest"
)

type args struct {
	City string `json:"city"`
	Days int    `json:"days" minimum:"1"`
}

func TestTypedTool(t *testing.T) {
	tl := tool.Must(tool.New("forecast", "", func(ctx context.Context, a args) (string, error) {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		default:
			return a.City, nil
		}
	}))
	tooltest.Run(t, tool.WithPolicy(tl, tool.Policy{External: true}), tooltest.Options{
		Valid:        json.RawMessage(`{"city":"Oslo","days":2}`),
		Invalid:      []json.RawMessage{json.RawMessage(`{"city":1,"days":2}`), json.RawMessage(`{"days":0}`)},
		CancelWithin: 5 * time.Second,
	})
}

func TestRawTool(t *testing.T) {
	tl, err := tool.NewRaw(model.ToolSpec{Name: "run_graph", Description: "Runs a graph.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"}},"required":["question"]}`)},
		func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
			return &tool.Result{Structured: args}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	tooltest.Run(t, tl, tooltest.Options{
		Valid:   json.RawMessage(`{"question":"why?"}`),
		Invalid: []json.RawMessage{json.RawMessage(`{}`), json.RawMessage(`{"question":false}`)},
	})
	if _, err := tool.NewRaw(model.ToolSpec{Name: "x", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"http://example.com/s.json"}}}`)}, func(context.Context, json.RawMessage) (*tool.Result, error) { return nil, nil }); err == nil {
		t.Error("NewRaw accepted a schema with a remote reference")
	}
	if _, err := tool.NewRaw(model.ToolSpec{Name: "x", Parameters: json.RawMessage(`{"type":"object"}`)}, nil); err == nil {
		t.Error("NewRaw accepted a nil function")
	}
}

// TestBadToolHelper runs the suite on a misbehaving tool when TOOLTEST_BAD names one; it is
// meant to fail, and TestSuiteFailsBadTools checks that it does.
func TestBadToolHelper(t *testing.T) {
	var tl tool.Tool
	switch os.Getenv("TOOLTEST_BAD") {
	case "lax":
		tl = badTool{fn: func(json.RawMessage) (*tool.Result, error) { return tool.Text("ok"), nil }}
	case "panicky":
		tl = badTool{fn: func(args json.RawMessage) (*tool.Result, error) {
			var m map[string]any
			_ = json.Unmarshal(args, &m)
			return tool.Text(m["city"].(string)), nil // panics when city is missing or not a string
		}}
	default:
		t.Skip("helper for TestSuiteFailsBadTools")
	}
	tooltest.Run(t, tl, tooltest.Options{Valid: json.RawMessage(`{"city":"Oslo"}`), Invalid: []json.RawMessage{json.RawMessage(`{"city":3}`)}})
}

func TestSuiteFailsBadTools(t *testing.T) {
	for _, tc := range []struct{ bad, want string }{
		{"lax", "were accepted"},
		{"panicky", "the tool panicked"},
	} {
		t.Run(tc.bad, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBadToolHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "TOOLTEST_BAD="+tc.bad)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a %s tool:\n%s", tc.bad, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("suite output for a %s tool lacks %q:\n%s", tc.bad, tc.want, out)
			}
		})
	}
}

type badTool struct {
	fn func(json.RawMessage) (*tool.Result, error)
}

func (badTool) Spec() model.ToolSpec {
	return model.ToolSpec{Name: "bad", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
}
func (b badTool) Call(_ context.Context, args json.RawMessage) (*tool.Result, error) {
	return b.fn(args)
}
