package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/trellis-go/trellis/store"
)

// Batch checks store.Batch on s (which must start empty under the namespace "batch"): every op
// gets its result at its index, the reads see the store as it was before the batch's writes,
// the last write of a key wins, and a batch with a bad op fails naming it with nothing written.
func Batch(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	ns := []string{"batch", "b1"}
	if err := s.Put(ctx, store.PutRequest{Namespace: ns, Key: "old", Value: map[string]any{"v": "before"}}); err != nil {
		t.Fatal(err)
	}
	res, err := store.Batch(ctx, s, []store.Op{
		store.PutRequest{Namespace: ns, Key: "new", Value: map[string]any{"v": "first"}},
		store.GetRequest{Namespace: ns, Key: "old"},
		store.GetRequest{Namespace: ns, Key: "new"}, // put by this batch: not seen by its reads
		store.DeleteRequest{Namespace: ns, Key: "old"},
		store.SearchRequest{NamespacePrefix: []string{"batch"}},
		store.PutRequest{Namespace: ns, Key: "new", Value: map[string]any{"v": "second"}}, // the last put wins
		store.ListNamespacesRequest{Prefix: []string{"batch"}},
		store.GetRequest{Namespace: ns, Key: "missing"},
	})
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	if len(res) != 8 {
		t.Fatalf("%d results for 8 ops", len(res))
	}
	if res[1].Item == nil || res[1].Item.Value["v"] != "before" {
		t.Fatalf("get of an item the batch deletes later: %+v, want the item as before the batch", res[1].Item)
	}
	if res[2].Item != nil || res[7].Item != nil {
		t.Fatalf("gets of items absent before the batch: %+v %+v, want nil", res[2].Item, res[7].Item)
	}
	if len(res[4].Items) != 1 || res[4].Items[0].Key != "old" {
		t.Fatalf("search in the batch found %d items, want [old] (the store before the batch)", len(res[4].Items))
	}
	if len(res[6].Namespaces) != 1 || len(res[6].Namespaces[0]) != 2 || res[6].Namespaces[0][1] != "b1" {
		t.Fatalf("namespaces in the batch: %v, want [[batch b1]]", res[6].Namespaces)
	}
	if res[0].Item != nil || res[3].Item != nil || res[5].Items != nil {
		t.Fatalf("writes have results: %+v %+v %+v", res[0], res[3], res[5])
	}
	if _, err := s.Get(ctx, store.GetRequest{Namespace: ns, Key: "old"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after the batch the deleted item gives %v, want ErrNotFound", err)
	}
	it, err := s.Get(ctx, store.GetRequest{Namespace: ns, Key: "new"})
	if err != nil || it.Value["v"] != "second" {
		t.Fatalf("after the batch: %+v (%v), want the last put's value", it, err)
	}

	// A bad op anywhere fails the batch before anything is written.
	for _, bad := range []store.Op{
		store.PutRequest{Namespace: ns, Key: "", Value: map[string]any{"v": 1}},
		store.PutRequest{Namespace: ns, Key: "nil-value"},
		store.DeleteRequest{Namespace: nil, Key: "k"},
		nil,
	} {
		_, err := store.Batch(ctx, s, []store.Op{
			store.PutRequest{Namespace: ns, Key: "written?", Value: map[string]any{"v": 1}},
			store.DeleteRequest{Namespace: ns, Key: "new"},
			bad,
		})
		if err == nil {
			t.Fatalf("a batch with the bad op %#v succeeded", bad)
		}
		if _, err := s.Get(ctx, store.GetRequest{Namespace: ns, Key: "written?"}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the batch failing on %#v wrote its first put (get: %v)", bad, err)
		}
		if _, err := s.Get(ctx, store.GetRequest{Namespace: ns, Key: "new"}); err != nil {
			t.Fatalf("the batch failing on %#v applied its delete (get: %v)", bad, err)
		}
	}
	// An empty batch is fine.
	if res, err := store.Batch(ctx, s, nil); err != nil || len(res) != 0 {
		t.Fatalf("empty batch: %v %v", res, err)
	}
}
