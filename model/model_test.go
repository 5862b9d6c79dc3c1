package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/scripted"
)

func TestCallAssemblerJoinsSplitFragments(t *testing.T) {
	var a model.CallAssembler
	for _, d := range []model.ToolCallDelta{
		{Index: 1, ID: "b", Name: "get_"}, // calls may interleave
		{Index: 0, ID: "a", Name: "sea"},
		{Index: 0, Name: "rch", Arguments: `{"q":`},
		{Index: 1, Name: "time"},
		{Index: 0, Arguments: `"go"}`},
	} {
		a.Add(d)
	}
	calls := a.Finish()
	if len(calls) != 2 || calls[0].ID != "a" || calls[0].Name != "search" || string(calls[0].Arguments) != `{"q":"go"}` ||
		calls[1].Name != "get_time" || string(calls[1].Arguments) != "{}" {
		t.Fatalf("calls = %+v", calls)
	}
	if a.Len() != 0 {
		t.Error("Finish must reset")
	}
	a.Add(model.ToolCallDelta{Name: "x", Arguments: `{"broken`})
	c := a.Finish()[0]
	if !strings.HasPrefix(c.ID, "call_") || string(c.Arguments) != `"{\"broken"` {
		t.Errorf("call = %+v", c)
	}
}

func TestCollect(t *testing.T) {
	tc := message.ToolCall{ID: "1", Name: "t", Arguments: json.RawMessage(`{}`)}
	u := model.Usage{InputTokens: 3, OutputTokens: 2}
	resp, err := model.Collect(func(yield func(model.Chunk, error) bool) {
		_ = yield(model.Chunk{Text: "Hel"}, nil) && yield(model.Chunk{Text: "lo"}, nil) &&
			yield(model.Chunk{ToolCall: &tc}, nil) &&
			yield(model.Chunk{Usage: &u, FinishReason: model.FinishToolCalls, Metadata: map[string]any{"provider": "x"}}, nil)
	})
	if err != nil || resp.Message.Content != "Hello" || len(resp.Message.ToolCalls) != 1 || resp.Usage.Total() != 5 ||
		resp.FinishReason != model.FinishToolCalls || resp.Message.Metadata["provider"] != "x" || resp.Message.Role != message.RoleAssistant {
		t.Fatalf("resp = %+v, err %v", resp, err)
	}

	boom := errors.New("connection reset")
	resp, err = model.Collect(func(yield func(model.Chunk, error) bool) {
		_ = yield(model.Chunk{Text: "partial"}, nil) && yield(model.Chunk{}, boom)
	})
	if !errors.Is(err, boom) || model.PartialText(err) != "partial" || resp.Message.Content != "partial" {
		t.Errorf("err = %v, partial %q", err, model.PartialText(err))
	}
}

func TestParseSpec(t *testing.T) {
	good := map[string]model.Spec{
		"openai:gpt-4o":               {Provider: "openai", Model: "gpt-4o"},
		" Anthropic:claude-haiku-4-5": {Provider: "anthropic", Model: "claude-haiku-4-5"},
		"openai-compatible:llama3.1@http://localhost:11434/v1": {Provider: "openai-compatible", Model: "llama3.1", BaseURL: "http://localhost:11434/v1"},
		"offline": {Provider: "offline"},
	}
	for in, want := range good {
		got, err := model.ParseSpec("TRELLIS_MODEL", in)
		if err != nil || got != want {
			t.Errorf("ParseSpec(%q) = %+v, %v", in, got, err)
		}
	}
	if s := (model.Spec{Provider: "openai-compatible", Model: "m", BaseURL: "http://h/v1"}).String(); s != "openai-compatible:m@http://h/v1" {
		t.Errorf("String = %q", s)
	}
	for _, in := range []string{"", "gpt-4o", "openai", "cohere:command", "openai-compatible:m", "openai-compatible:m@nohost"} {
		_, err := model.ParseSpec("TRELLIS_MODEL_FAST", in)
		var ce *model.ConfigError
		if !errors.As(err, &ce) || ce.Setting != "TRELLIS_MODEL_FAST" || ce.Hint == "" || !strings.HasPrefix(err.Error(), "model: ") {
			t.Errorf("ParseSpec(%q) err = %v", in, err)
		}
	}
}

func TestRoles(t *testing.T) {
	def, fast := scripted.New(), scripted.New()
	r := model.NewRoles(def, "offline")
	r2 := r.With(model.RoleFast, fast, "openai:gpt-4o-mini")
	if r.For(model.RoleFast) != def {
		t.Error("With must not change the original")
	}
	if r2.For("FAST") != fast || r2.For(model.RoleStrong) != def || r2.Spec("fast") != "openai:gpt-4o-mini" || r2.Spec("strong") != "offline" {
		t.Error("role lookup wrong")
	}
	if r2.With(model.RoleDefault, fast, "x").Default() != fast {
		t.Error("setting the default role must replace the default")
	}
	// Map wraps every role's model, keeps the specs and the fallback to the default.
	wrapped := map[model.Model]model.Model{}
	r3 := r2.Map(func(m model.Model) model.Model {
		w := bare{m}
		wrapped[m] = w
		return w
	})
	if r3.For(model.RoleFast) != wrapped[fast] || r3.Default() != wrapped[def] || r3.For(model.RoleVision) != wrapped[def] || r3.Spec("fast") != "openai:gpt-4o-mini" {
		t.Error("Map: roles wrong")
	}
	if r2.For(model.RoleFast) != fast {
		t.Error("Map must not change the original")
	}
}

func TestExtractJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:                            `{"a":1}`,
		"Sure!\n```json\n{\"a\":2}\n```":     `{"a":2}`,
		`Here you go: {"a":3} hope it helps`: `{"a":3}`,
		`[1,2]`:                              `[1,2]`,
		"no json here":                       "",
	} {
		if got := string(model.ExtractJSON(in)); got != want {
			t.Errorf("ExtractJSON(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidateNamesTheField(t *testing.T) {
	temp := 3.0
	cases := map[string]*model.Request{
		"Request":                       nil,
		"Messages":                      {},
		"Tools[0].Name":                 {Messages: []message.Message{message.User("x")}, Tools: []model.ToolSpec{{}}},
		"Tools[1].Name":                 {Messages: []message.Message{message.User("x")}, Tools: []model.ToolSpec{{Name: "a"}, {Name: "a"}}},
		"ToolChoice":                    {Messages: []message.Message{message.User("x")}, ToolChoice: model.ToolChoiceRequired},
		"Temperature":                   {Messages: []message.Message{message.User("x")}, Temperature: &temp},
		"MaxTokens":                     {Messages: []message.Message{message.User("x")}, MaxTokens: -1},
		"Schema.JSON":                   {Messages: []message.Message{message.User("x")}, Schema: &model.Schema{}},
		"Messages[0].Role":              {Messages: []message.Message{message.Remove("id")}},
		"Messages[0].Parts[0].ImageURL": {Messages: []message.Message{{Role: message.RoleUser, Parts: []message.Part{{Type: message.PartImage}}}}},
	}
	for field, req := range cases {
		err := req.Validate()
		var re *model.RequestError
		if !errors.As(err, &re) || re.Field != field || !errors.Is(err, model.ErrInvalidRequest) {
			t.Errorf("%s: err = %v", field, err)
		}
	}
}

func TestScriptedModel(t *testing.T) {
	ctx := context.Background()
	call := message.ToolCall{ID: "c", Name: "search", Arguments: json.RawMessage(`{"q":"x"}`)}
	m := scripted.New(scripted.ToolCalls(call), scripted.Text("done"), scripted.Fail("half an ans", errors.New("boom")))
	req := &model.Request{Messages: []message.Message{message.User("go")}}
	r1, err := m.Generate(ctx, req)
	if err != nil || r1.Message.ToolCalls[0].Name != "search" || r1.FinishReason != model.FinishToolCalls {
		t.Fatalf("step 1: %+v %v", r1, err)
	}
	r2, err := model.Collect(m.Stream(ctx, req))
	if err != nil || r2.Message.Content != "done" {
		t.Fatalf("step 2: %+v %v", r2, err)
	}
	r3, err := model.Collect(m.Stream(ctx, req))
	if model.PartialText(err) != "half an ans" || r3.Message.Content != "half an ans" {
		t.Fatalf("step 3: %+v %v", r3, err)
	}
	if _, err := m.Generate(ctx, req); !errors.Is(err, scripted.ErrExhausted) {
		t.Errorf("exhausted: %v", err)
	}
	if len(m.Requests()) != 4 {
		t.Errorf("recorded %d requests", len(m.Requests()))
	}

	schema := &model.Schema{JSON: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)}
	s := scripted.New(scripted.Text("nope"), scripted.Text(`{"ok":true}`))
	resp, err := s.Generate(ctx, &model.Request{Messages: req.Messages, Schema: schema})
	if err != nil || string(resp.Structured) != `{"ok":true}` {
		t.Errorf("repair: %s %v", resp.Structured, err)
	}
}
