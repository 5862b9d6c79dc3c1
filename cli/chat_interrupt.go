package cli

import (
	"encoding/json"
	"fmt"
	"strings"
)

// inboxRequest is the Agent Inbox request a run pauses with (agent.HumanInterrupt); the chat
// reads it by its JSON fields so that it needs no import of the agent package.
type inboxRequest struct {
	ActionRequest *struct {
		Action string          `json:"action"`
		Args   json.RawMessage `json:"args"`
	} `json:"action_request"`
	Config *struct {
		AllowIgnore  bool `json:"allow_ignore"`
		AllowRespond bool `json:"allow_respond"`
		AllowEdit    bool `json:"allow_edit"`
		AllowAccept  bool `json:"allow_accept"`
	} `json:"config"`
	Description string `json:"description"`
}

// parseInbox recognises an Agent Inbox request: one object, or a list holding one (the shape of
// the original Agent Inbox, whose answer is then a list as well).
func parseInbox(raw json.RawMessage) (req inboxRequest, list, ok bool) {
	if json.Unmarshal(raw, &req) == nil && req.ActionRequest != nil && req.Config != nil {
		return req, false, true
	}
	var reqs []inboxRequest
	if json.Unmarshal(raw, &reqs) == nil && len(reqs) == 1 && reqs[0].ActionRequest != nil && reqs[0].Config != nil {
		return reqs[0], true, true
	}
	return inboxRequest{}, false, false
}

// answerInterrupt shows one interrupt and reads the user's answer: one of the answers an Agent
// Inbox request allows, or any value (JSON, or else the line as a string) for other requests.
// It returns errChatAborted or io.EOF when the user gives up.
func (s *chatSession) answerInterrupt(in chatInterrupt) (any, error) {
	req, list, ok := parseInbox(in.Value)
	if !ok {
		fmt.Fprintln(s.out, "== the run is waiting for an answer ==")
		fmt.Fprintln(s.out, prettyJSONText(in.Value))
		fmt.Fprintln(s.out, "(type the answer: JSON such as true or {\"ok\": 1}, or plain text for a string)")
		line, err := s.in.readLine("answer> ")
		if err != nil {
			return nil, err
		}
		line = strings.TrimSpace(line)
		var v any
		if json.Unmarshal([]byte(line), &v) == nil {
			return json.RawMessage(line), nil
		}
		return line, nil
	}
	action := req.ActionRequest.Action
	args := req.ActionRequest.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	fmt.Fprintf(s.out, "== approval needed: %s ==\n", action)
	if d := strings.TrimSpace(req.Description); d != "" {
		fmt.Fprintln(s.out, d)
	} else {
		fmt.Fprintf(s.out, "arguments: %s\n", compactJSON(string(args)))
	}
	type choice struct{ name, typ string }
	var choices []choice
	if req.Config.AllowAccept {
		choices = append(choices, choice{"accept", "accept"})
	}
	if req.Config.AllowEdit {
		choices = append(choices, choice{"edit", "edit"})
	}
	if req.Config.AllowRespond {
		choices = append(choices, choice{"respond", "response"})
	}
	if req.Config.AllowIgnore {
		choices = append(choices, choice{"ignore", "ignore"})
	}
	if len(choices) == 0 {
		return nil, fmt.Errorf("the request for %q allows no answer (its config allows neither accept, edit, respond nor ignore); answer it with a tool that can, or start a /new thread", action)
	}
	names := make([]string, len(choices))
	for i, c := range choices {
		names[i] = c.name
	}
	wrap := func(v map[string]any) any {
		if list {
			return []any{v}
		}
		return v
	}
	for {
		line, err := s.in.readLine(strings.Join(names, "/") + "> ")
		if err != nil {
			return nil, err
		}
		word := strings.ToLower(strings.TrimSpace(line))
		var picked *choice
		for i, c := range choices {
			if word != "" && (word == c.name || word == c.typ || strings.HasPrefix(c.name, word)) {
				picked = &choices[i]
				break
			}
		}
		if picked == nil {
			fmt.Fprintf(s.out, "answer one of: %s (the first letter is enough)\n", strings.Join(names, ", "))
			continue
		}
		switch picked.typ {
		case "accept", "ignore":
			return wrap(map[string]any{"type": picked.typ}), nil
		case "response":
			text, err := s.in.readLine("response> ")
			if err != nil {
				return nil, err
			}
			return wrap(map[string]any{"type": "response", "args": text}), nil
		case "edit":
			for {
				text, err := s.in.editLine("arguments> ", compactJSON(string(args)))
				if err != nil {
					return nil, err
				}
				var obj map[string]any
				if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
					fmt.Fprintf(s.out, "the arguments must be a JSON object such as %s; try again\n", compactJSON(string(args)))
					continue
				}
				return wrap(map[string]any{"type": "edit", "args": map[string]any{"action": action, "args": obj}}), nil
			}
		}
	}
}
