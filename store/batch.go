package store

import (
	"context"
	"errors"
	"fmt"
)

// Op is one operation of a batch ([Batch]): a [PutRequest], [GetRequest], [DeleteRequest],
// [SearchRequest] or [ListNamespacesRequest] (LangGraph's PutOp, GetOp, PutOp with no value,
// SearchOp and ListNamespacesOp).
type Op interface{ storeOp() string }

func (PutRequest) storeOp() string            { return "put" }
func (GetRequest) storeOp() string            { return "get" }
func (DeleteRequest) storeOp() string         { return "delete" }
func (SearchRequest) storeOp() string         { return "search" }
func (ListNamespacesRequest) storeOp() string { return "list namespaces" }

// Result is the outcome of one operation of a batch, at the operation's index.
type Result struct {
	// Item is a get's item; nil when there is none (a missing item is not an error in a batch,
	// as LangGraph's batch returns None for it).
	Item *Item
	// Items are a search's items.
	Items []SearchItem
	// Namespaces are a namespace listing's namespaces.
	Namespaces [][]string
}

// Batcher is a store that runs a batch itself. Every backend of this module implements it: the
// memory store applies the batch's writes under one lock, the SQL stores in one transaction.
type Batcher interface {
	Batch(ctx context.Context, ops []Op) ([]Result, error)
}

// Batch runs ops on s as LangGraph's BaseStore.batch does, and returns one result per op, in
// order:
//
//   - The reads (gets, searches, namespace listings) run first, in order, and see the store as
//     it was before the batch: a get after a put of the same key in one batch does not see it.
//   - The writes (puts and deletes) then apply together; when several write one namespace and
//     key, the last one wins (LangGraph dedupes its puts the same way).
//   - Every op is checked before anything is written: a bad op fails the batch with an error
//     naming its index, and nothing is written. On the SQL stores the writes are one
//     transaction, so a write that fails there leaves none of them applied; the memory store
//     applies them under one lock, so no reader sees part of the batch.
//
// A store without its own Batch (one made outside this module) gets the same order and
// dedupe, but its writes apply one by one: a failing write leaves the earlier ones applied.
func Batch(ctx context.Context, s Store, ops []Op) ([]Result, error) {
	if b, ok := s.(Batcher); ok {
		return b.Batch(ctx, ops)
	}
	return RunBatch(ctx, ops, func(ctx context.Context, op Op) (Result, error) { return ReadOp(ctx, s, op) },
		func(ctx context.Context, writes []Op) error {
			for i, w := range writes {
				if err := writeOp(ctx, s, w); err != nil {
					return fmt.Errorf("store: batch write %d of %d: %w", i+1, len(writes), err)
				}
			}
			return nil
		})
}

// RunBatch is the order every Batch follows (see [Batch]): it checks the ops, runs the reads
// with read in order, then hands write the writes, deduplicated. Backends implement Batch with
// it; read and write are theirs.
func RunBatch(ctx context.Context, ops []Op, read func(context.Context, Op) (Result, error), write func(context.Context, []Op) error) ([]Result, error) {
	writes, err := CheckBatch(ops)
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(ops))
	for i, op := range ops {
		switch op.(type) {
		case PutRequest, DeleteRequest:
			continue
		}
		r, err := read(ctx, op)
		if err != nil {
			return nil, fmt.Errorf("store: batch op %d (%s): %w", i, op.storeOp(), err)
		}
		results[i] = r
	}
	if len(writes) > 0 {
		if err := write(ctx, writes); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// CheckBatch checks that every op is one a batch takes, and returns the writes in the order
// they apply, the last write of each namespace and key only.
func CheckBatch(ops []Op) ([]Op, error) {
	type slot struct{ ns, key string }
	last := map[slot]int{}
	var writes []Op
	for i, op := range ops {
		var s slot
		switch o := op.(type) {
		case PutRequest:
			if o.Value == nil {
				return nil, inputErr("batch", fmt.Sprintf("op %d (put)", i), "has no value", "use a DeleteRequest to delete an item", ErrInvalidValue)
			}
			s = slot{JoinNamespace(o.Namespace), o.Key}
		case DeleteRequest:
			s = slot{JoinNamespace(o.Namespace), o.Key}
		case GetRequest, SearchRequest, ListNamespacesRequest:
			continue
		case nil:
			return nil, inputErr("batch", fmt.Sprintf("op %d", i), "is nil", "give a PutRequest, GetRequest, DeleteRequest, SearchRequest or ListNamespacesRequest", ErrInvalidValue)
		default:
			return nil, inputErr("batch", fmt.Sprintf("op %d", i), fmt.Sprintf("is a %T", op), "give a PutRequest, GetRequest, DeleteRequest, SearchRequest or ListNamespacesRequest", ErrInvalidValue)
		}
		if j, ok := last[s]; ok {
			writes[j] = nil
		}
		last[s] = len(writes)
		writes = append(writes, op)
	}
	out := writes[:0]
	for _, w := range writes {
		if w != nil {
			out = append(out, w)
		}
	}
	return out, nil
}

// ReadOp runs one read op of a batch on s: a get whose item is missing gives an empty result.
func ReadOp(ctx context.Context, s Store, op Op) (Result, error) {
	switch o := op.(type) {
	case GetRequest:
		it, err := s.Get(ctx, o)
		if errors.Is(err, ErrNotFound) {
			return Result{}, nil
		}
		return Result{Item: it}, err
	case SearchRequest:
		items, err := s.Search(ctx, o)
		return Result{Items: items}, err
	case ListNamespacesRequest:
		nss, err := s.ListNamespaces(ctx, o)
		return Result{Namespaces: nss}, err
	}
	return Result{}, fmt.Errorf("store: %s is not a read", op.storeOp())
}

func writeOp(ctx context.Context, s Store, op Op) error {
	switch o := op.(type) {
	case PutRequest:
		return s.Put(ctx, o)
	case DeleteRequest:
		return s.Delete(ctx, o)
	}
	return fmt.Errorf("store: %s is not a write", op.storeOp())
}
