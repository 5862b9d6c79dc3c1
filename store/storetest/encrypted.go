package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/trellis-go/trellis/store"
)

// Secret is the marker Encrypted writes into the values it stores.
const Secret = "PLAINTEXT-SECRET-41c9"

// Encrypted checks a store made by store.Encrypt: values come back as they were put, a filter
// finds items by their (sealed) values across several pages of the namespace, paging keeps its
// order, and the requests an encrypted store cannot serve (a ranked query, fields to index) are
// refused with an error that says so. The values it writes hold Secret, so the caller can then
// read its database directly and look for it.
func Encrypted(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	ns := []string{"vault", "notes"}
	const n = 230 // more than one page of the filtered search
	for i := range n {
		v := map[string]any{"text": fmt.Sprintf("%s note %d", Secret, i), "n": i, "kind": []string{"even", "odd"}[i%2]}
		if err := s.Put(ctx, store.PutRequest{Namespace: ns, Key: fmt.Sprintf("k%03d", i), Value: v}); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	it, err := s.Get(ctx, store.GetRequest{Namespace: ns, Key: "k007"})
	if err != nil {
		t.Fatal(err)
	}
	if it.Value["text"] != Secret+" note 7" || it.Value["kind"] != "odd" {
		t.Fatalf("get: %v", it.Value)
	}
	res, err := s.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"vault"}, Filter: map[string]any{"kind": "odd", "n": map[string]any{"$gte": 200}}, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 15 { // the odd numbers from 201 to 229
		t.Fatalf("filtered search found %d items, want 15", len(res))
	}
	for _, r := range res {
		if r.Value["kind"] != "odd" {
			t.Fatalf("filtered search returned %v", r.Value)
		}
	}
	all, err := s.Search(ctx, store.SearchRequest{NamespacePrefix: ns, Filter: map[string]any{"kind": "even"}, Limit: 200})
	if err != nil || len(all) != n/2 {
		t.Fatalf("every even item: %d (%v), want %d", len(all), err, n/2)
	}
	page, err := s.Search(ctx, store.SearchRequest{NamespacePrefix: ns, Filter: map[string]any{"kind": "even"}, Offset: 10, Limit: 5})
	if err != nil || len(page) != 5 || page[0].Key != all[10].Key || page[4].Key != all[14].Key {
		t.Fatalf("a page of the filtered search: %v (%v)", keys(page), err)
	}
	if _, err := s.Search(ctx, store.SearchRequest{NamespacePrefix: ns, Query: "note"}); !errors.Is(err, store.ErrInvalidValue) {
		t.Errorf("a ranked search on an encrypted store: %v, want ErrInvalidValue", err)
	}
	if err := s.Put(ctx, store.PutRequest{Namespace: ns, Key: "x", Value: map[string]any{"a": 1}, Index: []string{"a"}}); !errors.Is(err, store.ErrInvalidValue) {
		t.Errorf("a put naming fields to index on an encrypted store: %v, want ErrInvalidValue", err)
	}
	if err := s.Delete(ctx, store.DeleteRequest{Namespace: ns, Key: "k000"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, store.GetRequest{Namespace: ns, Key: "k000"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
	// A batch seals its puts and opens what its reads return.
	out, err := store.Batch(ctx, s, []store.Op{
		store.PutRequest{Namespace: ns, Key: "batched", Value: map[string]any{"text": Secret + " batched", "kind": "batch"}},
		store.GetRequest{Namespace: ns, Key: "k007"},
		store.SearchRequest{NamespacePrefix: ns, Filter: map[string]any{"n": map[string]any{"$gte": 228}}},
	})
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	if out[1].Item == nil || out[1].Item.Value["text"] != Secret+" note 7" || len(out[2].Items) != 2 || out[2].Items[0].Value["kind"] == nil {
		t.Fatalf("the batch's reads: %+v, %d items", out[1].Item, len(out[2].Items))
	}
	it, err = s.Get(ctx, store.GetRequest{Namespace: ns, Key: "batched"})
	if err != nil || it.Value["text"] != Secret+" batched" {
		t.Fatalf("get of a batched put: %+v (%v)", it, err)
	}
	_, err = store.Batch(ctx, s, []store.Op{
		store.PutRequest{Namespace: ns, Key: "first", Value: map[string]any{"a": 1}},
		store.PutRequest{Namespace: ns, Key: "x", Value: map[string]any{"a": 1}, Index: []string{"a"}},
	})
	if !errors.Is(err, store.ErrInvalidValue) {
		t.Errorf("a batch with a put naming fields to index: %v, want ErrInvalidValue", err)
	}
	if _, err := s.Get(ctx, store.GetRequest{Namespace: ns, Key: "first"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused batch wrote its first put: %v", err)
	}
}
