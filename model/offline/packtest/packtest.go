// Package packtest helps an app test its offline domain pack (offline.Pack): the offline model
// with the pack on a fixed clock, a request and its answer, and a table of requests with the one
// tool call each must make.
//
//	packtest.CheckCalls(t, pack.Pack, []packtest.Case{
//		{Name: "by title", Tools: tools, Msgs: []message.Message{message.User("find the book Dune")},
//			Tool: "find_book", Args: `{"title":"Dune"}`},
//	})
//
// [Paraphrases] checks an app's paraphrase table: at least [MinParaphrases] ways of writing each
// intent, each understood as it, with the figures per intent logged. [NamesInCode] finds the
// names an app's code asks its data files for (cue lists, sentences), to check them both ways.
package packtest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
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

// MinParaphrases is how many ways of writing each intent an app's paraphrase table holds at
// least.
const MinParaphrases = 30

// Paraphrases checks that every text of want[intent] is understood as intent, understood saying
// what the app makes of a text (the tool the offline model calls, or the app's own reading). A
// text in misses (the value says why) may be understood otherwise; any other miss is an error,
// and so is an intent with fewer than MinParaphrases texts. It logs the figures per intent
// ("intent: understood/total", go test -v shows them) and returns them, intents in order.
func Paraphrases(t *testing.T, want map[string][]string, misses map[string]string, understood func(text string) string) []string {
	t.Helper()
	intents := make([]string, 0, len(want))
	for k := range want {
		intents = append(intents, k)
	}
	sort.Strings(intents)
	var lines []string
	for _, intent := range intents {
		texts := want[intent]
		if len(texts) < MinParaphrases {
			t.Errorf("%s: %d paraphrases, want at least %d", intent, len(texts), MinParaphrases)
		}
		ok := 0
		for _, text := range texts {
			if got := understood(text); got == intent {
				ok++
			} else if _, known := misses[text]; !known {
				t.Errorf("%q: understood %s, want %s", text, got, intent)
			}
		}
		lines = append(lines, fmt.Sprintf("%s: %d/%d", intent, ok, len(texts)))
	}
	t.Log("understood per intent:\n" + strings.Join(lines, "\n"))
	return lines
}
