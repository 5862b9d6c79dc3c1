package model

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/trellis-go/trellis/message"
)

// Validate checks a Request before it is sent and returns a *[RequestError] naming the first
// problem. Providers call it first, so a bad request fails fast with no network traffic.
func (r *Request) Validate() error {
	if r == nil {
		return &RequestError{Field: "Request", Problem: "is nil", Hint: "pass &model.Request{Messages: ...}"}
	}
	if len(r.Messages) == 0 {
		return &RequestError{Field: "Messages", Problem: "is empty", Hint: "add at least one user message"}
	}
	names := map[string]bool{}
	for i, t := range r.Tools {
		if t.Name == "" {
			return &RequestError{Field: fmt.Sprintf("Tools[%d].Name", i), Problem: "is empty", Hint: "every tool needs a name"}
		}
		if names[t.Name] {
			return &RequestError{Field: fmt.Sprintf("Tools[%d].Name", i), Problem: fmt.Sprintf("%q appears twice", t.Name), Hint: "tool names must be unique"}
		}
		names[t.Name] = true
		if len(t.Parameters) > 0 {
			var obj map[string]any
			if err := json.Unmarshal(t.Parameters, &obj); err != nil {
				return &RequestError{Field: fmt.Sprintf("Tools[%d].Parameters", i), Problem: "is not a JSON object: " + err.Error(), Hint: `use an object schema such as {"type":"object","properties":{}}`}
			}
		}
	}
	switch r.ToolChoice {
	case ToolChoiceAuto, ToolChoiceNone:
	case ToolChoiceRequired:
		if len(r.Tools) == 0 {
			return &RequestError{Field: "ToolChoice", Problem: `is "required" but no tools are given`, Hint: "add tools or leave ToolChoice empty"}
		}
	default:
		if !names[r.ToolChoice] {
			return &RequestError{Field: "ToolChoice", Problem: fmt.Sprintf("names tool %q, which is not in Tools", r.ToolChoice), Hint: "name one of the request's tools"}
		}
	}
	if r.MaxTokens < 0 {
		return &RequestError{Field: "MaxTokens", Problem: fmt.Sprintf("is negative (%d)", r.MaxTokens), Hint: "use 0 for the provider default"}
	}
	if r.Temperature != nil && (*r.Temperature < 0 || *r.Temperature > 2) {
		return &RequestError{Field: "Temperature", Problem: fmt.Sprintf("is %v", *r.Temperature), Hint: "use a value between 0 and 2"}
	}
	if r.Schema != nil {
		if _, err := resolveSchema(r.Schema.JSON); err != nil {
			return &RequestError{Field: "Schema.JSON", Problem: err.Error(), Hint: "give a valid JSON Schema"}
		}
	}
	for i, m := range r.Messages {
		switch m.Role {
		case message.RoleSystem, message.RoleUser, message.RoleAssistant:
		case message.RoleTool:
			if m.ToolCallID == "" {
				return &RequestError{Field: fmt.Sprintf("Messages[%d].ToolCallID", i), Problem: "is empty on a tool result", Hint: "set it to the ID of the call it answers"}
			}
		default:
			return &RequestError{Field: fmt.Sprintf("Messages[%d].Role", i), Problem: fmt.Sprintf("%q is not a conversation role", m.Role), Hint: "use system, user, assistant or tool"}
		}
		for j, p := range m.Parts {
			if p.Type == message.PartImage && p.ImageURL == "" {
				return &RequestError{Field: fmt.Sprintf("Messages[%d].Parts[%d].ImageURL", i, j), Problem: "is empty", Hint: "give an http(s) URL, a data: URL, or base64 with MIMEType"}
			}
		}
	}
	return nil
}

func resolveSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("is empty")
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("is not a JSON Schema: %v", err)
	}
	return s.Resolve(nil)
}

// ExtractJSON returns the JSON value in a model's reply: the whole text when it is JSON, else the
// body of a ```json fence, else the span from the first '{' to the last '}'. It returns nil when
// none of these is valid JSON.
func ExtractJSON(text string) json.RawMessage {
	s := strings.TrimSpace(text)
	if json.Valid([]byte(s)) && s != "" {
		return json.RawMessage(s)
	}
	if i := strings.Index(s, "```"); i >= 0 {
		body := s[i+3:]
		if nl := strings.IndexByte(body, '\n'); nl >= 0 {
			body = body[nl+1:]
		}
		if j := strings.Index(body, "```"); j >= 0 {
			body = strings.TrimSpace(body[:j])
			if json.Valid([]byte(body)) {
				return json.RawMessage(body)
			}
		}
	}
	if i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}'); i >= 0 && j > i {
		if body := s[i : j+1]; json.Valid([]byte(body)) {
			return json.RawMessage(body)
		}
	}
	return nil
}

// CheckStructured finds the JSON in a reply and validates it against schema. It returns the JSON,
// or a description of what is wrong.
func CheckStructured(schema *Schema, text string) (json.RawMessage, error) {
	raw := ExtractJSON(text)
	if raw == nil {
		return nil, fmt.Errorf("the reply is not JSON")
	}
	rs, err := resolveSchema(schema.JSON)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %v", schema.SchemaName(), err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	if err := rs.Validate(v); err != nil {
		return nil, err
	}
	return raw, nil
}

// GenerateStructured runs gen for a request with a Schema, validates the reply, and on a mismatch
// asks once more with the bad reply and the validation problem appended to the conversation. A
// second mismatch is a *[StructuredOutputError]. Usage of both attempts is added up. Requests
// without a Schema are passed to gen unchanged. Providers build Generate on it.
func GenerateStructured(ctx context.Context, req *Request, gen func(context.Context, *Request) (*Response, error)) (*Response, error) {
	resp, err := gen(ctx, req)
	if err != nil || req.Schema == nil {
		return resp, err
	}
	raw, problem := CheckStructured(req.Schema, resp.Message.Content)
	if problem == nil {
		resp.Structured = raw
		return resp, nil
	}
	repair := *req
	repair.Messages = append(append([]message.Message(nil), req.Messages...),
		message.Assistant(resp.Message.Content),
		message.User(fmt.Sprintf("Your reply does not match the JSON schema %q: %v. Reply again with only a JSON value that matches the schema, and no other text.", req.Schema.SchemaName(), problem)),
	)
	first := resp.Usage
	resp, err = gen(ctx, &repair)
	if err != nil {
		return resp, err
	}
	resp.Usage = resp.Usage.Add(first)
	raw, problem = CheckStructured(req.Schema, resp.Message.Content)
	if problem != nil {
		return resp, &StructuredOutputError{Schema: req.Schema.SchemaName(), Output: resp.Message.Content, Problem: problem.Error(), Attempts: 2}
	}
	resp.Structured = raw
	return resp, nil
}
