package server

import (
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
)

// A held put outlives the Put call that handed it over, and the runtime reuses a blob's bytes
// once Put returns: what is held is a copy.
func TestHeldPutKeepsACopyOfTheBlobs(t *testing.T) {
	first, second := []byte(`{"a":1}`), []byte(`"two"`)
	req := checkpoint.PutRequest{ThreadID: "t", Blobs: []checkpoint.Blob{{Channel: "a", Version: "1", Data: first}, {Channel: "b", Version: "1", Data: second}}}
	n := &newThread{}
	if err := n.hold(req); err != nil {
		t.Fatal(err)
	}
	copy(first, "XXXXXXX")
	copy(second, "YYYYY")
	held := n.held[0].Blobs
	if string(held[0].Data) != `{"a":1}` || string(held[1].Data) != `"two"` {
		t.Fatalf("held blobs changed with the caller's buffers: %q, %q", held[0].Data, held[1].Data)
	}
	if held[0].Channel != "a" || held[1].Version != "1" {
		t.Fatalf("held blobs lost their names: %+v", held)
	}
	// Appending to one held blob must not run into the next.
	_ = append(held[0].Data, '!')
	if string(held[1].Data) != `"two"` {
		t.Fatalf("held blobs share capacity: %q", held[1].Data)
	}
}
