package react

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

// Decision is what a reviewer decides about a tool call.
type Decision string

// The decisions of LangChain v1's human-in-the-loop format.
const (
	DecisionApprove Decision = "approve" // run the call as it is
	DecisionEdit    Decision = "edit"    // run it with the reviewer's tool name and arguments
	DecisionReject  Decision = "reject"  // do not run it; the model reads the reviewer's message
)

// ReviewFormat is the wire format of a review's interrupt and of the answer a run resumes with.
type ReviewFormat string

const (
	// FormatLangChain is LangChain v1's human-in-the-loop format: one interrupt for every call
	// of a turn that needs review, {"action_requests": [...], "review_configs": [...]}, answered
	// by {"decisions": [...]} in the same order. See [HITLRequest] and [HITLResponse].
	FormatLangChain ReviewFormat = "langchain"
	// FormatInbox is the Agent Inbox format the apps and Options.Approve use: one interrupt per
	// call, an agent.HumanInterrupt, answered with accept, edit, respond or ignore.
	FormatInbox ReviewFormat = "inbox"
)

// ToolReview says how a tool's calls are reviewed. The zero value allows every decision.
type ToolReview struct {
	// Allowed lists the decisions the reviewer may take; empty means approve, edit and reject.
	Allowed []Decision
	// Description is shown with each call, before its arguments; empty means
	// HumanInTheLoopOptions.Description.
	Description string
}

// HumanInTheLoopOptions configure [HumanInTheLoop].
type HumanInTheLoopOptions struct {
	// Tools maps each tool whose calls need review to how they are reviewed (nil: every
	// decision allowed). Calls of other tools run without review.
	Tools map[string]*ToolReview
	// Description is shown for a call whose tool's review has none; empty means "Tool execution
	// requires approval".
	Description string
	// Format is the wire format; empty means FormatLangChain.
	Format ReviewFormat
}

// HITLRequest is the interrupt a review raises in FormatLangChain.
type HITLRequest struct {
	ActionRequests []HITLAction       `json:"action_requests"`
	ReviewConfigs  []HITLReviewConfig `json:"review_configs"`
	// Error, when the review is asked again, says what was wrong with the last answer (an
	// addition to LangChain's format; clients that do not know it ignore it).
	Error string `json:"error,omitempty"`
}

// HITLRequestOf reads an interrupt's value as a FormatLangChain review request; ok is false for
// any other value.
func HITLRequestOf(v any) (req HITLRequest, ok bool) {
	if r, is := v.(HITLRequest); is {
		return r, true
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return req, false
	}
	var shape map[string]json.RawMessage
	if json.Unmarshal(raw, &shape) != nil || shape["action_requests"] == nil || shape["review_configs"] == nil {
		return req, false
	}
	if json.Unmarshal(raw, &req) != nil || len(req.ActionRequests) == 0 {
		return req, false
	}
	return req, true
}

// Check reports what is wrong with an answer to the review: one decision per action request,
// each of a type its tool's review config allows, an edit with the edited action's name.
func (r HITLRequest) Check(resp HITLResponse) error {
	if len(resp.Decisions) != len(r.ActionRequests) {
		return fmt.Errorf("the review answered %d decisions for %d tool calls; send one decision per action request, in order", len(resp.Decisions), len(r.ActionRequests))
	}
	allowed := map[string][]Decision{}
	for _, c := range r.ReviewConfigs {
		allowed[c.ActionName] = c.AllowedDecisions
	}
	for i, d := range resp.Decisions {
		name := r.ActionRequests[i].Name
		ok := allowed[name]
		if ok == nil {
			ok = []Decision{DecisionApprove, DecisionEdit, DecisionReject}
		}
		if !slices.Contains(ok, d.Type) {
			return fmt.Errorf("decision %d (%q) is not allowed for tool %q; allowed: %s", i, d.Type, name, joinDecisions(ok))
		}
		if d.Type == DecisionEdit && (d.EditedAction == nil || d.EditedAction.Name == "") {
			return fmt.Errorf("decision %d edits the call of %s but has no edited_action with a name and args", i, name)
		}
	}
	return nil
}

// HITLAction is one tool call shown for review, or the call as a reviewer edited it.
type HITLAction struct {
	Name        string         `json:"name"`
	Args        map[string]any `json:"args"`
	Description string         `json:"description,omitempty"`
}

// HITLReviewConfig lists the decisions allowed for one tool's calls.
type HITLReviewConfig struct {
	ActionName       string     `json:"action_name"`
	AllowedDecisions []Decision `json:"allowed_decisions"`
}

// HITLResponse is the answer a review resumes with in FormatLangChain: one decision per action
// request, in the same order.
type HITLResponse struct {
	Decisions []HITLDecision `json:"decisions"`
}

// HITLDecision decides about one call: EditedAction for an edit, Message (optional) for a
// rejection.
type HITLDecision struct {
	Type         Decision    `json:"type"`
	EditedAction *HITLAction `json:"edited_action,omitempty"`
	Message      string      `json:"message,omitempty"`
}

// HumanInTheLoop pauses the run after the model asks for calls of the listed tools, so a person
// approves, edits or rejects each before anything runs. Approved and edited calls run; a
// rejected call gets a tool message with the reviewer's words, and when every call was rejected
// the model answers again with them in view. Its node is "human_in_the_loop.after_model".
func HumanInTheLoop(o HumanInTheLoopOptions) (Middleware, error) {
	if len(o.Tools) == 0 {
		return Middleware{}, fmt.Errorf("react: HumanInTheLoop: name the tools whose calls need review in Tools")
	}
	o.Format = cmp.Or(o.Format, FormatLangChain)
	if o.Format != FormatLangChain && o.Format != FormatInbox {
		return Middleware{}, fmt.Errorf("react: HumanInTheLoop: unknown format %q; use FormatLangChain or FormatInbox", o.Format)
	}
	for name, r := range o.Tools {
		if r == nil {
			continue
		}
		for _, d := range r.Allowed {
			if d != DecisionApprove && d != DecisionEdit && d != DecisionReject {
				return Middleware{}, fmt.Errorf("react: HumanInTheLoop: tool %q allows unknown decision %q; use approve, edit or reject", name, d)
			}
		}
	}
	review := func(ctx context.Context, s State) (*Update, error) {
		pending := pendingCalls(s.Messages)
		if !slices.ContainsFunc(pending, func(c message.ToolCall) bool { _, ok := o.Tools[c.Name]; return ok }) {
			return nil, nil
		}
		if o.Format == FormatInbox {
			return reviewInbox(ctx, s, pending, o.Tools)
		}
		return reviewLangChain(ctx, s, pending, o)
	}
	return Middleware{Name: "human_in_the_loop", AfterModel: review}, nil
}

func (o HumanInTheLoopOptions) allowed(tool string) []Decision {
	if r := o.Tools[tool]; r != nil && len(r.Allowed) > 0 {
		return r.Allowed
	}
	return []Decision{DecisionApprove, DecisionEdit, DecisionReject}
}

func (o HumanInTheLoopOptions) describe(c message.ToolCall) string {
	d := o.Description
	if r := o.Tools[c.Name]; r != nil && r.Description != "" {
		d = r.Description
	}
	if d == "" {
		d = "Tool execution requires approval"
	}
	return fmt.Sprintf("%s\n\nTool: %s\nArgs: %s", d, c.Name, compactJSON(c.Arguments))
}

// reviewLangChain raises one interrupt for every reviewed call of the turn and applies the
// decisions: edits change the calls in the assistant message (same ID: replaced in place),
// rejections add tool messages.
func reviewLangChain(ctx context.Context, s State, pending []message.ToolCall, o HumanInTheLoopOptions) (*Update, error) {
	var req HITLRequest
	var reviewed []message.ToolCall
	configs := map[string]bool{}
	for _, c := range pending {
		if _, ok := o.Tools[c.Name]; !ok {
			continue
		}
		reviewed = append(reviewed, c)
		req.ActionRequests = append(req.ActionRequests, HITLAction{Name: c.Name, Args: argsMap(c.Arguments), Description: o.describe(c)})
		if !configs[c.Name] {
			configs[c.Name] = true
			req.ReviewConfigs = append(req.ReviewConfigs, HITLReviewConfig{ActionName: c.Name, AllowedDecisions: o.allowed(c.Name)})
		}
	}
	// A wrong answer does not fail the run: the review is asked again, saying what was wrong,
	// and the calls still wait.
	var resp HITLResponse
	for {
		answer, err := graph.Interrupt(ctx, req)
		if err != nil {
			return nil, err
		}
		resp, err = ParseHITLResponse(answer)
		if err == nil {
			err = req.Check(resp)
		}
		if err == nil {
			break
		}
		req.Error = err.Error()
	}
	edits := map[string]message.ToolCall{}
	var rejected []message.Message
	for i, d := range resp.Decisions {
		c := reviewed[i]
		switch d.Type {
		case DecisionEdit:
			args, err := json.Marshal(cmpOrArgs(d.EditedAction.Args))
			if err != nil {
				return nil, fmt.Errorf("decision %d: edited args: %w", i, err)
			}
			edits[c.ID] = message.ToolCall{ID: c.ID, Name: d.EditedAction.Name, Arguments: args}
		case DecisionReject:
			text := d.Message
			if text == "" {
				text = fmt.Sprintf("The person reviewing this call rejected it: %s was not run.", c.Name)
			}
			rejected = append(rejected, message.ToolError(c.ID, c.Name, text))
		}
	}
	var u Update
	if len(edits) > 0 {
		u.Messages = append(u.Messages, withCalls(s.Messages, edits))
	}
	u.Messages = append(u.Messages, rejected...)
	if len(u.Messages) == 0 {
		return nil, nil
	}
	return &u, nil
}

// reviewInbox asks about each reviewed call in the Agent Inbox format, as Options.Approve does.
func reviewInbox(ctx context.Context, s State, pending []message.ToolCall, tools map[string]*ToolReview) (*Update, error) {
	run, skipped, abort, err := reviewCalls(ctx, pending, func(c message.ToolCall) bool { _, ok := tools[c.Name]; return ok })
	if err != nil {
		return nil, err
	}
	edits := map[string]message.ToolCall{}
	for _, c := range run {
		for _, p := range pending {
			if p.ID == c.ID && (p.Name != c.Name || string(p.Arguments) != string(c.Arguments)) {
				edits[c.ID] = c
			}
		}
	}
	var u Update
	if len(edits) > 0 {
		u.Messages = append(u.Messages, withCalls(s.Messages, edits))
	}
	for _, c := range pending {
		if m, ok := skipped[c.ID]; ok {
			u.Messages = append(u.Messages, m)
		}
	}
	if abort {
		u.Jump = JumpEnd
	}
	if len(u.Messages) == 0 && u.Jump == "" {
		return nil, nil
	}
	return &u, nil
}

// withCalls is the last assistant message with the edited calls in place of the originals.
func withCalls(msgs []message.Message, edits map[string]message.ToolCall) message.Message {
	last := *lastAssistant(msgs)
	last.ToolCalls = slices.Clone(last.ToolCalls)
	for i, c := range last.ToolCalls {
		if e, ok := edits[c.ID]; ok {
			last.ToolCalls[i] = e
		}
	}
	return last
}

// ParseHITLResponse reads the answer a FormatLangChain review resumes with: a HITLResponse, as
// a Go value or its JSON.
func ParseHITLResponse(v any) (HITLResponse, error) {
	if r, ok := v.(HITLResponse); ok {
		return r, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return HITLResponse{}, fmt.Errorf("the review's answer cannot be read: %w", err)
	}
	var r HITLResponse
	if err := json.Unmarshal(data, &r); err != nil || r.Decisions == nil {
		return HITLResponse{}, fmt.Errorf(`the review's answer %.200s is not {"decisions": [...]}; resume with one decision per action request ({"type": "approve"}, {"type": "edit", "edited_action": {"name", "args"}} or {"type": "reject", "message"})`, data)
	}
	return r, nil
}

func argsMap(raw json.RawMessage) map[string]any {
	args := map[string]any{}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &args)
	}
	return args
}

func cmpOrArgs(a map[string]any) map[string]any {
	if a == nil {
		return map[string]any{}
	}
	return a
}

func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	return string(raw)
}

func joinDecisions(ds []Decision) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = string(d)
	}
	return strings.Join(s, ", ")
}
