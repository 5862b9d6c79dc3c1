package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/trellis-go/trellis/encrypt"
)

// sealedKey is the one key of a sealed item's stored value.
const sealedKey = "__trellis_sealed__"

// Encrypt returns a store that keeps every item's value sealed by keys (AES-GCM, see package
// encrypt) in s: the database holds {"__trellis_sealed__": "<base64>"} and the namespaces and
// keys, never the value. Since a search index would hold the values' text and vectors, an
// encrypted store indexes nothing: a put asking for fields to index is refused, a search with a
// Query is refused, and a search with a Filter reads the namespace's items, opens them and
// filters here. Items stored before encryption was turned on are read as they are.
func Encrypt(s Store, keys *encrypt.Keyring) Store {
	e := &encrypted{inner: s, keys: keys}
	if sw, ok := s.(Sweeper); ok {
		return &encryptedSweeper{encrypted: e, sw: sw}
	}
	return e
}

type encrypted struct {
	inner Store
	keys  *encrypt.Keyring
}

type encryptedSweeper struct {
	*encrypted
	sw Sweeper
}

func (e *encryptedSweeper) Sweep(ctx context.Context) (int, error) { return e.sw.Sweep(ctx) }

func (e *encrypted) seal(v map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, inputErr("put", "value", fmt.Sprintf("cannot be encoded as JSON: %v", err), "keep values to JSON types", ErrInvalidValue)
	}
	sealed, err := e.keys.Seal(raw)
	if err != nil {
		return nil, fmt.Errorf("store: sealing a value: %w", err)
	}
	return map[string]any{sealedKey: base64.StdEncoding.EncodeToString(sealed)}, nil
}

func (e *encrypted) open(it *Item) error {
	s, ok := it.Value[sealedKey].(string)
	if !ok || len(it.Value) != 1 {
		return nil // stored before encryption
	}
	sealed, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("store: the sealed value of %v/%s is not base64: %w", it.Namespace, it.Key, err)
	}
	raw, err := e.keys.Open(sealed)
	if err != nil {
		return fmt.Errorf("store: opening the value of %v/%s: %w", it.Namespace, it.Key, err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("store: the opened value of %v/%s: %w", it.Namespace, it.Key, err)
	}
	it.Value = v
	return nil
}

func (e *encrypted) Put(ctx context.Context, req PutRequest) error {
	req, err := e.sealPut(req)
	if err != nil {
		return err
	}
	return e.inner.Put(ctx, req)
}

// sealPut is the put the inner store gets: its value sealed, nothing indexed.
func (e *encrypted) sealPut(req PutRequest) (PutRequest, error) {
	if req.Index != nil && !req.NoIndex {
		return req, inputErr("put", "index", "names fields to index, but the store is encrypted", "an index would hold the values' text in plaintext; put without Index (items are found by namespace and filter)", ErrInvalidValue)
	}
	if req.Value != nil {
		v, err := e.seal(req.Value)
		if err != nil {
			return req, err
		}
		req.Value = v
	}
	req.Index, req.NoIndex = nil, true
	return req, nil
}

// Batch runs the batch's reads through the encrypted store (values opened, filters applied
// here) and hands its writes, sealed, to the inner store's batch: one transaction on a SQL
// store.
func (e *encrypted) Batch(ctx context.Context, ops []Op) ([]Result, error) {
	return RunBatch(ctx, ops, func(ctx context.Context, op Op) (Result, error) { return ReadOp(ctx, e, op) },
		func(ctx context.Context, writes []Op) error {
			sealed := make([]Op, len(writes))
			for i, w := range writes {
				if p, ok := w.(PutRequest); ok {
					sp, err := e.sealPut(p)
					if err != nil {
						return fmt.Errorf("store: batch write %d of %d, none applied: %w", i+1, len(writes), err)
					}
					w = sp
				}
				sealed[i] = w
			}
			_, err := Batch(ctx, e.inner, sealed)
			return err
		})
}

func (e *encrypted) Get(ctx context.Context, req GetRequest) (*Item, error) {
	it, err := e.inner.Get(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := e.open(it); err != nil {
		return nil, err
	}
	return it, nil
}

func (e *encrypted) Delete(ctx context.Context, req DeleteRequest) error {
	return e.inner.Delete(ctx, req)
}

func (e *encrypted) ListNamespaces(ctx context.Context, req ListNamespacesRequest) ([][]string, error) {
	return e.inner.ListNamespaces(ctx, req)
}

// encryptedPage is how many items a filtered search reads at a time.
const encryptedPage = 200

func (e *encrypted) Search(ctx context.Context, req SearchRequest) ([]SearchItem, error) {
	if req.Query != "" {
		return nil, inputErr("search", "query", "asks for a ranked search, but the store is encrypted and indexes nothing", "search by namespace prefix and filter instead", ErrInvalidValue)
	}
	if req.Limit < 0 || req.Offset < 0 {
		return nil, inputErr("search", "limit/offset", "is negative", "use 0 for the default limit of 10", ErrInvalidValue)
	}
	limit := req.Limit
	if limit == 0 {
		limit = DefaultSearchLimit
	}
	f, err := CompileFilter(req.Filter)
	if err != nil {
		return nil, err
	}
	inner := req
	inner.Filter = nil
	var out []SearchItem
	skip := req.Offset
	for from := 0; ; from += encryptedPage {
		inner.Offset, inner.Limit = from, encryptedPage
		page, err := e.inner.Search(ctx, inner)
		if err != nil {
			return nil, err
		}
		for i := range page {
			if err := e.open(&page[i].Item); err != nil {
				return nil, err
			}
			if f != nil && !f.Match(page[i].Value) {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			out = append(out, page[i])
			if len(out) == limit {
				return out, nil
			}
		}
		if len(page) < encryptedPage {
			return out, nil
		}
	}
}
