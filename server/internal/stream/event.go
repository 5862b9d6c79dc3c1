package stream

import (
	"encoding/json"
	"strings"
)

// Event is one event of a run's stream, numbered from 1 in the order the run produced it. The
// number is the SSE id, so a client that reconnects with Last-Event-ID n gets events n+1 on.
type Event struct {
	Seq   int64           `json:"id"`
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
	// Tail, when set, is the rest of the data, shared with other events: the metadata that ends
	// every token of a message (lcstream.EncodedToken). Only logs that are not written to a
	// database or a bus (runs that are not resumable) hold events with a tail; readers write
	// Data then Tail (AppendData).
	Tail json.RawMessage `json:"-"`
}

// AppendData appends the event's whole data to buf.
func (e Event) AppendData(buf []byte) []byte {
	return append(append(buf, e.Data...), e.Tail...)
}

// WholeData returns the event's whole data: Data followed by Tail.
func (e Event) WholeData() json.RawMessage {
	if len(e.Tail) == 0 {
		return e.Data
	}
	return e.AppendData(make([]byte, 0, len(e.Data)+len(e.Tail)))
}

// Mode returns the stream mode an event belongs to: its name without a subgraph namespace, and
// "messages" for messages/partial and friends.
func (e Event) Mode() string {
	name := e.Event
	if i := strings.IndexByte(name, '|'); i >= 0 {
		name = name[:i]
	}
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name = name[:i]
	}
	return name
}

// Token reports whether an event is a token of the messages stream, which the server writes in
// batches rather than before it is shown.
func (e Event) Token() bool { return e.Mode() == "messages" }

// Batched reports whether an event is written in batches (see Outbox): a token, or the metadata
// event that opens each attempt's stream (it names the run and the attempt; no checkpoint comes
// before it).
func (e Event) Batched() bool { return e.Token() || e.Event == "metadata" }
