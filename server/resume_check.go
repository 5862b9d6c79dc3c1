package server

// A resume is checked, when the run is created, against what the thread's interrupt declares it
// takes: an interrupt whose value is an Agent Inbox request ([agent.HumanInterrupt], a list
// holding one request with its config of allow_accept, allow_edit, allow_respond and
// allow_ignore) declares the response types it accepts. A resume that is not such a response, or
// whose type the request does not allow, is refused with a 400 naming the allowed types, so no
// run is started that would fail on it and the interrupt keeps waiting for a valid answer. An
// interrupt in LangChain v1's human-in-the-loop format ([react.HITLRequest]: action_requests and
// review_configs) takes {"decisions": [...]}, one per action request, of the allowed types; the
// same check refuses any other answer. Interrupts of any other shape take any resume, as before.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

// checkResume checks command.resume of a run on an existing thread against the thread's waiting
// interrupts.
func checkResume(ctx context.Context, g graph.Runnable, threadID string, c *RunCommand) error {
	if c == nil || isNullJSON(c.Resume) || !isNullJSON(c.Goto) {
		return nil
	}
	snap, err := g.State(ctx, checkpoint.Ref{ThreadID: threadID})
	if err != nil {
		return nil // the run reports what is wrong with the thread
	}
	pending := snap.Interrupts()
	if len(pending) == 0 {
		return nil
	}
	var byID map[string]json.RawMessage
	if json.Unmarshal(c.Resume, &byID) == nil && len(byID) > 0 {
		all := true
		for id := range byID {
			all = all && hasInterrupt(pending, id)
		}
		if all { // a map of interrupt IDs answers each by ID
			for _, in := range pending {
				if v, ok := byID[in.ID]; ok {
					if err := checkInboxAnswer(in, v); err != nil {
						return err
					}
				}
			}
			return nil
		}
	}
	if len(pending) != 1 {
		return nil
	}
	return checkInboxAnswer(pending[0], c.Resume)
}

func hasInterrupt(ins []graph.Interruption, id string) bool {
	for _, in := range ins {
		if in.ID == id {
			return true
		}
	}
	return false
}

// inboxRequest reads an interrupt's value as an Agent Inbox request; ok is false for any other
// value.
func inboxRequest(v any) (req agent.HumanInterrupt, ok bool) {
	raw, err := json.Marshal(v)
	if err != nil {
		return req, false
	}
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil || len(list) != 1 {
		return req, false
	}
	if _, has := list[0]["config"]; !has {
		return req, false
	}
	if _, has := list[0]["action_request"]; !has {
		return req, false
	}
	var reqs []agent.HumanInterrupt
	if json.Unmarshal(raw, &reqs) != nil {
		return req, false
	}
	return reqs[0], true
}

// checkInboxAnswer refuses resume when in is an Agent Inbox request, or a LangChain v1 review
// request, that does not take it.
func checkInboxAnswer(in graph.Interruption, resume json.RawMessage) error {
	if review, ok := react.HITLRequestOf(in.Value); ok {
		hint := `answer with {"decisions": [...]}, one per action request in order: {"type": "approve"}, {"type": "edit", "edited_action": {"name": ..., "args": {...}}} or {"type": "reject", "message": ...}, as review_configs allow; the review still waits`
		resp, err := react.ParseHITLResponse(resume)
		if err == nil {
			err = review.Check(resp)
		}
		if err != nil {
			return badRequest(hint, "command.resume does not answer the review of node %s: %v", in.Node, err)
		}
		return nil
	}
	req, ok := inboxRequest(in.Value)
	if !ok {
		return nil
	}
	cfg := req.Config
	allowed := map[string]bool{agent.ResponseAccept: cfg.AllowAccept, agent.ResponseEdit: cfg.AllowEdit,
		agent.ResponseRespond: cfg.AllowRespond, agent.ResponseIgnore: cfg.AllowIgnore}
	var types []string
	for _, t := range []string{agent.ResponseAccept, agent.ResponseEdit, agent.ResponseRespond, agent.ResponseIgnore} {
		if allowed[t] {
			types = append(types, t)
		}
	}
	what := fmt.Sprintf("the request %q (node %s)", req.ActionRequest.Action, in.Node)
	hint := fmt.Sprintf("answer with [{\"type\": T, \"args\": ...}] where T is one of %s; the interrupt still waits", strings.Join(types, ", "))
	resp, err := agent.ParseHumanResponse(resume)
	if err != nil {
		return badRequest(hint, "command.resume does not answer %s: %v", what, err)
	}
	if !allowed[resp.Type] {
		return badRequest(hint, "command.resume has type %q, which %s does not take; allowed types: %s", resp.Type, what, strings.Join(types, ", "))
	}
	switch resp.Type {
	case agent.ResponseRespond:
		var s string
		if json.Unmarshal(resp.Args, &s) != nil {
			return badRequest(hint, "a %q answer to %s needs args as a string (the text of the response); got %s", resp.Type, what, clipJSON(resp.Args))
		}
	case agent.ResponseEdit:
		var ar map[string]json.RawMessage
		if json.Unmarshal(resp.Args, &ar) != nil || ar == nil {
			return badRequest(hint, "an %q answer to %s needs args as an object {\"action\": ..., \"args\": {...}}; got %s", resp.Type, what, clipJSON(resp.Args))
		}
	}
	return nil
}

func clipJSON(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return "nothing"
	}
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
