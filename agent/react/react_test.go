package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/agent/conversation"
	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/tool"
)

type priceArgs struct {
	Year int    `json:"year" minimum:"2000"`
	Zone string `json:"zone" enum:"NP15,SP15"`
}

func priceTool() tool.Tool {
	return tool.Must(tool.New("get_price", "Average price of a zone in a year.", func(_ context.Context, a priceArgs) (string, error) {
		return a.Zone + " averaged 41.2", nil
	}))
}

func hangTool() tool.Tool {
	return tool.WithPolicy(tool.Must(tool.New("slow_report", "Never finishes.", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})), tool.Policy{Timeout: 50 * time.Millisecond})
}

func call(id, name, args string) message.ToolCall {
	return message.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// TestReActBadToolCallsBecomeErrorResults: malformed JSON, an unknown tool, wrong argument types
// and a hanging tool each give the model an error result it can read, and the loop goes on.
func TestReActBadToolCallsBecomeErrorResults(t *testing.T) {
	m := scripted.New(
		scripted.ToolCalls(
			call("c1", "get_price", `{"year": 2025, "zone": `),
			call("c2", "get_weather", `{}`),
			call("c3", "get_price", `{"year":"2025","zone":"NP15"}`),
			call("c4", "slow_report", `{}`),
		),
		scripted.ToolCalls(call("c5", "get_price", `{"year":2025,"zone":"NP15"}`)),
		scripted.Text("NP15 averaged 41.2."),
	)
	g, err := react.New(m, &react.Options{Tools: []tool.Tool{priceTool(), hangTool()},
		Executor: &tool.ExecutorOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(context.Background(), react.State{Messages: []message.Message{message.User("NP15 in 2025?")}})
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]message.Message{}
	for _, msg := range out.Messages {
		if msg.Role == message.RoleTool {
			results[msg.ToolCallID] = msg
		}
	}
	for id, want := range map[string]string{"c1": "JSON", "c2": "get_weather", "c3": "year", "c4": "50ms"} {
		r := results[id]
		if !r.IsError || !strings.Contains(r.Content, want) {
			t.Errorf("result %s = %+v, want an error mentioning %q", id, r, want)
		}
	}
	if r := results["c5"]; r.IsError || r.Content != "NP15 averaged 41.2" {
		t.Errorf("good call result = %+v", r)
	}
	if last := out.Messages[len(out.Messages)-1]; last.Content != "NP15 averaged 41.2." {
		t.Errorf("final = %+v", last)
	}
	// The model saw the four error results before trying again.
	second := m.Requests()[1].Messages
	if n := len(second); second[n-1].Role != message.RoleTool || second[n-4].Role != message.RoleTool {
		var roles []string
		for _, m := range second {
			roles = append(roles, string(m.Role))
		}
		t.Errorf("second request ends with %v", roles)
	}
}

func TestReActStopsAtTurnLimit(t *testing.T) {
	m := scripted.New(scripted.ToolCalls(call("c", "get_price", `{"year":2025,"zone":"NP15"}`)))
	m.Repeat = true
	g, err := react.New(m, &react.Options{Tools: []tool.Tool{priceTool()}, MaxTurns: 3})
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(context.Background(), react.State{Messages: []message.Message{message.User("loop")}}, graph.WithRecursionLimit(50))
	if err != nil {
		t.Fatal(err)
	}
	if last := out.Messages[len(out.Messages)-1]; !strings.Contains(last.Content, "stopped after 3 model turns") {
		t.Fatalf("last = %q", last.Content)
	}
	if n := len(m.Requests()); n != 3 {
		t.Errorf("model called %d times", n)
	}
}

func TestReActFailingProviderKeepsPartialText(t *testing.T) {
	boom := errors.New("HTTP 500 from provider")
	m := scripted.New(scripted.Fail("The average price was", boom))
	g, err := react.New(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	var streamed strings.Builder
	var runErr error
	for ev, err := range g.Stream(context.Background(), react.State{Messages: []message.Message{message.User("price?")}}, graph.WithStreamModes(graph.ModeMessages)) {
		if err != nil {
			runErr = err
			break
		}
		streamed.WriteString(ev.Data.(graph.MessageChunk).Message.Content)
	}
	if !errors.Is(runErr, boom) {
		t.Fatalf("run error = %v", runErr)
	}
	if got := model.PartialText(runErr); got != "The average price was" {
		t.Errorf("partial text = %q", got)
	}
	if streamed.String() != "The average price was" {
		t.Errorf("streamed = %q", streamed.String())
	}
}

func TestReActRejectsBadOptions(t *testing.T) {
	if _, err := react.New(nil, nil); err == nil || !strings.Contains(err.Error(), "needs a model") {
		t.Errorf("no model: %v", err)
	}
	if _, err := react.New(scripted.New(), &react.Options{Approve: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown approval: %v", err)
	}
	if _, err := react.New(scripted.New(), &react.Options{Compaction: &conversation.CompactOptions{}}); err == nil || !strings.Contains(err.Error(), "CompactOptions.Model") {
		t.Errorf("compaction without model: %v", err)
	}
}

// named is a scripted model that names its provider and model before answering.
type named struct{ *scripted.Model }

func (named) Identity() (string, string) { return "acme", "acme-small" }

// TestStreamModelLabelsEveryChunk checks that each chunk of the messages stream names the
// provider and model when the model can tell them before it answers, from the first chunk on,
// through the agent's wrappers.
func TestStreamModelLabelsEveryChunk(t *testing.T) {
	m := named{scripted.New(scripted.Text("Prices went up by four percent."))}
	wrapped := agent.BudgetedModel(m)
	if p, n := model.IdentityOf(wrapped); p != "acme" || n != "acme-small" {
		t.Fatalf("the budgeted wrapper hides the identity: %q %q", p, n)
	}
	g, err := react.New(wrapped, nil)
	if err != nil {
		t.Fatal(err)
	}
	chunks := 0
	for ev, err := range g.Stream(context.Background(), react.State{Messages: []message.Message{message.User("price?")}}, graph.WithStreamModes(graph.ModeMessages)) {
		if err != nil {
			t.Fatal(err)
		}
		md := ev.Data.(graph.MessageChunk).Metadata
		if md["provider"] != "acme" || md["model"] != "acme-small" || md["node"] != react.NodeModel {
			t.Fatalf("chunk %d metadata = %v", chunks, md)
		}
		chunks++
	}
	if chunks < 2 {
		t.Fatalf("%d chunks, want the reply in several", chunks)
	}
	// A model that cannot name itself leaves the keys out rather than guessing.
	if p, n := model.IdentityOf(anonymous{}); p != "" || n != "" {
		t.Errorf("anonymous model identity = %q %q", p, n)
	}
}

type anonymous struct{ model.Model }

type recordingObserver struct {
	events []string
	calls  []model.Call
	resps  []*model.Response
}

func (o *recordingObserver) ModelStarted(_ context.Context, c model.Call) {
	o.events = append(o.events, "start")
	o.calls = append(o.calls, c)
}

func (o *recordingObserver) ModelEnded(_ context.Context, c model.Call, resp *model.Response, err error) {
	o.events = append(o.events, fmt.Sprintf("end err=%v", err != nil))
	o.calls = append(o.calls, c)
	o.resps = append(o.resps, resp)
}

// TestStreamModelTellsTheObserver checks that a model.CallObserver in the context sees each
// call start with its request and end with the answer, whose message has the call's ID, or with
// the error.
func TestStreamModelTellsTheObserver(t *testing.T) {
	obs := &recordingObserver{}
	ctx := model.WithCallObserver(context.Background(), obs)
	m := named{scripted.New(scripted.Text("Up four percent."), scripted.Fail("", errors.New("provider down")))}
	req := &model.Request{Messages: []message.Message{message.User("price?")}}
	resp, err := agent.StreamModel(ctx, m, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.StreamModel(ctx, m, req); err == nil {
		t.Fatal("the second call should fail")
	}
	if want := []string{"start", "end err=false", "start", "end err=true"}; !slices.Equal(obs.events, want) {
		t.Fatalf("observer saw %v, want %v", obs.events, want)
	}
	c := obs.calls[0]
	if c.ID != resp.Message.ID || c.Request != req || c.Provider != "acme" || c.Name != "acme-small" || obs.calls[1] != c {
		t.Fatalf("first call %+v, answer ID %q", c, resp.Message.ID)
	}
	if obs.resps[0] != resp || obs.resps[1] != nil || obs.calls[2].ID == c.ID {
		t.Fatalf("answers %v, second call %+v", obs.resps, obs.calls[2])
	}
}
