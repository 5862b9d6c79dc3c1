package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/anthropic"
	"github.com/trellis-go/trellis/model/modeltest"
)

func setup(t *testing.T, replies ...modeltest.Reply) (*anthropic.Model, *modeltest.Server) {
	t.Helper()
	srv := modeltest.NewAnthropic(t, replies...)
	m, err := anthropic.New("claude-sonnet-4-5", &anthropic.Options{APIKey: "test-key", BaseURL: srv.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return m, srv
}

var tools = []model.ToolSpec{
	{Name: "get_weather", Description: "Weather for a city", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
	{Name: "get_time", Parameters: json.RawMessage(`{"type":"object","properties":{"tz":{"type":"string"}}}`)},
}

func TestTextToolsAndUsage(t *testing.T) {
	calls := []message.ToolCall{
		{ID: "toolu_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Porto"}`)},
		{ID: "toolu_2", Name: "get_time", Arguments: json.RawMessage(`{"tz":"UTC"}`)},
	}
	m, srv := setup(t, modeltest.Reply{Text: "Let me check.", ToolCalls: calls, SplitArgs: 3, Usage: model.Usage{InputTokens: 20, OutputTokens: 9}})
	var deltas int
	resp, err := model.Collect(func(yield func(model.Chunk, error) bool) {
		for c, err := range m.Stream(context.Background(), &model.Request{Messages: []message.Message{message.System("sys"), message.User("weather?")}, Tools: tools, ToolChoice: model.ToolChoiceRequired}) {
			if c.ToolCallDelta != nil {
				deltas++
			}
			if !yield(c, err) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Let me check." || len(resp.Message.ToolCalls) != 2 || resp.FinishReason != model.FinishToolCalls {
		t.Fatalf("resp = %+v", resp)
	}
	for i := range calls {
		if got := resp.Message.ToolCalls[i]; got.ID != calls[i].ID || string(got.Arguments) != string(calls[i].Arguments) {
			t.Errorf("call %d = %+v", i, got)
		}
	}
	if deltas < 6 || resp.Usage != (model.Usage{InputTokens: 20, OutputTokens: 9}) {
		t.Errorf("deltas %d usage %+v", deltas, resp.Usage)
	}
	b := srv.Requests()[0].Body
	if b["system"].([]any)[0].(map[string]any)["text"] != "sys" || b["tool_choice"].(map[string]any)["type"] != "any" || b["max_tokens"] != 4096.0 {
		t.Errorf("body = %v", b)
	}
	if srv.Requests()[0].Header.Get("X-Api-Key") != "test-key" {
		t.Error("x-api-key not sent")
	}
}

func TestHistoryWireFormat(t *testing.T) {
	m, srv := setup(t, modeltest.Reply{Text: "done"})
	_, err := m.Generate(context.Background(), &model.Request{Messages: []message.Message{
		{Role: message.RoleUser, Parts: []message.Part{{Type: message.PartText, Text: "look"}, {Type: message.PartImage, ImageURL: "data:image/jpeg;base64,/9j/4AAQ"}}},
		message.Assistant("", message.ToolCall{ID: "a", Name: "get_time", Arguments: json.RawMessage(`{}`)}, message.ToolCall{ID: "b", Name: "get_weather", Arguments: json.RawMessage(`{"city":"x"}`)}),
		message.ToolResult("a", "get_time", "noon"),
		message.ToolError("b", "get_weather", "no data"),
	}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	msgs := srv.Requests()[0].Body["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("want user, assistant, one user turn with both results; got %d messages", len(msgs))
	}
	img := msgs[0].(map[string]any)["content"].([]any)[1].(map[string]any)["source"].(map[string]any)
	if img["type"] != "base64" || img["media_type"] != "image/jpeg" || img["data"] != "/9j/4AAQ" {
		t.Errorf("image = %v", img)
	}
	results := msgs[2].(map[string]any)["content"].([]any)
	if len(results) != 2 || results[1].(map[string]any)["is_error"] != true || results[0].(map[string]any)["tool_use_id"] != "a" {
		t.Errorf("results = %v", results)
	}
}

func TestStructuredOutputThroughForcedTool(t *testing.T) {
	schema := &model.Schema{Name: "route", JSON: json.RawMessage(`{"type":"object","properties":{"intent":{"type":"string","enum":["a","b"]}},"required":["intent"]}`)}
	m, srv := setup(t, modeltest.Reply{ToolCalls: []message.ToolCall{{ID: "t", Name: "route", Arguments: json.RawMessage(`{"intent":"b"}`)}}, SplitArgs: 4})
	resp, err := m.Generate(context.Background(), &model.Request{Messages: []message.Message{message.User("x")}, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Structured) != `{"intent":"b"}` || len(resp.Message.ToolCalls) != 0 || resp.FinishReason != model.FinishStop {
		t.Errorf("resp = %+v structured %s", resp, resp.Structured)
	}
	tc := srv.Requests()[0].Body["tool_choice"].(map[string]any)
	if tc["type"] != "tool" || tc["name"] != "route" {
		t.Errorf("tool_choice = %v", tc)
	}
}

func TestFailures(t *testing.T) {
	m, srv := setup(t, modeltest.Reply{Status: 429, RetryAfter: "0"}, modeltest.Reply{Status: 529}, modeltest.Reply{Text: "ok"})
	resp, err := m.Generate(context.Background(), &model.Request{Messages: []message.Message{message.User("x")}})
	if err != nil || resp.Message.Content != "ok" || len(srv.Requests()) != 3 {
		t.Fatalf("retries: %v %+v after %d requests", err, resp, len(srv.Requests()))
	}

	m, _ = setup(t, modeltest.Reply{Status: 400, ErrorMessage: "prompt is too long: 210000 tokens > 200000 maximum"})
	if _, err := m.Generate(context.Background(), &model.Request{Messages: []message.Message{message.User("x")}}); !errors.Is(err, model.ErrContextWindowExceeded) {
		t.Errorf("context window: %v", err)
	}

	m, _ = setup(t, modeltest.Reply{Text: "partial answer here", TextChunk: 5, CutAfter: 2})
	_, err = m.Generate(context.Background(), &model.Request{Messages: []message.Message{message.User("x")}})
	if model.PartialText(err) != "partial an" {
		t.Errorf("cut: partial %q err %v", model.PartialText(err), err)
	}

	m, _ = setup(t, modeltest.Reply{Text: "ab", Malformed: true})
	if _, err = m.Generate(context.Background(), &model.Request{Messages: []message.Message{message.User("x")}}); err == nil || model.PartialText(err) != "ab" {
		t.Errorf("malformed: %v", err)
	}

	if _, err := anthropic.New("claude-haiku-4-5", nil); !errors.Is(err, model.ErrMissingKey) || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("missing key: %v", err)
	}
	m, _ = setup(t)
	if _, err := m.Generate(context.Background(), &model.Request{Messages: []message.Message{message.System("only system")}}); !errors.Is(err, model.ErrInvalidRequest) {
		t.Errorf("system-only: %v", err)
	}
}
