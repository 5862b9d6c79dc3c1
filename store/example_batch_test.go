package store_test

import (
	"context"
	"fmt"

	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/memstore"
)

// A batch reads the store as it was before its writes, and applies the last write of each key.
func ExampleBatch() {
	ctx := context.Background()
	s, err := memstore.New(nil)
	if err != nil {
		panic(err)
	}
	ns := []string{"users", "u1"}
	if err := s.Put(ctx, store.PutRequest{Namespace: ns, Key: "old", Value: map[string]any{"text": "stale"}}); err != nil {
		panic(err)
	}
	res, err := store.Batch(ctx, s, []store.Op{
		store.PutRequest{Namespace: ns, Key: "new", Value: map[string]any{"text": "draft"}},
		store.GetRequest{Namespace: ns, Key: "new"},
		store.GetRequest{Namespace: ns, Key: "old"},
		store.DeleteRequest{Namespace: ns, Key: "old"},
		store.PutRequest{Namespace: ns, Key: "new", Value: map[string]any{"text": "final"}},
		store.ListNamespacesRequest{},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("new seen by the batch:", res[1].Item != nil)
	fmt.Println("old seen by the batch:", res[2].Item.Value["text"])
	fmt.Println("namespaces:", res[5].Namespaces)
	it, _ := s.Get(ctx, store.GetRequest{Namespace: ns, Key: "new"})
	_, err = s.Get(ctx, store.GetRequest{Namespace: ns, Key: "old"})
	fmt.Println("after:", it.Value["text"], err != nil)
	// Output:
	// new seen by the batch: false
	// old seen by the batch: stale
	// namespaces: [[users u1]]
	// after: final true
}
