package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/trellis-go/trellis/graph"
)

// HumanInterrupt is what a run surfaces when it needs a person: the Agent Inbox schema, so any
// inbox UI that speaks it can show the request and send back a [HumanResponse].
type HumanInterrupt struct {
	ActionRequest ActionRequest `json:"action_request"`
	Config        InboxConfig   `json:"config"`
	// Description is Markdown shown to the person.
	Description string `json:"description,omitempty"`
}

// ActionRequest names the action awaiting review and its arguments, which the person may edit.
type ActionRequest struct {
	Action string         `json:"action"`
	Args   map[string]any `json:"args"`
}

// InboxConfig says which answers the person may give.
type InboxConfig struct {
	AllowIgnore  bool `json:"allow_ignore"`
	AllowRespond bool `json:"allow_respond"`
	AllowEdit    bool `json:"allow_edit"`
	AllowAccept  bool `json:"allow_accept"`
}

// Response types of a [HumanResponse].
const (
	ResponseAccept  = "accept"
	ResponseEdit    = "edit"
	ResponseRespond = "response"
	ResponseIgnore  = "ignore"
)

// HumanResponse is a person's answer to a [HumanInterrupt]. Args is an ActionRequest for edit,
// a string for response, and empty for accept and ignore.
type HumanResponse struct {
	Type string          `json:"type"`
	Args json.RawMessage `json:"args,omitempty"`
}

// AskHuman pauses the run with req and returns the person's answer, checked against what
// req.Config allows.
//
// On the wire it speaks the open-source Agent Inbox's shape: the interrupt's value is a list
// holding the one request, and the resume value is a list holding the one response
// ([{"type": "accept", "args": null}]); a bare response object is accepted too. See
// [ParseHumanResponse].
func AskHuman(ctx context.Context, req HumanInterrupt) (HumanResponse, error) {
	if req.ActionRequest.Args == nil {
		req.ActionRequest.Args = map[string]any{}
	}
	raw, err := graph.Interrupt(ctx, []HumanInterrupt{req})
	if err != nil {
		return HumanResponse{}, err
	}
	resp, err := ParseHumanResponse(raw)
	if err != nil {
		return resp, fmt.Errorf("agent: the answer to %q: %w", req.ActionRequest.Action, err)
	}
	allowed := map[string]bool{
		ResponseAccept: req.Config.AllowAccept, ResponseEdit: req.Config.AllowEdit,
		ResponseRespond: req.Config.AllowRespond, ResponseIgnore: req.Config.AllowIgnore,
	}
	if !allowed[resp.Type] {
		var ok []string
		for _, t := range []string{ResponseAccept, ResponseEdit, ResponseRespond, ResponseIgnore} {
			if allowed[t] {
				ok = append(ok, t)
			}
		}
		return resp, fmt.Errorf("agent: the answer to %q has type %q; this request allows %s", req.ActionRequest.Action, resp.Type, strings.Join(ok, ", "))
	}
	return resp, nil
}

// ParseHumanResponse reads a resume value sent for a [HumanInterrupt]: a list holding one
// response, as the Agent Inbox sends, or one response object; either as Go values or as JSON
// (json.RawMessage, []byte or a string holding JSON).
func ParseHumanResponse(v any) (HumanResponse, error) {
	var data []byte
	switch t := v.(type) {
	case HumanResponse:
		return t, nil
	case []HumanResponse:
		if len(t) != 1 {
			return HumanResponse{}, fmt.Errorf("the resume value holds %d responses; send a list with exactly one, such as [{\"type\": \"accept\"}]", len(t))
		}
		return t[0], nil
	case json.RawMessage:
		data = t
	case []byte:
		data = t
	case string:
		data = []byte(t)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return HumanResponse{}, fmt.Errorf("the resume value cannot be read as a response: %w", err)
		}
		data = b
	}
	trimmed := strings.TrimSpace(string(data))
	if strings.HasPrefix(trimmed, "[") {
		var list []HumanResponse
		if err := json.Unmarshal(data, &list); err != nil {
			return HumanResponse{}, fmt.Errorf("the resume value is not a list of responses {type, args}: %w", err)
		}
		if len(list) != 1 {
			return HumanResponse{}, fmt.Errorf("the resume value holds %d responses; send a list with exactly one, such as [{\"type\": \"accept\"}]", len(list))
		}
		return list[0], nil
	}
	var r HumanResponse
	if err := json.Unmarshal(data, &r); err != nil || r.Type == "" {
		return HumanResponse{}, fmt.Errorf("the resume value %s is not a response; send [{\"type\": \"accept\"|\"ignore\"|\"response\"|\"edit\", \"args\": ...}]", truncateJSON(trimmed))
	}
	return r, nil
}

func truncateJSON(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
