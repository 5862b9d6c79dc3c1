package lcstream

import (
	"encoding/json"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/server/internal/lcwire"
)

// EncodedToken is a token event's data already encoded, in two parts: Head, the token's own
// ("[" and the message chunk and ","), and Tail, its metadata and "]", which every token of
// the message shares. A log that is not written anywhere keeps them so (stream.Event.Tail); Join makes one
// slice of them for the others.
type EncodedToken struct {
	Head, Tail []byte
}

// Join returns the token's whole data.
func (t EncodedToken) Join() json.RawMessage {
	return append(append(make([]byte, 0, len(t.Head)+len(t.Tail)), t.Head...), t.Tail...)
}

// Token returns the data of a token's messages-tuple event, encoded, when the run's token events
// are all messages-tuple events (no "messages" or "events" mode, which keep state across
// tokens), ev is a token of a stream the run gets, and its metadata has an encoding; ok false
// means Convert must make the event. The event's name is Name("messages", ev.NS).
func (c *Converter) Token(ev graph.Event) (data EncodedToken, ok bool) {
	if c.tokens == nil || ev.Mode != graph.ModeMessages || (len(ev.NS) > 0 && !c.subgraphs) {
		return EncodedToken{}, false
	}
	chunk, ok := ev.Data.(graph.MessageChunk)
	if !ok {
		return EncodedToken{}, false
	}
	return c.tokens.encode(ev, chunk)
}

// tupleOnly reports whether a run's token events are all messages-tuple events, which
// tokenEncoder writes; the "messages" mode (accumulated text) and the "events" mode keep
// state across tokens and go through Convert.
func (c *Converter) tupleOnly() bool {
	return c.events == nil && c.Wants("messages-tuple") && !c.Wants("messages")
}

// tokenEncoder writes the data of a run's messages-tuple events, [message chunk, metadata],
// byte for byte as Convert and json.Marshal would, at a fraction of their cost: tokens are most
// of what a streaming run sends. The metadata's encoding comes from the converter, which makes
// it once per message (messageMeta), and is shared by the message's events (EncodedToken); of a
// plain text chunk of an assistant message only the text is encoded, the rest of the message's
// encoding is kept from its first chunk (it is the same for every chunk of the message).
type tokenEncoder struct {
	c *Converter
	// msg is the chunk the template was made from, with its content emptied; msgTail is its
	// encoding after the content.
	msg     message.Message
	msgTail []byte
	// tail is the events' shared tail (the metadata's encoding and "]"), made for meta.
	meta *chunkMeta
	tail []byte
}

// encode returns the data of the messages-tuple event of a token, or ok false when the
// converter must make it through Convert (metadata that has no encoding).
func (t *tokenEncoder) encode(ev graph.Event, chunk graph.MessageChunk) (data EncodedToken, ok bool) {
	cm := t.c.messageMeta(ev, chunk)
	if cm.raw == nil {
		return EncodedToken{}, false
	}
	if cm != t.meta {
		t.meta, t.tail = cm, append(append(make([]byte, 0, len(cm.raw)+1), cm.raw...), ']')
	}
	m := chunk.Message
	if !plainText(m) {
		msg, err := json.Marshal(lcwire.FromChunk(m))
		if err != nil {
			return EncodedToken{}, false
		}
		head := make([]byte, 0, len(msg)+2)
		head = append(append(append(head, '['), msg...), ',')
		return EncodedToken{head, t.tail}, true
	}
	const prefix = `{"content":`
	if t.msgTail == nil || !sameShape(&t.msg, &m) {
		shape := m
		shape.Content = ""
		msg, err := json.Marshal(lcwire.FromChunk(shape))
		// The content is the struct's first field: {"content":"",...
		if err != nil || len(msg) < len(prefix)+2 || string(msg[:len(prefix)+2]) != prefix+`""` {
			return EncodedToken{}, false
		}
		t.msg, t.msgTail = shape, msg[len(prefix)+2:]
	}
	head := make([]byte, 0, 1+len(prefix)+len(m.Content)+2+len(t.msgTail)+1)
	head = append(head, '[')
	head = append(head, prefix...)
	head = appendString(head, m.Content)
	head = append(head, t.msgTail...)
	head = append(head, ',')
	return EncodedToken{head, t.tail}, true
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
