package server

import (
	"encoding/json"
	"strings"
)

// MessageChunk is one streamed piece of a message: what a "messages" event of a run streamed
// with "messages-tuple" carries ([chunk, metadata]).
type MessageChunk struct {
	// Text is the chunk's text: its content when that is a string, or its text blocks joined
	// when the content is a list of blocks (images and other blocks are left out).
	Text string
	// Type is the message's LangChain type: "AIMessageChunk" for a model's tokens, or "ai",
	// "tool", "human", "system" for whole messages a node wrote.
	Type string
	// Node is the node the chunk came from (the metadata's langgraph_node); empty when the
	// metadata does not say.
	Node string
	// Namespace is the subgraph the chunk came from (the event's name past "messages|"); nil
	// for the graph's top level.
	Namespace []string
}

// FromAssistant reports whether the chunk is part of an assistant's answer: a model's message,
// not a tool's result, the user's message or a system prompt.
func (c MessageChunk) FromAssistant() bool {
	switch c.Type {
	case "", "ai", "AIMessageChunk", "AIMessage", "assistant":
		return true
	}
	return false
}

// MessageChunk returns the message chunk a "messages" event (or a subgraph's "messages|...")
// carries; ok is false for any other event, or data not in the [chunk, metadata] shape.
func (e RunEvent) MessageChunk() (c MessageChunk, ok bool) {
	name, ns, _ := strings.Cut(e.Event, "|")
	if name != "messages" {
		return c, false
	}
	var pair []json.RawMessage
	if json.Unmarshal(e.Data, &pair) != nil || len(pair) == 0 {
		return c, false
	}
	var chunk struct {
		Type    string `json:"type"`
		Role    string `json:"role"` // trellis's own message shape
		Content any    `json:"content"`
	}
	if json.Unmarshal(pair[0], &chunk) != nil {
		return c, false
	}
	c.Type = chunk.Type
	if c.Type == "" {
		c.Type = map[string]string{"assistant": "ai", "user": "human", "tool": "tool", "system": "system"}[chunk.Role]
	}
	switch v := chunk.Content.(type) {
	case string:
		c.Text = v
	case []any:
		var b strings.Builder
		for _, part := range v {
			if m, ok := part.(map[string]any); ok && m["type"] == "text" {
				if s, ok := m["text"].(string); ok {
					b.WriteString(s)
				}
			}
		}
		c.Text = b.String()
	}
	if len(pair) > 1 {
		var md struct {
			Node string `json:"langgraph_node"`
		}
		if json.Unmarshal(pair[1], &md) == nil {
			c.Node = md.Node
		}
	}
	if ns != "" {
		c.Namespace = strings.Split(ns, "|")
	}
	return c, true
}

// ChunkText is the text an assistant streams in this event: the text of a model's message
// chunk in a "messages" event, "" for any other event and for the chunks of tool results, user
// messages and system prompts. It is what a chat transport sends as a token:
//
//	for ev, err := range events {
//		...
//		if tok := ev.ChunkText(); tok != "" {
//			send(token(tok))
//		}
//	}
func (e RunEvent) ChunkText() string {
	c, ok := e.MessageChunk()
	if !ok || !c.FromAssistant() {
		return ""
	}
	return c.Text
}
