package client

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Item is a long-term memory item of the store.
type Item struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	// Score is the relevance of a search result with a query; nil otherwise.
	Score *float64 `json:"score,omitempty"`
}

// StoreSearch finds items under a namespace prefix, by filter on their values and by query.
type StoreSearch struct {
	Filter map[string]any `json:"filter,omitempty"`
	Query  string         `json:"query,omitempty"`
	Limit  int            `json:"limit,omitempty"`
	Offset int            `json:"offset,omitempty"`
}

// Store is the store part of the API.
type Store struct{ t *transport }

// Put writes an item; ttl, when positive, is how long it lives (rounded to minutes).
func (s *Store) Put(ctx context.Context, namespace []string, key string, value map[string]any, ttl time.Duration) error {
	body := map[string]any{"namespace": namespace, "key": key, "value": value}
	if ttl > 0 {
		body["ttl"] = ttl.Minutes()
	}
	return s.t.call(ctx, http.MethodPut, "/store/items", body, nil)
}

// Get reads an item; a missing one is nil with no error, as the LangGraph API answers it (null).
func (s *Store) Get(ctx context.Context, namespace []string, key string) (*Item, error) {
	q := url.Values{"key": {key}, "namespace": {strings.Join(namespace, ".")}}
	var out *Item
	if err := s.t.call(ctx, http.MethodGet, "/store/items?"+q.Encode(), nil, &out); err != nil {
		if IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return out, nil
}

// Delete removes an item.
func (s *Store) Delete(ctx context.Context, namespace []string, key string) error {
	return s.t.call(ctx, http.MethodDelete, "/store/items", map[string]any{"namespace": namespace, "key": key}, nil)
}

// Search lists items under the namespace prefix; q may be nil.
func (s *Store) Search(ctx context.Context, prefix []string, q *StoreSearch) ([]Item, error) {
	body := map[string]any{"namespace_prefix": prefix}
	if q != nil {
		if q.Filter != nil {
			body["filter"] = q.Filter
		}
		if q.Query != "" {
			body["query"] = q.Query
		}
		if q.Limit > 0 {
			body["limit"] = q.Limit
		}
		if q.Offset > 0 {
			body["offset"] = q.Offset
		}
	}
	var out struct {
		Items []Item `json:"items"`
	}
	return out.Items, s.t.call(ctx, http.MethodPost, "/store/items/search", body, &out)
}

// Namespaces lists the namespaces under prefix (nil: all), up to maxDepth parts when positive.
func (s *Store) Namespaces(ctx context.Context, prefix []string, maxDepth int) ([][]string, error) {
	body := map[string]any{}
	if len(prefix) > 0 {
		body["prefix"] = prefix
	}
	if maxDepth > 0 {
		body["max_depth"] = maxDepth
	}
	var out struct {
		Namespaces [][]string `json:"namespaces"`
	}
	return out.Namespaces, s.t.call(ctx, http.MethodPost, "/store/namespaces", body, &out)
}
