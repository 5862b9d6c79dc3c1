// Package message defines the conversation messages that flow between graphs, models and tools,
// and the add-messages merge that graph state uses for conversation lists.
//
// It sits at the bottom of trellis: the graph runtime, the model providers, the tools and the
// server all speak in these types, so none of them needs to import another to exchange a turn.
package message

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// Role says who wrote a message.
type Role string

// The roles of a conversation. RoleRemove is not a turn: a message with this role, merged by
// [Add], deletes the message with its ID (or all messages, for [RemoveAllID]).
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
	RoleRemove    Role = "remove"
)

// RemoveAllID is the ID of a removal marker that clears the whole list.
const RemoveAllID = "__remove_all__"

// PartType names the kind of a content part.
type PartType string

// Content part kinds.
const (
	PartText  PartType = "text"
	PartImage PartType = "image"
)

// Part is one piece of a multimodal message: text, or an image given by URL or data: URL.
type Part struct {
	Type     PartType `json:"type"`
	Text     string   `json:"text,omitempty"`
	ImageURL string   `json:"image_url,omitempty"`
	// MIMEType is the image's media type when ImageURL holds raw base64 rather than a URL.
	MIMEType string `json:"mime_type,omitempty"`
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Message is one turn of a conversation.
//
// Plain text lives in Content; a multimodal user turn lists its pieces in Parts (Content may then be
// empty). An assistant turn may carry ToolCalls; a tool turn answers one of them by ToolCallID and
// says whether the tool failed in IsError.
type Message struct {
	ID         string         `json:"id,omitempty"`
	Role       Role           `json:"role"`
	Content    string         `json:"content,omitempty"`
	Parts      []Part         `json:"parts,omitempty"`
	ToolCalls  []ToolCall     `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
	IsError    bool           `json:"is_error,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
}

// System returns a system message.
func System(text string) Message { return Message{Role: RoleSystem, Content: text} }

// User returns a user message.
func User(text string) Message { return Message{Role: RoleUser, Content: text} }

// Assistant returns an assistant message with text and, optionally, tool calls.
func Assistant(text string, calls ...ToolCall) Message {
	return Message{Role: RoleAssistant, Content: text, ToolCalls: calls}
}

// ToolResult returns the answer to the tool call with the given ID.
func ToolResult(callID, toolName, content string) Message {
	return Message{Role: RoleTool, ToolCallID: callID, Name: toolName, Content: content}
}

// ToolError returns a tool result that reports a failure the model can read and act on.
func ToolError(callID, toolName, content string) Message {
	m := ToolResult(callID, toolName, content)
	m.IsError = true
	return m
}

// Remove returns a marker that, merged by [Add], deletes the message with the given ID.
func Remove(id string) Message { return Message{Role: RoleRemove, ID: id} }

// RemoveAll returns a marker that, merged by [Add], deletes every earlier message.
func RemoveAll() Message { return Message{Role: RoleRemove, ID: RemoveAllID} }

// Text returns the message's text: Content followed by the text of its parts.
func (m Message) Text() string {
	if len(m.Parts) == 0 {
		return m.Content
	}
	var b strings.Builder
	b.WriteString(m.Content)
	for _, p := range m.Parts {
		if p.Type == PartText && p.Text != "" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// NewID returns a fresh random message ID.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
