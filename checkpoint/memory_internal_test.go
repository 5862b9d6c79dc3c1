package checkpoint

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
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
	space := m.threads["t"].spaces[""]
	kept := func(k blobKey) memBlob { b, _ := space.blob(k); return b }
	if b := kept(blobKey{"text", "1"}); !b.compressed || len(b.Data) > len(text)/10 {
		t.Errorf("a %d-byte text blob is kept in %d bytes (compressed %v)", len(text), len(b.Data), b.compressed)
	}
	if b := kept(blobKey{"noise", "1"}); b.compressed {
		t.Error("random bytes were kept compressed, though they do not compress")
	}
	if b := kept(blobKey{"small", "1"}); b.compressed {
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

// TestMemorySaverManyBlobs: past indexAbove blobs a space indexes them; replacing, reading and
// pruning give the same answers on both sides of that line.
func TestMemorySaverManyBlobs(t *testing.T) {
	ctx := context.Background()
	m := NewMemorySaver()
	head := ""
	for i := range 3 * indexAbove {
		v := fmt.Sprintf("%03d", i+1)
		b := Blob{Channel: "log", Version: v, Data: []byte(fmt.Sprintf(`[%d]`, i))}
		if i > 0 {
			b.Base = fmt.Sprintf("%03d", i)
		}
		id := NewID()
		req := PutRequest{ThreadID: "t", Checkpoint: Checkpoint{ID: id, Versions: map[string]string{"log": v}}, Blobs: []Blob{b, b}, Head: head}
		if err := m.Put(ctx, req); err != nil {
			t.Fatal(err)
		}
		head = id
		space := m.threads["t"].spaces[""]
		if n := len(space.blobs); n != i+1 || (space.index != nil) != (n > indexAbove) {
			t.Fatalf("after %d puts: %d blobs, indexed %v", i+1, n, space.index != nil)
		}
		tuple, err := m.Get(ctx, Ref{ThreadID: "t"})
		if err != nil || len(tuple.Blobs) != i+1 {
			t.Fatalf("Get after %d puts: %d blobs, %v", i+1, len(tuple.Blobs), err)
		}
	}
	if err := m.Put(ctx, PutRequest{ThreadID: "t", Checkpoint: Checkpoint{ID: NewID(), Versions: map[string]string{"log": "100"}},
		Blobs: []Blob{{Channel: "log", Version: "100", Data: []byte(`["full"]`)}}, Head: head}); err != nil {
		t.Fatal(err)
	}
	if err := m.Prune(ctx, PruneRequest{ThreadID: "t", Keep: 1}); err != nil {
		t.Fatal(err)
	}
	space := m.threads["t"].spaces[""]
	if len(space.blobs) != 1 || space.index != nil {
		t.Fatalf("after pruning: %d blobs, indexed %v", len(space.blobs), space.index != nil)
	}
	tuple, err := m.Get(ctx, Ref{ThreadID: "t"})
	if err != nil || len(tuple.Blobs) != 1 || string(tuple.Blobs[0].Data) != `["full"]` {
		t.Fatalf("Get after pruning: %+v, %v", tuple, err)
	}
}
