package graph

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/trellis-go/trellis/internal/fastjson"
	"github.com/trellis-go/trellis/message"
)

// Conversations are most of what agents checkpoint, so message lists are encoded here rather
// than by encoding/json's reflection: the output is sized once from the messages' lengths and
// written in one pass. The encoding is the JSON of message.Message's struct tags, field for
// field; a test compares it with encoding/json's and fails when message.Message gains a field.

// appendMessages appends the JSON array of ms.
func (e *blobEncoder) appendMessages(b []byte, ms []message.Message) ([]byte, error) {
	if ms == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = e.appendMessage(b, &ms[i]); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

func (e *blobEncoder) appendMessage(b []byte, m *message.Message) ([]byte, error) {
	b = append(b, '{')
	if m.ID != "" {
		b = appendJSONString(append(b, `"id":`...), m.ID)
		b = append(b, ',')
	}
	b = appendJSONString(append(b, `"role":`...), string(m.Role))
	if m.Content != "" {
		b = appendJSONString(append(b, `,"content":`...), m.Content)
	}
	if len(m.Parts) > 0 {
		b = append(b, `,"parts":[`...)
		for i, p := range m.Parts {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(append(b, `{"type":`...), string(p.Type))
			if p.Text != "" {
				b = appendJSONString(append(b, `,"text":`...), p.Text)
			}
			if p.ImageURL != "" {
				b = appendJSONString(append(b, `,"image_url":`...), p.ImageURL)
			}
			if p.MIMEType != "" {
				b = appendJSONString(append(b, `,"mime_type":`...), p.MIMEType)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, c := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(append(b, `{"id":`...), c.ID)
			b = appendJSONString(append(b, `,"name":`...), c.Name)
			if len(c.Arguments) > 0 {
				var err error
				if b, err = appendRawJSON(append(b, `,"arguments":`...), c.Arguments); err != nil {
					return b, err
				}
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if m.ToolCallID != "" {
		b = appendJSONString(append(b, `,"tool_call_id":`...), m.ToolCallID)
	}
	if m.Name != "" {
		b = appendJSONString(append(b, `,"name":`...), m.Name)
	}
	if m.IsError {
		b = append(b, `,"is_error":true`...)
	}
	if len(m.Metadata) > 0 {
		var err error
		if b, err = e.appendValue(append(b, `,"metadata":`...), m.Metadata); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendRawJSON appends raw compacted, failing as encoding/json does when it is not JSON.
func appendRawJSON(b []byte, raw json.RawMessage) ([]byte, error) {
	if fastjson.Compact(raw) {
		return append(b, raw...), nil
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return b, fmt.Errorf("tool call arguments are not JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// messagesSize estimates the length of ms's encoding: exact for text with nothing to escape,
// a little over for what is usual, under only for text full of characters to escape (append
// then grows the buffer once).
func messagesSize(ms []message.Message) int {
	n := 2
	for i := range ms {
		m := &ms[i]
		n += 64 + len(m.ID) + len(m.Role) + len(m.Content) + len(m.ToolCallID) + len(m.Name)
		for _, p := range m.Parts {
			n += 64 + len(p.Type) + len(p.Text) + len(p.ImageURL) + len(p.MIMEType)
		}
		for _, c := range m.ToolCalls {
			n += 48 + len(c.ID) + len(c.Name) + len(c.Arguments)
		}
		if len(m.Metadata) > 0 {
			n += 256
		}
	}
	return n + n/32
}
