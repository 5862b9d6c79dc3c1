package model

import (
	"encoding/json"
	"iter"
	"maps"
	"sort"
	"strings"

	"github.com/trellis-go/trellis/message"
)

// Collect gathers a stream into a whole Response: text deltas concatenated, tool calls in the order
// they completed, the last usage and finish reason reported.
//
// On error it returns the turn collected so far together with the error; the error keeps the
// partial text (see [PartialText]).
func Collect(stream iter.Seq2[Chunk, error]) (*Response, error) {
	var (
		text strings.Builder
		resp = &Response{Message: message.Message{Role: message.RoleAssistant}}
	)
	for c, err := range stream {
		if err != nil {
			resp.Message.Content = text.String()
			if PartialText(err) == "" && text.Len() > 0 {
				err = &ProviderError{Provider: providerOf(resp), Model: modelOf(resp), Partial: text.String(), Err: err}
			}
			return resp, err
		}
		text.WriteString(c.Text)
		if c.ToolCall != nil {
			resp.Message.ToolCalls = append(resp.Message.ToolCalls, *c.ToolCall)
		}
		if c.Usage != nil {
			resp.Usage = *c.Usage
		}
		if c.FinishReason != "" {
			resp.FinishReason = c.FinishReason
		}
		if len(c.Metadata) > 0 {
			if resp.Message.Metadata == nil {
				resp.Message.Metadata = map[string]any{}
			}
			maps.Copy(resp.Message.Metadata, c.Metadata)
		}
	}
	resp.Message.Content = text.String()
	if resp.FinishReason == "" {
		resp.FinishReason = FinishStop
		if len(resp.Message.ToolCalls) > 0 {
			resp.FinishReason = FinishToolCalls
		}
	}
	return resp, nil
}

func providerOf(r *Response) string {
	if s, ok := r.Message.Metadata["provider"].(string); ok {
		return s
	}
	return "stream"
}

func modelOf(r *Response) string {
	s, _ := r.Message.Metadata["model"].(string)
	return s
}

// CallAssembler rebuilds whole tool calls from the fragments a provider streams: an ID and name
// first, then the arguments a few characters at a time, possibly interleaved between calls.
// Providers use it; the zero value is ready. It is not safe for concurrent use.
type CallAssembler struct {
	calls map[int]*pendingCall
	// NewID makes an ID for a call whose provider sent none; nil means message.NewID with a
	// "call_" prefix.
	NewID func() string
}

type pendingCall struct {
	id, name string
	args     strings.Builder
}

// Add records one fragment.
func (a *CallAssembler) Add(d ToolCallDelta) {
	if a.calls == nil {
		a.calls = map[int]*pendingCall{}
	}
	p := a.calls[d.Index]
	if p == nil {
		p = &pendingCall{}
		a.calls[d.Index] = p
	}
	if d.ID != "" {
		p.id = d.ID
	}
	p.name += d.Name
	p.args.WriteString(d.Arguments)
}

// Len returns how many calls are being assembled.
func (a *CallAssembler) Len() int { return len(a.calls) }

// Finish returns the assembled calls in index order and resets the assembler.
//
// A call with no arguments gets "{}". Arguments that are not valid JSON are kept as a JSON string
// holding the raw text, so the message can still be stored and the tool node can tell the model
// exactly what it sent.
func (a *CallAssembler) Finish() []message.ToolCall {
	idx := make([]int, 0, len(a.calls))
	for i := range a.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]message.ToolCall, 0, len(idx))
	for _, i := range idx {
		p := a.calls[i]
		id := p.id
		if id == "" {
			if a.NewID != nil {
				id = a.NewID()
			} else {
				id = "call_" + message.NewID()[:24]
			}
		}
		out = append(out, message.ToolCall{ID: id, Name: p.name, Arguments: ToolArguments(p.args.String())})
	}
	a.calls = nil
	return out
}

// ToolArguments turns the raw argument text a model wrote into json.RawMessage: "{}" when empty,
// the text itself when it is valid JSON, and otherwise a JSON string holding the text.
func ToolArguments(raw string) json.RawMessage {
	s := strings.TrimSpace(raw)
	if s == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(raw)
	return b
}
