package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/agent/conversation"
	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/tool"
)

// turn returns a user question answered after one tool call.
func turn(i int) []message.Message {
	id := fmt.Sprintf("c%d", i)
	return []message.Message{
		{ID: fmt.Sprintf("u%d", i), Role: message.RoleUser, Content: fmt.Sprintf("Question %d about NP15 prices?", i)},
		{ID: fmt.Sprintf("a%d", i), Role: message.RoleAssistant, ToolCalls: []message.ToolCall{{ID: id, Name: "get_price", Arguments: json.RawMessage(fmt.Sprintf(`{"year":%d}`, 2000+i))}}},
		{ID: fmt.Sprintf("t%d", i), Role: message.RoleTool, ToolCallID: id, Name: "get_price", Content: fmt.Sprintf(`{"price":%d}`, 40+i)},
		{ID: fmt.Sprintf("r%d", i), Role: message.RoleAssistant, Content: fmt.Sprintf("The price was %d.", 40+i)},
	}
}

func chat(turns int) []message.Message {
	msgs := []message.Message{{ID: "sys", Role: message.RoleSystem, Content: "You answer price questions."}}
	for i := 1; i <= turns; i++ {
		msgs = append(msgs, turn(i)...)
	}
	return msgs
}

// checkPairs fails when a tool result is not preceded by its call or a call has no result.
func checkPairs(t *testing.T, msgs []message.Message) {
	t.Helper()
	calls := map[string]bool{}
	answered := map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			calls[c.ID] = true
		}
		if m.Role == message.RoleTool {
			if !calls[m.ToolCallID] {
				t.Fatalf("result %q has no call before it in %v", m.ToolCallID, roles(msgs))
			}
			answered[m.ToolCallID] = true
		}
	}
	for id := range calls {
		if !answered[id] {
			t.Fatalf("call %q lost its result in %v", id, roles(msgs))
		}
	}
}

func roles(msgs []message.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(string(m.Role[0]))
	}
	return b.String()
}

func TestCompactKeepsLatestTurnsVerbatim(t *testing.T) {
	sum := scripted.New(scripted.Text("Summary of the conversation so far:\n- The user asked about NP15 prices for 2001-2003."))
	msgs := chat(5)
	out, err := conversation.Compact(context.Background(), msgs, &conversation.CompactOptions{Model: sum, KeepTurns: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1+1+8 {
		t.Fatalf("got %d messages (%s)", len(out), roles(out))
	}
	if out[0].ID != "sys" {
		t.Errorf("system prompt moved: %+v", out[0])
	}
	s := out[1]
	if s.Role != message.RoleSystem || s.Content != conversation.RecapPrefix+"- The user asked about NP15 prices for 2001-2003." || s.Metadata[conversation.MetaSummary] != 12 {
		t.Errorf("summary = %+v", s)
	}
	if out[2].ID != "u4" || out[9].ID != "r5" {
		t.Errorf("kept %s .. %s, want u4 .. r5", out[2].ID, out[9].ID)
	}
	checkPairs(t, out)
	// The summariser saw plain turns: no tool messages, calls and results as text.
	req := sum.Requests()[0]
	for _, m := range req.Messages {
		if m.Role == message.RoleTool || len(m.ToolCalls) > 0 {
			t.Fatalf("summariser got a raw tool message: %+v", m)
		}
	}
	all := fmt.Sprint(req.Messages)
	for _, want := range []string{"Question 1 about NP15", `[called get_price {"year":2001}]`, `[get_price returned: {"price":43}]`, "The price was 43."} {
		if !strings.Contains(all, want) {
			t.Errorf("summariser input lacks %q", want)
		}
	}
	if strings.Contains(all, "Question 4") {
		t.Error("kept turns were summarised too")
	}
	if msgs[1].ID != "u1" || len(msgs) != 21 {
		t.Error("Compact modified its input")
	}
}

func TestCompactOneLongTurnKeepsQuestion(t *testing.T) {
	msgs := []message.Message{message.User("Research EV charging in Lisbon")}
	for i := range 6 {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs,
			message.Assistant("", message.ToolCall{ID: id, Name: "search", Arguments: json.RawMessage(`{}`)}, message.ToolCall{ID: id + "b", Name: "search", Arguments: json.RawMessage(`{}`)}),
			message.ToolResult(id, "search", "result "+id),
			message.ToolResult(id+"b", "search", "result "+id+"b"))
	}
	out, err := conversation.Compact(context.Background(), msgs, &conversation.CompactOptions{Model: offline.New(nil), KeepTurns: 2})
	if err != nil {
		t.Fatal(err)
	}
	if roles(out) != "suattatt" {
		t.Fatalf("roles = %s", roles(out))
	}
	if out[1].Content != "Research EV charging in Lisbon" {
		t.Errorf("question not kept after the summary: %+v", out[1])
	}
	if out[0].Metadata[conversation.MetaTurns] != 4 || out[0].Metadata[conversation.MetaSummary] != 12 {
		t.Errorf("summary metadata = %v", out[0].Metadata)
	}
	if strings.Contains(out[0].Content, offline.Marker) || !strings.Contains(out[0].Content, "search") {
		t.Errorf("summary = %q", out[0].Content)
	}
	checkPairs(t, out)
}

func TestCompactNeverSplitsCallsFromResults(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := offline.New(nil)
	for n := range 300 {
		var msgs []message.Message
		if rng.IntN(2) == 0 {
			msgs = append(msgs, message.System("prompt"))
		}
		for i := range 1 + rng.IntN(12) {
			switch rng.IntN(3) {
			case 0:
				msgs = append(msgs, message.User(fmt.Sprintf("q%d", i)))
			case 1:
				msgs = append(msgs, message.Assistant(fmt.Sprintf("a%d", i)))
			default:
				var calls []message.ToolCall
				for j := range 1 + rng.IntN(3) {
					calls = append(calls, message.ToolCall{ID: fmt.Sprintf("c%d_%d", i, j), Name: "t", Arguments: json.RawMessage(`{}`)})
				}
				msgs = append(msgs, message.Assistant("", calls...))
				for _, c := range calls {
					msgs = append(msgs, message.ToolResult(c.ID, "t", "ok"))
				}
			}
		}
		out, err := conversation.Compact(context.Background(), msgs, &conversation.CompactOptions{Model: m, KeepTurns: 1 + rng.IntN(3)})
		if err != nil {
			t.Fatalf("case %d (%s): %v", n, roles(msgs), err)
		}
		checkPairs(t, out)
		if len(out) > len(msgs)+1 {
			t.Fatalf("case %d grew from %d to %d", n, len(msgs), len(out))
		}
		if out[len(out)-1].Content != msgs[len(msgs)-1].Content || out[len(out)-1].ToolCallID != msgs[len(msgs)-1].ToolCallID {
			t.Fatalf("case %d: the latest message was not kept", n)
		}
	}
}

func TestCompactNothingToDo(t *testing.T) {
	sum := scripted.New() // any call fails the test through ErrExhausted
	msgs := chat(2)
	out, err := conversation.Compact(context.Background(), msgs, &conversation.CompactOptions{Model: sum, KeepTurns: 3})
	if err != nil || len(out) != len(msgs) {
		t.Fatalf("got %d messages, %v", len(out), err)
	}
	out, did, err := conversation.CompactIfNeeded(context.Background(), chat(10), &conversation.CompactOptions{Model: sum, MaxTokens: 100000})
	if err != nil || did || len(out) != 41 {
		t.Fatalf("under budget: did=%v len=%d err=%v", did, len(out), err)
	}
	if _, err := conversation.Compact(context.Background(), msgs, &conversation.CompactOptions{}); err == nil || !strings.Contains(err.Error(), "needs CompactOptions.Model") {
		t.Errorf("missing model: %v", err)
	}
	if _, err := conversation.Compact(context.Background(), msgs, nil); err == nil {
		t.Error("nil options accepted")
	}
}

func TestCompactIfNeededAndFoldsEarlierSummary(t *testing.T) {
	sum := scripted.New(scripted.Text("first recap"), scripted.Text("second recap"))
	o := &conversation.CompactOptions{Model: sum, MaxTokens: 60, KeepTurns: 1}
	if !conversation.OverBudget(chat(3), o) {
		t.Fatal("3 turns should exceed 60 tokens")
	}
	out, did, err := conversation.CompactIfNeeded(context.Background(), chat(3), o)
	if err != nil || !did {
		t.Fatalf("did=%v err=%v", did, err)
	}
	out = append(out, turn(4)...)
	out, did, err = conversation.CompactIfNeeded(context.Background(), out, o)
	if err != nil || !did {
		t.Fatalf("second: did=%v err=%v", did, err)
	}
	var summaries int
	for _, m := range out {
		if m.Metadata[conversation.MetaSummary] != nil {
			summaries++
		}
	}
	if summaries != 1 || !strings.Contains(out[1].Content, "second recap") {
		t.Fatalf("roles %s, summary %q", roles(out), out[1].Content)
	}
	if got := fmt.Sprint(sum.Requests()[1].Messages); !strings.Contains(got, "first recap") {
		t.Errorf("the earlier summary was not folded in: %s", got)
	}
}

func TestCompactingModelOverBudgetAndCache(t *testing.T) {
	sum := scripted.New(scripted.Text("recap"))
	inner := scripted.New(scripted.Text("one"), scripted.Text("two"))
	m, err := conversation.CompactingModel(inner, &conversation.CompactOptions{Model: sum, MaxTokens: 80, KeepTurns: 1})
	if err != nil {
		t.Fatal(err)
	}
	req := &model.Request{Messages: append(chat(4), message.User("and now?"))}
	if _, err := m.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	// Same history again: the cached summary is used (the summariser has one step only).
	if _, err := model.Collect(m.Stream(context.Background(), req)); err != nil {
		t.Fatal(err)
	}
	for i, r := range inner.Requests() {
		if roles(r.Messages) != "ssu" || r.Messages[1].Content != conversation.RecapPrefix+"recap" {
			t.Fatalf("request %d roles = %s", i, roles(r.Messages))
		}
	}
	if len(req.Messages) != 18 {
		t.Error("the caller's request was modified")
	}
}

func TestCompactingModelRetriesOnWindowExceeded(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			sum := scripted.New(scripted.Text("recap"))
			inner := scripted.New(scripted.Fail("", model.ErrContextWindowExceeded), scripted.Text("fits now"))
			m, _ := conversation.CompactingModel(inner, &conversation.CompactOptions{Model: sum, KeepTurns: 1})
			req := &model.Request{Messages: chat(3)}
			var resp *model.Response
			var err error
			if stream {
				resp, err = model.Collect(m.Stream(context.Background(), req))
			} else {
				resp, err = m.Generate(context.Background(), req)
			}
			if err != nil || resp.Message.Content != "fits now" {
				t.Fatalf("resp=%+v err=%v", resp, err)
			}
			reqs := inner.Requests()
			if len(reqs) != 2 || len(reqs[0].Messages) != 13 || len(reqs[1].Messages) != 6 {
				t.Fatalf("inner saw %d requests", len(reqs))
			}
		})
	}
	// Nothing left to compact: the provider's error, with a hint.
	inner := scripted.New(scripted.Fail("", model.ErrContextWindowExceeded))
	m, _ := conversation.CompactingModel(inner, &conversation.CompactOptions{Model: scripted.New(), KeepTurns: 3})
	_, err := m.Generate(context.Background(), &model.Request{Messages: chat(1)})
	if !errors.Is(err, model.ErrContextWindowExceeded) || !strings.Contains(err.Error(), "lower CompactOptions.KeepTurns") {
		t.Fatalf("err = %v", err)
	}
	if _, err := conversation.CompactingModel(nil, &conversation.CompactOptions{Model: inner}); err == nil {
		t.Error("nil model accepted")
	}
}

// A Compactor is the machinery of the wrapper and the ReAct agent, for an application's own loop.
func TestCompactorOverCompactRecover(t *testing.T) {
	if _, err := conversation.NewCompactor(nil); err == nil || !strings.Contains(err.Error(), "CompactOptions.Model") {
		t.Fatalf("nil options: %v", err)
	}
	c, err := conversation.NewCompactor(&conversation.CompactOptions{Model: scripted.New(scripted.Text("recap")), MaxTokens: 60, KeepTurns: 1})
	if err != nil {
		t.Fatal(err)
	}
	if c.Over(&model.Request{Messages: chat(1)[:1]}) || !c.Over(&model.Request{Messages: chat(3)}) {
		t.Fatal("Over does not follow MaxTokens")
	}
	out, changed, err := c.Compact(context.Background(), chat(3))
	if err != nil || !changed || roles(out) != "ssuata" || out[1].Metadata[conversation.MetaSummary] == nil {
		t.Fatalf("Compact: changed=%v err=%v roles=%s", changed, err, roles(out))
	}
	// Nothing older than the kept turn: Recover gives back the window error, explained.
	_, err = c.Recover(context.Background(), []message.Message{message.User("hi"), message.Assistant("hello")}, model.ErrContextWindowExceeded, false)
	if !errors.Is(err, model.ErrContextWindowExceeded) || !strings.Contains(err.Error(), "nothing older") {
		t.Fatalf("Recover: %v", err)
	}
	// A summary read back from JSON holds its count as a float64.
	decoded := message.System("recap")
	decoded.Metadata = map[string]any{conversation.MetaTurns: float64(2)}
	if conversation.ReplacedTurns(decoded) != 2 || conversation.ReplacedTurns(message.User("hi")) != 0 {
		t.Error("ReplacedTurns misreads MetaTurns")
	}
}

func TestReActCompactsItsState(t *testing.T) {
	search := tool.Must(tool.New("search", "Searches.", func(_ context.Context, a struct {
		Q string `json:"q"`
	}) (string, error) {
		return strings.Repeat("result words ", 30), nil
	}))
	var steps []scripted.Step
	for i := range 5 {
		steps = append(steps, scripted.ToolCalls(message.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "search", Arguments: json.RawMessage(`{"q":"x"}`)}))
	}
	steps = append(steps, scripted.Text("done"))
	m := scripted.New(steps...)
	sum := scripted.New(scripted.Text("recap"))
	sum.Repeat = true
	g, err := react.New(m, &react.Options{Tools: []tool.Tool{search}, MaxTurns: 6,
		Compaction: &conversation.CompactOptions{Model: sum, MaxTokens: 200, KeepTurns: 1}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(context.Background(), react.State{Messages: []message.Message{message.User("find things")}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Messages[len(out.Messages)-1].Content != "done" {
		t.Fatalf("last = %+v", out.Messages[len(out.Messages)-1])
	}
	if out.Messages[0].Metadata[conversation.MetaSummary] == nil || out.Messages[1].Content != "find things" {
		t.Fatalf("state not compacted: %s", roles(out.Messages))
	}
	checkPairs(t, out.Messages)
	if len(sum.Requests()) == 0 {
		t.Fatal("summariser never called")
	}
	// Every request the agent's model received stayed small.
	for i, r := range m.Requests() {
		if len(r.Messages) > 8 {
			t.Errorf("request %d has %d messages (%s)", i, len(r.Messages), roles(r.Messages))
		}
	}
}

func TestReActTurnLimitCountsCompactedTurns(t *testing.T) {
	search := tool.Must(tool.New("search", "Searches.", func(context.Context, struct{}) (string, error) {
		return strings.Repeat("long result ", 40), nil
	}))
	n := 0
	m := scripted.New(scripted.Rule(func(*model.Request) *model.Response {
		n++
		return &model.Response{Message: message.Assistant("", message.ToolCall{ID: fmt.Sprint("c", n), Name: "search", Arguments: json.RawMessage(`{}`)})}
	}))
	m.Repeat = true // the model never stops calling tools
	sum := scripted.New(scripted.Text("recap"))
	sum.Repeat = true
	g, err := react.New(m, &react.Options{Tools: []tool.Tool{search}, MaxTurns: 4,
		Compaction: &conversation.CompactOptions{Model: sum, MaxTokens: 150, KeepTurns: 1}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(context.Background(), react.State{Messages: []message.Message{message.User("loop")}})
	if err != nil {
		t.Fatal(err)
	}
	if last := out.Messages[len(out.Messages)-1]; !strings.Contains(last.Content, "stopped after 4 model turns") {
		t.Fatalf("last = %q (roles %s)", last.Content, roles(out.Messages))
	}
	if n := len(m.Requests()); n != 4 {
		t.Errorf("model called %d times, want 4", n)
	}
}
