package server

import (
	"encoding/json"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

// encodedJSON is an event's data already encoded: the run's emit takes it as it is.
type encodedJSON []byte

// tupleOnly reports whether a run's token events are all messages-tuple events, which
// tokenEncoder writes; the "messages" mode (accumulated text) and the "events" mode keep
// state across tokens and go through convert.
func (c *converter) tupleOnly() bool {
	return c.events == nil && c.wants("messages-tuple") && !c.wants("messages")
}

// tokenEncoder writes the data of a run's messages-tuple events, [message chunk, metadata],
// byte for byte as convert and json.Marshal would, at a fraction of their cost: tokens are most
// of what a streaming run sends. The metadata's encoding comes from the converter, which makes
// it once per message (messageMeta); of a plain text chunk of an assistant message only the
// text is encoded, the rest of the message's encoding is kept from its first chunk (it is the
// same for every chunk of the message).
type tokenEncoder struct {
	c *converter
	// msg is the chunk the template was made from, with its content emptied; msgTail is its
	// encoding after the content.
	msg     message.Message
	msgTail []byte
}

// encode returns the data of the messages-tuple event of a token, or ok false when the
// converter must make it (metadata that has no encoding).
func (t *tokenEncoder) encode(ev graph.Event, chunk graph.MessageChunk) (data []byte, ok bool) {
	cm := t.c.messageMeta(ev, chunk)
	if cm.raw == nil {
		return nil, false
	}
	m := chunk.Message
	if !plainText(m) {
		msg, err := json.Marshal(toLangChainChunk(m))
		if err != nil {
			return nil, false
		}
		out := make([]byte, 0, len(msg)+len(cm.raw)+3)
		out = append(append(append(out, '['), msg...), ',')
		return append(append(out, cm.raw...), ']'), true
	}
	const head = `{"content":`
	if t.msgTail == nil || !sameShape(&t.msg, &m) {
		shape := m
		shape.Content = ""
		msg, err := json.Marshal(toLangChainChunk(shape))
		// The content is the struct's first field: {"content":"",...
		if err != nil || len(msg) < len(head)+2 || string(msg[:len(head)+2]) != head+`""` {
			return nil, false
		}
		t.msg, t.msgTail = shape, msg[len(head)+2:]
	}
	out := make([]byte, 0, len(head)+len(m.Content)+2+len(t.msgTail)+len(cm.raw)+3)
	out = append(out, '[')
	out = append(out, head...)
	out = appendString(out, m.Content)
	out = append(out, t.msgTail...)
	out = append(out, ',')
	out = append(out, cm.raw...)
	return append(out, ']'), true
}

// plainText reports whether a chunk is text of an assistant message with nothing else that
// varies from chunk to chunk.
func plainText(m message.Message) bool {
	return m.Role == message.RoleAssistant && len(m.Parts) == 0 && len(m.ToolCalls) == 0 && len(m.Metadata) == 0 &&
		m.ToolCallID == "" && !m.IsError
}

// sameShape reports whether two plain text chunks encode alike but for their content.
func sameShape(a, b *message.Message) bool {
	return a.Role == b.Role && a.ID == b.ID && a.Name == b.Name
}

// appendString appends s as encoding/json writes a string (with its HTML escaping); strings of
// printable ASCII without quote, backslash, <, > or & are copied, any other goes through
// json.Marshal.
func appendString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			enc, _ := json.Marshal(s)
			return append(buf, enc...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}
