package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/modeltest"
	"github.com/trellis-go/trellis/model/openai"
)

func setup(t *testing.T, replies ...modeltest.Reply) (*openai.Model, *modeltest.Server) {
	t.Helper()
	srv := modeltest.NewOpenAI(t, replies...)
	m, err := openai.New("gpt-4o", &openai.Options{APIKey: "sk-test", BaseURL: srv.URL + "/v1", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return m, srv
}

var tools = []model.ToolSpec{
	{Name: "get_weather", Description: "Weather for a city", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
	{Name: "get_time", Parameters: json.RawMessage(`{"type":"object","properties":{"tz":{"type":"string"}}}`)},
}

func user(s string) *model.Request {
	return &model.Request{Messages: []message.Message{message.User(s)}}
}

func TestStreamText(t *testing.T) {
	m, _ := setup(t, modeltest.Reply{Text: "Hello there, friend.", TextChunk: 3, Usage: model.Usage{InputTokens: 11, OutputTokens: 5}})
	var deltas []string
	var last model.Chunk
	for c, err := range m.Stream(context.Background(), user("hi")) {
		if err != nil {
			t.Fatal(err)
		}
		if c.Text != "" {
			deltas = append(deltas, c.Text)
		}
		last = c
	}
	if strings.Join(deltas, "") != "Hello there, friend." || len(deltas) != 7 {
		t.Errorf("deltas = %q", deltas)
	}
	if last.FinishReason != model.FinishStop || last.Usage == nil || *last.Usage != (model.Usage{InputTokens: 11, OutputTokens: 5}) {
		t.Errorf("last chunk = %+v usage %+v", last, last.Usage)
	}
}

func TestSplitParallelToolCallsAreAssembled(t *testing.T) {
	calls := []message.ToolCall{
		{ID: "call_a", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Lisbon"}`)},
		{ID: "call_b", Name: "get_time", Arguments: json.RawMessage(`{"tz":"Europe/Lisbon"}`)},
	}
	m, srv := setup(t, modeltest.Reply{Text: "Checking.", ToolCalls: calls, SplitArgs: 2})
	resp, err := m.Generate(context.Background(), &model.Request{Messages: []message.Message{message.User("weather and time in Lisbon")}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != model.FinishToolCalls || len(resp.Message.ToolCalls) != 2 {
		t.Fatalf("resp = %+v", resp)
	}
	for i, want := range calls {
		got := resp.Message.ToolCalls[i]
		if got.ID != want.ID || got.Name != want.Name || string(got.Arguments) != string(want.Arguments) {
			t.Errorf("call %d = %+v, want %+v", i, got, want)
		}
	}
	if resp.Message.Content != "Checking." || resp.Message.Metadata["provider"] != "openai" || resp.Message.Metadata["model"] != "gpt-4o" {
		t.Errorf("message = %+v", resp.Message)
	}
	body := srv.Requests()[0].Body
	if body["stream"] != true || len(body["tools"].([]any)) != 2 {
		t.Errorf("request body = %v", body)
	}
}

func TestRequestWireFormat(t *testing.T) {
	m, srv := setup(t, modeltest.Reply{Text: `{"answer":"42"}`})
	temp := 0.2
	req := &model.Request{
		Messages: []message.Message{
			message.System("be brief"),
			{Role: message.RoleUser, Content: "what is in this picture?", Parts: []message.Part{{Type: message.PartImage, ImageURL: "iVBORw0KGgo=", MIMEType: "image/png"}}},
			message.Assistant("", message.ToolCall{ID: "c1", Name: "get_time", Arguments: json.RawMessage(`{}`)}),
			message.ToolError("c1", "get_time", "clock unavailable"),
		},
		Tools: tools, ToolChoice: "get_time", Temperature: &temp, MaxTokens: 100, Stop: []string{"END"},
		Schema: &model.Schema{Name: "answer", JSON: json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)},
	}
	resp, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Structured) != `{"answer":"42"}` {
		t.Errorf("structured = %s", resp.Structured)
	}
	b := srv.Requests()[0].Body
	msgs := b["messages"].([]any)
	userParts := msgs[1].(map[string]any)["content"].([]any)
	if img := userParts[1].(map[string]any)["image_url"].(map[string]any)["url"]; img != "data:image/png;base64,iVBORw0KGgo=" {
		t.Errorf("image url = %v", img)
	}
	if tc := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any); tc["id"] != "c1" {
		t.Errorf("assistant tool call = %v", tc)
	}
	if tool := msgs[3].(map[string]any); tool["tool_call_id"] != "c1" || tool["content"] != "Error: clock unavailable" {
		t.Errorf("tool result = %v", tool)
	}
	if b["tool_choice"].(map[string]any)["function"].(map[string]any)["name"] != "get_time" {
		t.Errorf("tool_choice = %v", b["tool_choice"])
	}
	if b["temperature"] != 0.2 || b["max_completion_tokens"] != 100.0 || b["stop"].([]any)[0] != "END" {
		t.Errorf("sampling fields = %v %v %v", b["temperature"], b["max_completion_tokens"], b["stop"])
	}
	if rf := b["response_format"].(map[string]any); rf["type"] != "json_schema" || rf["json_schema"].(map[string]any)["name"] != "answer" {
		t.Errorf("response_format = %v", rf)
	}
	if so := b["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options = %v", so)
	}
	if b["stream"] != true {
		t.Errorf("stream = %v, want true", b["stream"])
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "Bearer sk-test" {
		t.Errorf("Authorization = %q", h)
	}
}

// An error event in the middle of a stream ends it with a provider error that keeps the text and
// carries the event's message.
func TestErrorEventMidStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hal\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"other choice\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"f\",\"tool_calls\":null},\"finish_reason\":null}],\"usage\":null}\n\n")
		fmt.Fprint(w, "data: {\"error\":{\"message\":\"overloaded, try later\",\"type\":\"server_error\"}}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" never\"}}]}\n\n")
	}))
	t.Cleanup(srv.Close)
	m, err := openai.New("gpt-4o", &openai.Options{APIKey: "k", BaseURL: srv.URL + "/v1", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := model.Collect(m.Stream(context.Background(), user("hi")))
	var pe *model.ProviderError
	if !errors.As(err, &pe) || pe.Partial != "Half" || !strings.Contains(err.Error(), "overloaded, try later") {
		t.Fatalf("err = %v (partial %q)", err, model.PartialText(err))
	}
	if resp.Message.Content != "Half" {
		t.Errorf("content = %q", resp.Message.Content)
	}
}

func TestStructuredOutputRepairThenTypedError(t *testing.T) {
	schema := &model.Schema{Name: "pick", JSON: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)}
	m, srv := setup(t, modeltest.Reply{Text: `{"n":"three"}`}, modeltest.Reply{Text: "```json\n{\"n\":3}\n```"})
	resp, err := m.Generate(context.Background(), &model.Request{Messages: []message.Message{message.User("pick")}, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Structured) != `{"n":3}` {
		t.Errorf("structured = %s", resp.Structured)
	}
	repair := srv.Requests()[1].Body["messages"].([]any)
	if last := repair[len(repair)-1].(map[string]any)["content"].(string); !strings.Contains(last, `schema "pick"`) {
		t.Errorf("repair prompt = %q", last)
	}

	m, _ = setup(t, modeltest.Reply{Text: "no"}, modeltest.Reply{Text: `{"n":1.5}`})
	_, err = m.Generate(context.Background(), &model.Request{Messages: []message.Message{message.User("pick")}, Schema: schema})
	var se *model.StructuredOutputError
	if !errors.As(err, &se) || !errors.Is(err, model.ErrStructuredOutput) || se.Attempts != 2 || se.Output != `{"n":1.5}` {
		t.Fatalf("err = %v", err)
	}
}

func TestRetryAfterOn429And500(t *testing.T) {
	m, srv := setup(t,
		modeltest.Reply{Status: 429, RetryAfter: "1", ErrorMessage: "slow down"},
		modeltest.Reply{Status: 500},
		modeltest.Reply{Text: "ok"},
	)
	resp, err := m.Generate(context.Background(), user("hi"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if resp.Message.Content != "ok" || len(reqs) != 3 {
		t.Fatalf("content %q after %d requests", resp.Message.Content, len(reqs))
	}
	if gap := reqs[1].At.Sub(reqs[0].At); gap < 900*time.Millisecond {
		t.Errorf("retried after %v, Retry-After asked for 1s", gap)
	}
}

func TestPersistentFailureIsTypedError(t *testing.T) {
	m, srv := setup(t, modeltest.Reply{Status: 503, ErrorMessage: "overloaded"}, modeltest.Reply{Status: 503}, modeltest.Reply{Status: 503})
	_, err := m.Generate(context.Background(), user("hi"))
	var pe *model.ProviderError
	if !errors.As(err, &pe) || pe.StatusCode != 503 || pe.Provider != "openai" {
		t.Fatalf("err = %#v", err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d attempts, want 1 + 2 retries", n)
	}
}

func TestContextWindowExceeded(t *testing.T) {
	m, _ := setup(t, modeltest.Reply{Status: 400, ErrorCode: "context_length_exceeded", ErrorMessage: "This model's maximum context length is 128000 tokens."})
	_, err := m.Generate(context.Background(), user("long"))
	if !errors.Is(err, model.ErrContextWindowExceeded) {
		t.Fatalf("err = %v", err)
	}
}

func TestCutStreamKeepsPartialText(t *testing.T) {
	m, _ := setup(t, modeltest.Reply{Text: "The answer is forty-two.", TextChunk: 4, CutAfter: 3})
	resp, err := m.Generate(context.Background(), user("hi"))
	if err == nil {
		t.Fatal("cut stream did not fail")
	}
	if got := model.PartialText(err); got != "The answer i" {
		t.Errorf("partial = %q (err %v)", got, err)
	}
	if resp == nil || resp.Message.Content != "The answer i" {
		t.Errorf("resp = %+v", resp)
	}
}

func TestMalformedEvent(t *testing.T) {
	m, _ := setup(t, modeltest.Reply{Text: "Hi", Malformed: true})
	_, err := m.Generate(context.Background(), user("hi"))
	var pe *model.ProviderError
	if !errors.As(err, &pe) || pe.Partial != "Hi" {
		t.Fatalf("err = %v", err)
	}
}

func TestMalformedToolArgumentsKeptAsString(t *testing.T) {
	m, _ := setup(t, modeltest.Reply{ToolCalls: []message.ToolCall{{ID: "c", Name: "get_weather", Arguments: json.RawMessage(`{"city":`)}}})
	resp, err := m.Generate(context.Background(), &model.Request{Messages: []message.Message{message.User("x")}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(resp.Message.ToolCalls[0].Arguments); got != `"{\"city\":"` {
		t.Errorf("arguments = %s", got)
	}
	if _, err := json.Marshal(resp.Message); err != nil {
		t.Errorf("message with bad arguments cannot be stored: %v", err)
	}
}

func TestCancellationAndEarlyBreak(t *testing.T) {
	gate := make(chan struct{})
	m, _ := setup(t, modeltest.Reply{Text: "one two three four", TextChunk: 4, Gate: gate})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { gate <- struct{}{} }()
	var err error
	for c, e := range m.Stream(ctx, user("hi")) {
		if e != nil {
			err = e
			break
		}
		if c.Text != "" {
			cancel()
		}
	}
	close(gate)
	if !errors.Is(err, context.Canceled) || model.PartialText(err) != "one " {
		t.Errorf("err = %v, partial %q", err, model.PartialText(err))
	}

	m, _ = setup(t, modeltest.Reply{Text: "one two three four", TextChunk: 4})
	n := 0
	for range m.Stream(context.Background(), user("hi")) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("early break yielded %d", n)
	}
}

func TestBadInput(t *testing.T) {
	if _, err := openai.New("gpt-4o", nil); !errors.Is(err, model.ErrMissingKey) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("missing key: %v", err)
	}
	if _, err := openai.New("", &openai.Options{APIKey: "k"}); !errors.Is(err, model.ErrConfig) {
		t.Errorf("missing model: %v", err)
	}
	if _, err := openai.New("llama3.1", &openai.Options{Provider: "openai-compatible"}); err != nil {
		t.Errorf("compatible servers need no key: %v", err)
	}
	m, srv := setup(t)
	for _, req := range []*model.Request{
		{},
		{Messages: []message.Message{message.User("x")}, ToolChoice: "nope", Tools: tools},
		{Messages: []message.Message{message.User("x")}, Tools: []model.ToolSpec{{Name: "t", Parameters: json.RawMessage(`[1]`)}}},
		{Messages: []message.Message{message.User("x")}, Schema: &model.Schema{JSON: json.RawMessage(`{"type":12}`)}},
		{Messages: []message.Message{{Role: message.RoleTool, Content: "x"}}},
	} {
		if _, err := m.Generate(context.Background(), req); !errors.Is(err, model.ErrInvalidRequest) {
			t.Errorf("request %+v: err = %v", req, err)
		}
	}
	if len(srv.Requests()) != 0 {
		t.Error("invalid requests reached the server")
	}
}

func TestCompatibleUsesMaxTokens(t *testing.T) {
	srv := modeltest.NewOpenAI(t, modeltest.Reply{Text: "hi"})
	m, err := openai.New("llama3.1", &openai.Options{Provider: "openai-compatible", BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	r := user("x")
	r.MaxTokens = 7
	resp, err := m.Generate(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if b := srv.Requests()[0].Body; b["max_tokens"] != 7.0 || b["model"] != "llama3.1" {
		t.Errorf("body = %v", b)
	}
	if resp.Message.Metadata["provider"] != "openai-compatible" {
		t.Errorf("metadata = %v", resp.Message.Metadata)
	}
}
