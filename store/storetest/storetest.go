// Package storetest is the conformance suite of [store.Store]. Every backend runs it:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, cfg store.Config) store.Store {
//			s, err := mybackend.Open(..., cfg)
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// The factory must return an empty store that uses cfg as given (its clock, embedder, TTLs and
// limits): the suite drives time through cfg.Now and semantic search through its own embedder.
// A store returned must also implement [store.Sweeper]. [RunModes] runs the suite once for each of
// a backend's vector search modes.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trellis-go/trellis/store"
)

// NewStore returns an empty store configured by cfg, closed by t.Cleanup.
type NewStore func(t *testing.T, cfg store.Config) store.Store

// Clock is a settable clock for cfg.Now.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock at a fixed instant (whole microseconds, as every database keeps).
func NewClock() *Clock { return &Clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// TopicEmbedder is a deterministic embedder for tests: words of the same topic share an axis, so
// a query about "fruit" is near a text about "apples" though they share no word. Words outside
// the topics land on hashed axes. Dims is 16.
type TopicEmbedder struct {
	// WrongDims, when set, makes it return vectors of this length instead, to test the store's
	// dimension check.
	WrongDims int
	mu        sync.Mutex
	calls     int
}

// TopicDims is the dimension of TopicEmbedder's vectors.
const TopicDims = 16

var topics = map[string]int{
	"fruit": 0, "apple": 0, "apples": 0, "banana": 0, "bananas": 0, "pear": 0, "orchard": 0,
	"vehicle": 1, "car": 1, "cars": 1, "truck": 1, "engine": 1, "garage": 1,
	"ocean": 2, "sea": 2, "boat": 2, "sailing": 2, "harbour": 2,
	"music": 3, "guitar": 3, "piano": 3, "song": 3, "concert": 3,
}

// Embed implements store.Embedder.
func (e *TopicEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls++
	e.mu.Unlock()
	dims := TopicDims
	if e.WrongDims > 0 {
		dims = e.WrongDims
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, dims)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			w = strings.Trim(w, ".,;:!?\"'")
			if ax, ok := topics[w]; ok {
				v[ax%dims] += 1
				continue
			}
			h := fnv.New32a()
			h.Write([]byte(w))
			v[4+int(h.Sum32()%uint32(dims-4))] += 0.25
		}
		v[dims-1] += 0.01 // never the zero vector
		out[i] = v
	}
	return out, nil
}

// Calls returns how many times Embed was called.
func (e *TopicEmbedder) Calls() int { e.mu.Lock(); defer e.mu.Unlock(); return e.calls }

type bundle struct {
	ctx   context.Context
	clock *Clock
	store store.Store
}

// RunModes runs the suite once per vector search mode of a backend, as a subtest named after
// the mode: open returns a store on cfg for the suite's subtest t, searching vectors the way
// mode says; the suite closes it (when it has a Close method) at the end of the subtest.
func RunModes(t *testing.T, modes []string, open func(t *testing.T, cfg store.Config, mode string) (store.Store, error)) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			Run(t, func(t *testing.T, cfg store.Config) store.Store {
				s, err := open(t, cfg, mode)
				if err != nil {
					t.Fatal(err)
				}
				if c, ok := s.(interface{ Close() error }); ok {
					t.Cleanup(func() { c.Close() })
				}
				return s
			})
		})
	}
}

// Run runs the conformance suite against the backend that newStore opens.
func Run(t *testing.T, newStore NewStore) {
	setup := func(t *testing.T, mod func(*store.Config)) *bundle {
		t.Helper()
		clock := NewClock()
		cfg := store.Config{Now: clock.Now, Logger: slog.New(slog.DiscardHandler)}
		if mod != nil {
			mod(&cfg)
		}
		s := newStore(t, cfg)
		if _, ok := s.(store.Sweeper); !ok {
			t.Fatalf("%T does not implement store.Sweeper", s)
		}
		return &bundle{ctx: context.Background(), clock: clock, store: s}
	}
	withIndex := func(c *store.Config) {
		c.Index = &store.IndexConfig{Embedder: &TopicEmbedder{}, Dims: TopicDims}
	}

	t.Run("Batch", func(t *testing.T) {
		b := setup(t, nil)
		if _, ok := b.store.(store.Batcher); !ok {
			t.Fatalf("%T does not implement store.Batcher", b.store)
		}
		Batch(t, b.store)
	})

	t.Run("PutGetRoundTrip", func(t *testing.T) {
		b := setup(t, nil)
		ns := []string{"users", "u1", "memories"}
		val := map[string]any{"text": "likes tea", "n": 3, "tags": []string{"a", "b"}, "nested": map[string]any{"ok": true, "none": nil}}
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "k1", Value: val}))
		got, err := b.store.Get(b.ctx, store.GetRequest{Namespace: ns, Key: "k1"})
		must(t, err)
		want := map[string]any{"text": "likes tea", "n": float64(3), "tags": []any{"a", "b"}, "nested": map[string]any{"ok": true, "none": nil}}
		if !reflect.DeepEqual(got.Value, want) {
			t.Fatalf("value = %#v, want %#v", got.Value, want)
		}
		if !reflect.DeepEqual(got.Namespace, ns) || got.Key != "k1" {
			t.Fatalf("namespace/key = %v/%q", got.Namespace, got.Key)
		}
		if !got.CreatedAt.Equal(b.clock.Now()) || !got.UpdatedAt.Equal(b.clock.Now()) {
			t.Fatalf("timestamps %v %v, want %v", got.CreatedAt, got.UpdatedAt, b.clock.Now())
		}
		if !got.ExpiresAt.IsZero() {
			t.Fatalf("item without TTL expires at %v", got.ExpiresAt)
		}
		// The caller's map is not shared with the store.
		got.Value["text"] = "changed"
		val["text"] = "changed too"
		again, err := b.store.Get(b.ctx, store.GetRequest{Namespace: ns, Key: "k1"})
		must(t, err)
		if again.Value["text"] != "likes tea" {
			t.Fatalf("stored value changed through a caller's map: %v", again.Value["text"])
		}
	})

	t.Run("UpdateKeepsCreatedAt", func(t *testing.T) {
		b := setup(t, nil)
		ns := []string{"a"}
		created := b.clock.Now()
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "k", Value: map[string]any{"v": 1}}))
		b.clock.Advance(time.Minute)
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "k", Value: map[string]any{"v": 2}}))
		got, err := b.store.Get(b.ctx, store.GetRequest{Namespace: ns, Key: "k"})
		must(t, err)
		if got.Value["v"] != float64(2) {
			t.Fatalf("value after update = %v", got.Value)
		}
		if !got.CreatedAt.Equal(created) || !got.UpdatedAt.Equal(created.Add(time.Minute)) {
			t.Fatalf("created %v updated %v; want %v and a minute later", got.CreatedAt, got.UpdatedAt, created)
		}
	})

	t.Run("NotFoundAndDelete", func(t *testing.T) {
		b := setup(t, nil)
		_, err := b.store.Get(b.ctx, store.GetRequest{Namespace: []string{"x"}, Key: "missing"})
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("get of a missing item: %v, want ErrNotFound", err)
		}
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"x"}, Key: "k", Value: map[string]any{}}))
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"y"}, Key: "k", Value: map[string]any{"other": true}}))
		must(t, b.store.Delete(b.ctx, store.DeleteRequest{Namespace: []string{"x"}, Key: "k"}))
		if _, err := b.store.Get(b.ctx, store.GetRequest{Namespace: []string{"x"}, Key: "k"}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("get after delete: %v", err)
		}
		if _, err := b.store.Get(b.ctx, store.GetRequest{Namespace: []string{"y"}, Key: "k"}); err != nil {
			t.Fatalf("delete in one namespace removed the same key in another: %v", err)
		}
		must(t, b.store.Delete(b.ctx, store.DeleteRequest{Namespace: []string{"x"}, Key: "k"}))
		// Labels that are prefixes of each other stay apart.
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"ab"}, Key: "k", Value: map[string]any{"n": 1}}))
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"a", "b"}, Key: "k", Value: map[string]any{"n": 2}}))
		res, err := b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: []string{"a"}})
		must(t, err)
		if len(res) != 1 || res[0].Value["n"] != float64(2) {
			t.Fatalf("prefix [a] found %v, want only [a b]", items(res))
		}
	})

	t.Run("BadInput", func(t *testing.T) {
		b := setup(t, func(c *store.Config) { c.MaxValueBytes = 1000 })
		long := strings.Repeat("x", store.MaxLabelBytes+1)
		cases := []struct {
			name string
			call func() error
			want error
		}{
			{"empty namespace", func() error {
				return b.store.Put(b.ctx, store.PutRequest{Key: "k", Value: map[string]any{}})
			}, store.ErrInvalidNamespace},
			{"empty label", func() error {
				return b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"a", ""}, Key: "k", Value: map[string]any{}})
			}, store.ErrInvalidNamespace},
			{"long label", func() error {
				return b.store.Put(b.ctx, store.PutRequest{Namespace: []string{long}, Key: "k", Value: map[string]any{}})
			}, store.ErrInvalidNamespace},
			{"control character", func() error {
				return b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"a\x1fb"}, Key: "k", Value: map[string]any{}})
			}, store.ErrInvalidNamespace},
			{"empty key", func() error {
				return b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"a"}, Value: map[string]any{}})
			}, store.ErrInvalidKey},
			{"nil value", func() error {
				return b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"a"}, Key: "k"})
			}, store.ErrInvalidValue},
			{"value too large", func() error {
				return b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"a"}, Key: "k", Value: map[string]any{"t": strings.Repeat("y", 2000)}})
			}, store.ErrValueTooLarge},
			{"value not JSON", func() error {
				return b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"a"}, Key: "k", Value: map[string]any{"f": func() {}}})
			}, store.ErrInvalidValue},
			{"negative TTL", func() error {
				return b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"a"}, Key: "k", Value: map[string]any{}, TTL: -time.Second})
			}, store.ErrInvalidValue},
			{"bad index path", func() error {
				return b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"a"}, Key: "k", Value: map[string]any{}, Index: []string{"a[x"}})
			}, store.ErrInvalidValue},
			{"get empty key", func() error {
				_, err := b.store.Get(b.ctx, store.GetRequest{Namespace: []string{"a"}})
				return err
			}, store.ErrInvalidKey},
			{"delete empty namespace", func() error {
				return b.store.Delete(b.ctx, store.DeleteRequest{Key: "k"})
			}, store.ErrInvalidNamespace},
			{"unknown operator", func() error {
				_, err := b.store.Search(b.ctx, store.SearchRequest{Filter: map[string]any{"n": map[string]any{"$regex": "x"}}})
				return err
			}, store.ErrInvalidFilter},
			{"top-level operator", func() error {
				_, err := b.store.Search(b.ctx, store.SearchRequest{Filter: map[string]any{"$or": []any{}}})
				return err
			}, store.ErrInvalidFilter},
			{"$in without array", func() error {
				_, err := b.store.Search(b.ctx, store.SearchRequest{Filter: map[string]any{"n": map[string]any{"$in": 3}}})
				return err
			}, store.ErrInvalidFilter},
			{"$gt with object", func() error {
				_, err := b.store.Search(b.ctx, store.SearchRequest{Filter: map[string]any{"n": map[string]any{"$gt": map[string]any{}}}})
				return err
			}, store.ErrInvalidFilter},
			{"negative limit", func() error {
				_, err := b.store.Search(b.ctx, store.SearchRequest{Limit: -1})
				return err
			}, store.ErrInvalidValue},
			{"search prefix empty label", func() error {
				_, err := b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: []string{""}})
				return err
			}, store.ErrInvalidNamespace},
			{"list negative depth", func() error {
				_, err := b.store.ListNamespaces(b.ctx, store.ListNamespacesRequest{MaxDepth: -1})
				return err
			}, store.ErrInvalidValue},
		}
		for _, c := range cases {
			err := c.call()
			if !errors.Is(err, c.want) {
				t.Errorf("%s: got %v, want %v", c.name, err, c.want)
				continue
			}
			if !strings.HasPrefix(err.Error(), "store: ") || !strings.Contains(err.Error(), "(") {
				t.Errorf("%s: message %q should start with \"store: \" and carry a hint", c.name, err)
			}
		}
		// Nothing was stored by the failed puts.
		res, err := b.store.Search(b.ctx, store.SearchRequest{})
		must(t, err)
		if len(res) != 0 {
			t.Fatalf("failed puts stored %v", items(res))
		}
	})

	t.Run("SearchPrefixOrderAndPaging", func(t *testing.T) {
		b := setup(t, nil)
		for i := range 5 {
			must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"docs", "team"}, Key: fmt.Sprint("d", i), Value: map[string]any{"i": i}}))
			b.clock.Advance(time.Second)
		}
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"other"}, Key: "o", Value: map[string]any{"i": 99}}))
		res, err := b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: []string{"docs"}})
		must(t, err)
		if got := keys(res); !reflect.DeepEqual(got, []string{"d4", "d3", "d2", "d1", "d0"}) {
			t.Fatalf("newest first: got %v", got)
		}
		res, err = b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: []string{"docs", "team"}, Limit: 2, Offset: 1})
		must(t, err)
		if got := keys(res); !reflect.DeepEqual(got, []string{"d3", "d2"}) {
			t.Fatalf("limit 2 offset 1: got %v", got)
		}
		res, err = b.store.Search(b.ctx, store.SearchRequest{Offset: 10})
		must(t, err)
		if len(res) != 0 {
			t.Fatalf("offset past the end: %v", keys(res))
		}
		res, err = b.store.Search(b.ctx, store.SearchRequest{})
		must(t, err)
		if len(res) != 6 {
			t.Fatalf("empty prefix found %d items, want 6", len(res))
		}
		for _, r := range res {
			if r.Score != 0 {
				t.Fatalf("search without a query scored %v", r.Score)
			}
		}
	})

	t.Run("Filters", func(t *testing.T) {
		b := setup(t, nil)
		ns := []string{"f"}
		put := func(key string, v map[string]any) {
			must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: key, Value: v}))
		}
		put("a", map[string]any{"n": 1, "s": "apple", "tag": "x", "meta": map[string]any{"lang": "en"}, "ok": true})
		put("b", map[string]any{"n": 5, "s": "banana", "tag": "y", "meta": map[string]any{"lang": "pt"}})
		put("c", map[string]any{"n": 10, "s": "cherry", "tag": "x", "ok": false})
		put("d", map[string]any{"n": "10", "s": 7})
		cases := []struct {
			filter map[string]any
			want   []string
		}{
			{map[string]any{"tag": "x"}, []string{"a", "c"}},
			{map[string]any{"tag": map[string]any{"$eq": "y"}}, []string{"b"}},
			{map[string]any{"tag": map[string]any{"$ne": "x"}}, []string{"b", "d"}},
			{map[string]any{"n": map[string]any{"$gt": 1}}, []string{"b", "c"}},
			{map[string]any{"n": map[string]any{"$gte": 1, "$lt": 10}}, []string{"a", "b"}},
			{map[string]any{"n": map[string]any{"$lte": 5}}, []string{"a", "b"}},
			{map[string]any{"s": map[string]any{"$gt": "b"}}, []string{"b", "c"}},
			{map[string]any{"s": map[string]any{"$in": []any{"apple", "cherry", 7}}}, []string{"a", "c", "d"}},
			{map[string]any{"s": map[string]any{"$nin": []any{"apple"}}}, []string{"b", "c", "d"}},
			{map[string]any{"meta.lang": "pt"}, []string{"b"}},
			{map[string]any{"meta": map[string]any{"$exists": true}}, []string{"a", "b"}},
			{map[string]any{"ok": map[string]any{"$exists": false}}, []string{"b", "d"}},
			{map[string]any{"ok": false}, []string{"c"}},
			{map[string]any{"n": 10}, []string{"c"}},
			{map[string]any{"n": "10"}, []string{"d"}},
			{map[string]any{"meta": map[string]any{"lang": "en"}}, []string{"a"}},
			{map[string]any{"tag": "x", "n": map[string]any{"$gt": 5}}, []string{"c"}},
			{map[string]any{"missing": "x"}, nil},
		}
		for _, c := range cases {
			res, err := b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: ns, Filter: c.filter})
			if err != nil {
				t.Errorf("filter %v: %v", c.filter, err)
				continue
			}
			if got := sortedKeys(res); !reflect.DeepEqual(got, c.want) {
				t.Errorf("filter %v: got %v, want %v", c.filter, got, c.want)
			}
		}
	})

	t.Run("FullTextSearch", func(t *testing.T) {
		b := setup(t, nil)
		ns := []string{"kb"}
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "tea", Value: map[string]any{"text": "The user drinks green tea every morning", "topic": "drinks"}}))
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "both", Value: map[string]any{"text": "Green tea and coffee are both fine", "topic": "drinks"}}))
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "coffee", Value: map[string]any{"text": "Coffee after lunch", "topic": "drinks"}}))
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "hidden", Value: map[string]any{"text": "green tea coffee"}, NoIndex: true}))
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "titled", Value: map[string]any{"title": "coffee", "text": "tea"}, Index: []string{"title"}}))
		res, err := b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: ns, Query: "green TEA"})
		must(t, err)
		if got := keys(res); !reflect.DeepEqual(got, []string{"both", "tea"}) {
			t.Fatalf("query green tea: got %v (scores %v)", got, scores(res))
		}
		if res[0].Score != 1 {
			t.Fatalf("an item with every query term scores %v, want 1", res[0].Score)
		}
		res, err = b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: ns, Query: "coffee tea"})
		must(t, err)
		if got := keys(res); len(got) != 4 || got[0] != "both" {
			t.Fatalf("query coffee tea: got %v, want both first then tea, coffee, titled", got)
		}
		if res[1].Score != 0.5 {
			t.Fatalf("half the terms score %v, want 0.5", res[1].Score)
		}
		res, err = b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: ns, Query: "coffee", Filter: map[string]any{"topic": "drinks"}, Limit: 1})
		must(t, err)
		if len(res) != 1 || (res[0].Key != "coffee" && res[0].Key != "both") {
			t.Fatalf("query with filter and limit: %v", keys(res))
		}
		res, err = b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: ns, Query: "zebra"})
		must(t, err)
		if len(res) != 0 {
			t.Fatalf("query for an absent word found %v", keys(res))
		}
		// Re-putting an item replaces its indexed text.
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "coffee", Value: map[string]any{"text": "zebra crossing"}}))
		res, err = b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: ns, Query: "zebra"})
		must(t, err)
		if got := keys(res); !reflect.DeepEqual(got, []string{"coffee"}) {
			t.Fatalf("after re-put: %v", got)
		}
		must(t, b.store.Delete(b.ctx, store.DeleteRequest{Namespace: ns, Key: "coffee"}))
		res, err = b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: ns, Query: "zebra"})
		must(t, err)
		if len(res) != 0 {
			t.Fatalf("deleted item still found: %v", keys(res))
		}
	})

	t.Run("SemanticSearch", func(t *testing.T) {
		b := setup(t, withIndex)
		ns := []string{"users", "u1", "facts"}
		docs := map[string]string{
			"orchard": "we picked apples and a pear in the orchard",
			"garage":  "the truck engine is in the garage",
			"harbour": "sailing a boat out of the harbour",
			"concert": "a guitar and piano concert",
		}
		for k, v := range docs {
			must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: k, Value: map[string]any{"text": v, "kind": "fact"}}))
		}
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "silent", Value: map[string]any{"text": "banana fruit apples"}, NoIndex: true}))
		res, err := b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: []string{"users"}, Query: "fruit"})
		must(t, err)
		if len(res) == 0 || res[0].Key != "orchard" {
			t.Fatalf("query fruit: got %v, want orchard first", keys(res))
		}
		if res[0].Score <= 0.3 || (len(res) > 1 && res[1].Score >= res[0].Score) {
			t.Fatalf("scores %v: the semantic match should lead clearly", scores(res))
		}
		for _, r := range res {
			if r.Key == "silent" {
				t.Fatal("an item put with NoIndex was found by a semantic query")
			}
		}
		res, err = b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: ns, Query: "vehicle", Limit: 1})
		must(t, err)
		if got := keys(res); !reflect.DeepEqual(got, []string{"garage"}) {
			t.Fatalf("query vehicle: %v", got)
		}
		// A filter that excludes the best match.
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "cars", Value: map[string]any{"text": "cars cars cars", "kind": "note"}}))
		res, err = b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: ns, Query: "vehicle", Filter: map[string]any{"kind": "fact"}, Limit: 2})
		must(t, err)
		if len(res) != 2 || res[0].Key != "garage" {
			t.Fatalf("filtered semantic search: %v", keys(res))
		}
		// Only the fields named at put are embedded.
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "titled", Value: map[string]any{"title": "ocean sea", "body": "bananas"}, Index: []string{"title"}}))
		res, err = b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: ns, Query: "sea", Limit: 2})
		must(t, err)
		if got := sortedKeys(res); !reflect.DeepEqual(got, []string{"harbour", "titled"}) {
			t.Fatalf("query sea: %v", keys(res))
		}
		res, err = b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: ns, Query: "banana", Limit: 1})
		must(t, err)
		if len(res) == 1 && res[0].Key == "titled" {
			t.Fatal("a field left out of Index was embedded")
		}
	})

	t.Run("WrongDimension", func(t *testing.T) {
		b := setup(t, func(c *store.Config) {
			c.Index = &store.IndexConfig{Embedder: &TopicEmbedder{WrongDims: TopicDims + 3}, Dims: TopicDims}
		})
		err := b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"a"}, Key: "k", Value: map[string]any{"text": "apples"}})
		if !errors.Is(err, store.ErrDimension) || !strings.Contains(err.Error(), "19") || !strings.Contains(err.Error(), "16") {
			t.Fatalf("put with a 19-dim embedder into a 16-dim index: %v", err)
		}
		if _, err := b.store.Get(b.ctx, store.GetRequest{Namespace: []string{"a"}, Key: "k"}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the failed put stored the item: %v", err)
		}
		_, err = b.store.Search(b.ctx, store.SearchRequest{Query: "apples"})
		if !errors.Is(err, store.ErrDimension) {
			t.Fatalf("query with a wrong-dim embedder: %v", err)
		}
	})

	t.Run("TTL", func(t *testing.T) {
		b := setup(t, nil)
		ns := []string{"session", "s1"}
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "short", Value: map[string]any{"text": "ephemeral note"}, TTL: time.Minute}))
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "forever", Value: map[string]any{"text": "durable note"}}))
		got, err := b.store.Get(b.ctx, store.GetRequest{Namespace: ns, Key: "short"})
		must(t, err)
		if want := b.clock.Now().Add(time.Minute); !got.ExpiresAt.Equal(want) {
			t.Fatalf("ExpiresAt = %v, want %v", got.ExpiresAt, want)
		}
		b.clock.Advance(40 * time.Second)
		// A read refreshes the TTL: 40s later it lives another minute.
		_, err = b.store.Get(b.ctx, store.GetRequest{Namespace: ns, Key: "short"})
		must(t, err)
		b.clock.Advance(40 * time.Second)
		no := false
		got, err = b.store.Get(b.ctx, store.GetRequest{Namespace: ns, Key: "short", RefreshTTL: &no})
		if err != nil {
			t.Fatalf("item read 40s ago with a 1m TTL is gone: %v", err)
		}
		if want := b.clock.Now().Add(20 * time.Second); !got.ExpiresAt.Equal(want) {
			t.Fatalf("a read with RefreshTTL=false moved ExpiresAt to %v, want %v", got.ExpiresAt, want)
		}
		// A search refreshes too.
		res, err := b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: ns, Query: "ephemeral"})
		must(t, err)
		if len(res) != 1 {
			t.Fatalf("search found %v", keys(res))
		}
		b.clock.Advance(61 * time.Second)
		if _, err := b.store.Get(b.ctx, store.GetRequest{Namespace: ns, Key: "short"}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("expired item: %v", err)
		}
		res, err = b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: ns})
		must(t, err)
		if got := keys(res); !reflect.DeepEqual(got, []string{"forever"}) {
			t.Fatalf("search after expiry: %v", got)
		}
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"gone"}, Key: "k", Value: map[string]any{}, TTL: time.Second}))
		b.clock.Advance(2 * time.Second)
		nss, err := b.store.ListNamespaces(b.ctx, store.ListNamespacesRequest{})
		must(t, err)
		if !reflect.DeepEqual(nss, [][]string{{"session", "s1"}}) {
			t.Fatalf("namespaces after expiry: %v", nss)
		}
		n, err := b.store.(store.Sweeper).Sweep(b.ctx)
		must(t, err)
		if n != 2 {
			t.Fatalf("Sweep deleted %d items, want 2", n)
		}
		n, err = b.store.(store.Sweeper).Sweep(b.ctx)
		must(t, err)
		if n != 0 {
			t.Fatalf("second Sweep deleted %d items, want 0", n)
		}
		// A put over an expired item starts afresh.
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "forever", Value: map[string]any{"v": 2}}))
		got, err = b.store.Get(b.ctx, store.GetRequest{Namespace: ns, Key: "forever"})
		must(t, err)
		if !got.ExpiresAt.IsZero() {
			t.Fatalf("item without TTL expires at %v", got.ExpiresAt)
		}
	})

	t.Run("DefaultTTL", func(t *testing.T) {
		b := setup(t, func(c *store.Config) { c.DefaultTTL = time.Hour; c.NoRefreshOnRead = true })
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"a"}, Key: "k", Value: map[string]any{}}))
		b.clock.Advance(59 * time.Minute)
		_, err := b.store.Get(b.ctx, store.GetRequest{Namespace: []string{"a"}, Key: "k"})
		must(t, err)
		b.clock.Advance(2 * time.Minute)
		if _, err := b.store.Get(b.ctx, store.GetRequest{Namespace: []string{"a"}, Key: "k"}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("with NoRefreshOnRead the read should not have extended the TTL: %v", err)
		}
	})

	t.Run("ListNamespaces", func(t *testing.T) {
		b := setup(t, nil)
		for _, ns := range [][]string{
			{"users", "u1", "memories"}, {"users", "u1", "prefs"}, {"users", "u2", "memories"},
			{"docs", "kb"}, {"docs", "kb", "v2"}, {"a"},
		} {
			must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "k", Value: map[string]any{}}))
			must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: "k2", Value: map[string]any{}}))
		}
		cases := []struct {
			req  store.ListNamespacesRequest
			want [][]string
		}{
			{store.ListNamespacesRequest{}, [][]string{{"a"}, {"docs", "kb"}, {"docs", "kb", "v2"}, {"users", "u1", "memories"}, {"users", "u1", "prefs"}, {"users", "u2", "memories"}}},
			{store.ListNamespacesRequest{Prefix: []string{"users"}}, [][]string{{"users", "u1", "memories"}, {"users", "u1", "prefs"}, {"users", "u2", "memories"}}},
			{store.ListNamespacesRequest{Prefix: []string{"users", "*", "memories"}}, [][]string{{"users", "u1", "memories"}, {"users", "u2", "memories"}}},
			{store.ListNamespacesRequest{Suffix: []string{"memories"}}, [][]string{{"users", "u1", "memories"}, {"users", "u2", "memories"}}},
			{store.ListNamespacesRequest{Prefix: []string{"users"}, MaxDepth: 2}, [][]string{{"users", "u1"}, {"users", "u2"}}},
			{store.ListNamespacesRequest{MaxDepth: 1}, [][]string{{"a"}, {"docs"}, {"users"}}},
			{store.ListNamespacesRequest{MaxDepth: 1, Limit: 1, Offset: 1}, [][]string{{"docs"}}},
			{store.ListNamespacesRequest{Prefix: []string{"nope"}}, [][]string{}},
		}
		for _, c := range cases {
			got, err := b.store.ListNamespaces(b.ctx, c.req)
			if err != nil {
				t.Errorf("%+v: %v", c.req, err)
				continue
			}
			if len(got) == 0 && len(c.want) == 0 {
				continue
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("%+v: got %v, want %v", c.req, got, c.want)
			}
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		b := setup(t, withIndex)
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ns := []string{"c", fmt.Sprint("w", w)}
				for i := range 15 {
					key := fmt.Sprint("k", i)
					if err := b.store.Put(b.ctx, store.PutRequest{Namespace: ns, Key: key, Value: map[string]any{"text": "apples and cars", "i": i}}); err != nil {
						errs <- err
						return
					}
					if _, err := b.store.Get(b.ctx, store.GetRequest{Namespace: ns, Key: key}); err != nil {
						errs <- err
						return
					}
					if _, err := b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: []string{"c"}, Query: "fruit", Limit: 3}); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		res, err := b.store.Search(b.ctx, store.SearchRequest{NamespacePrefix: []string{"c"}, Limit: 100})
		must(t, err)
		if len(res) != 60 {
			t.Fatalf("found %d items after concurrent puts, want 60", len(res))
		}
	})

	t.Run("ScoresAreFinite", func(t *testing.T) {
		b := setup(t, withIndex)
		must(t, b.store.Put(b.ctx, store.PutRequest{Namespace: []string{"a"}, Key: "k", Value: map[string]any{"text": "piano"}}))
		res, err := b.store.Search(b.ctx, store.SearchRequest{Query: "the"})
		must(t, err)
		for _, r := range res {
			if math.IsNaN(r.Score) || math.IsInf(r.Score, 0) {
				t.Fatalf("score %v", r.Score)
			}
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func keys(res []store.SearchItem) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.Key
	}
	return out
}

func sortedKeys(res []store.SearchItem) []string {
	if len(res) == 0 {
		return nil
	}
	out := keys(res)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func scores(res []store.SearchItem) []float64 {
	out := make([]float64, len(res))
	for i, r := range res {
		out[i] = r.Score
	}
	return out
}

func items(res []store.SearchItem) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = fmt.Sprintf("%v/%s", r.Namespace, r.Key)
	}
	return out
}
