package checkpoint

import (
	"bytes"
	"context"
	"crypto/rand"
	"strings"
	"testing"
)

func TestMemorySaverCompressesLargeBlobs(t *testing.T) {
	ctx := context.Background()
	text := []byte(`["` + strings.Repeat("result for query: 2f1c0b52-7d7e-4d4e-9a55-0c7f5d8e9a11 ", 2000) + `"]`)
	noise := make([]byte, 64<<10)
	_, _ = rand.Read(noise)
	small := []byte(`{"n":1}`)
	m := NewMemorySaver()
	err := m.Put(ctx, PutRequest{ThreadID: "t", Checkpoint: Checkpoint{ID: NewID(), Versions: map[string]string{"text": "1", "noise": "1", "small": "1"}},
		Blobs: []Blob{{Channel: "text", Version: "1", Data: text}, {Channel: "noise", Version: "1", Data: noise}, {Channel: "small", Version: "1", Data: small}}})
	if err != nil {
		t.Fatal(err)
	}
	kept := m.threads["t"].spaces[""].blobs
	if b := kept[blobKey{"text", "1"}]; !b.compressed || len(b.Data) > len(text)/10 {
		t.Errorf("a %d-byte text blob is kept in %d bytes (compressed %v)", len(text), len(b.Data), b.compressed)
	}
	if b := kept[blobKey{"noise", "1"}]; b.compressed {
		t.Error("random bytes were kept compressed, though they do not compress")
	}
	if b := kept[blobKey{"small", "1"}]; b.compressed {
		t.Error("a small blob was compressed")
	}
	tuple, err := m.Get(ctx, Ref{ThreadID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{"text": text, "noise": noise, "small": small}
	for _, b := range tuple.Blobs {
		if !bytes.Equal(b.Data, want[b.Channel]) {
			t.Errorf("blob %s came back with %d different bytes", b.Channel, len(b.Data))
		}
	}
}
