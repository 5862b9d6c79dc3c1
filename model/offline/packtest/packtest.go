// Package packtest helps an app test its offline domain pack (offline.Pack): the offline model
// with the pack on a fixed clock, a request and its answer, and a table of requests with the one
// tool call each must make.
//
//	packtest.CheckCalls(t, pack.Pack, []packtest.Case{
//		{"by title", tools, []message.Message{message.User("find the book Dune")},
//			"find_book", `{"title":"Dune"}`},
//	})
package packtest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
)

// Now is the fixed clock of Model: a Wednesday morning.
var Now = time.Date(2025, 3, 19, 10, 0, 0, 0, time.UTC)

// Spec is a tool specification with its JSON Schema parameters written as text.
func Spec(name, desc, params string) model.ToolSpec {
	return model.ToolSpec{Name: name, Description: desc, Parameters: json.RawMessage(params)}
}

// Model is the offline model with p, on the clock Now.
func Model(p *offline.Pack) *offline.Model {
	return offline.New(&offline.Options{Now: func() time.Time { return Now }, Packs: []*offline.Pack{p}})
}

// Ask sends msgs with tools to m and returns the answer; an error fails the test.
func Ask(t testing.TB, m *offline.Model, tools []model.ToolSpec, msgs ...message.Message) *model.Response {
	t.Helper()
	resp, err := m.Generate(context.Background(), &model.Request{Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// ArgsOf returns the one tool call of resp, its name and decoded arguments; anything else fails
// the test.
func ArgsOf(t testing.TB, resp *model.Response) (string, map[string]any) {
	t.Helper()
	if len(resp.Message.ToolCalls) != 1 {
		t.Fatalf("want one tool call, got %+v", resp.Message)
	}
	var a map[string]any
	if err := json.Unmarshal(resp.Message.ToolCalls[0].Arguments, &a); err != nil {
		t.Fatal(err)
	}
	return resp.Message.ToolCalls[0].Name, a
}

// Case is one request and the call it must make: Tool with exactly the arguments Args (JSON).
type Case struct {
	Name  string
	Tools []model.ToolSpec
	Msgs  []message.Message
	Tool  string
	Args  string
}

// CheckCalls runs every case, each as a subtest, on a fresh Model(p).
func CheckCalls(t *testing.T, p *offline.Pack, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			resp := Ask(t, Model(p), c.Tools, c.Msgs...)
			if len(resp.Message.ToolCalls) != 1 {
				t.Fatalf("want one call to %s, got %q with calls %v", c.Tool, resp.Message.Content, resp.Message.ToolCalls)
			}
			tc := resp.Message.ToolCalls[0]
			if tc.Name != c.Tool || string(tc.Arguments) != c.Args {
				t.Errorf("got %s(%s)\nwant %s(%s)", tc.Name, tc.Arguments, c.Tool, c.Args)
			}
		})
	}
}
