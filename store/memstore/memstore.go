// Package memstore is the in-memory [store.Store]: items in a map, full-text search on an
// inverted index, and semantic search on an HNSW index (store/vector) when an embedder is
// configured. Nothing survives the process; use it for tests and single-run tools.
package memstore

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/internal/backend"
	"github.com/trellis-go/trellis/store/vector"
)

// Options configure a Store. The zero Options are a store without vectors or TTL.
type Options struct {
	store.Config
	// Vector tunes the HNSW index; the zero value is vector's defaults. The store always
	// sets LazyGraph: the graph is built only once the index reaches DenseGraphFrom vectors
	// (a million by default), below which no search walks it.
	Vector vector.Options
	// ExactVectors makes every semantic search an exact scan instead of an HNSW walk.
	ExactVectors bool
}

// Store is the in-memory backend.
type Store struct {
	cfg   store.Config
	exact bool

	mu       sync.RWMutex
	items    map[string]*entry
	postings map[string]map[string]struct{} // token -> item ids
	vec      *vector.Index
	closed   bool
	stop     func()
}

type entry struct {
	item    store.Item
	ttl     time.Duration
	tokens  []string
	indexed bool
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Sweeper = (*Store)(nil)
	_ store.Batcher = (*Store)(nil)
)

// New returns an empty store. opts may be nil.
func New(opts *Options) (*Store, error) {
	o, cfg, err := backend.Configure(opts, func(o Options) store.Config { return o.Config })
	if err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, exact: o.ExactVectors, items: map[string]*entry{}, postings: map[string]map[string]struct{}{}}
	if cfg.Index != nil {
		vo := o.Vector
		vo.Flat = vo.Flat || o.ExactVectors
		vo.LazyGraph = true
		if s.vec, err = vector.New(cfg.Index.Dims, &vo); err != nil {
			return nil, err
		}
	}
	if cfg.SweepInterval > 0 {
		s.stop = store.StartSweeper(s, cfg.SweepInterval, cfg.Logger, "memory")
	}
	return s, nil
}

// Close stops the background sweeper; later calls fail with store.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	if s.stop != nil {
		s.stop()
	}
	return nil
}

// lock takes the store's lock for a call, or fails with store.ErrClosed, not holding it, when
// the store is closed.
func (s *Store) lock() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return store.ErrClosed
	}
	return nil
}

// read starts a read: the time it reads at, whether it restarts the TTLs of what it reads (see
// store.Config.Refresh), and the store's lock, as lock takes it.
func (s *Store) read(refreshTTL *bool) (now time.Time, refresh bool, err error) {
	now, refresh = s.cfg.Now(), s.cfg.Refresh(refreshTTL)
	return now, refresh, s.lock()
}

func id(ns []string, key string) string { return store.JoinNamespace(ns) + "\x00" + key }

// Put implements store.Store.
func (s *Store) Put(ctx context.Context, req store.PutRequest) error {
	p, err := s.preparePut(ctx, req)
	if err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	s.applyPut(p)
	return nil
}

// put is a checked put: its value normalized, its text and vector worked out.
type put struct {
	req   store.PutRequest
	value map[string]any
	texts []string
	vec   []float32
	now   time.Time
	ttl   time.Duration
}

func (s *Store) preparePut(ctx context.Context, req store.PutRequest) (*put, error) {
	if _, err := s.cfg.CheckPut(req); err != nil {
		return nil, err
	}
	value, err := store.NormalizeValue(req.Value)
	if err != nil {
		return nil, err
	}
	texts, vec, err := backend.Index(ctx, s.cfg, req, value)
	if err != nil {
		return nil, err
	}
	return &put{req: req, value: value, texts: texts, vec: vec, now: s.cfg.Now(), ttl: s.cfg.TTLFor(req)}, nil
}

// applyPut stores a checked put; the caller holds the write lock.
func (s *Store) applyPut(p *put) {
	req, value, texts, vec, now, ttl := p.req, p.value, p.texts, p.vec, p.now, p.ttl
	k := id(req.Namespace, req.Key)
	created := now
	if old, ok := s.items[k]; ok {
		if !backend.Expired(old.item.ExpiresAt, now) {
			created = old.item.CreatedAt
		}
		s.unindex(k, old)
	}
	e := &entry{
		item: store.Item{Namespace: append([]string(nil), req.Namespace...), Key: req.Key, Value: value, CreatedAt: created, UpdatedAt: now},
		ttl:  ttl,
	}
	if ttl > 0 {
		e.item.ExpiresAt = now.Add(ttl)
	}
	if len(texts) > 0 {
		e.indexed = true
		e.tokens = backend.Tokenize(strings.Join(texts, "\n"))
		for _, t := range e.tokens {
			p := s.postings[t]
			if p == nil {
				p = map[string]struct{}{}
				s.postings[t] = p
			}
			p[k] = struct{}{}
		}
	}
	if vec != nil {
		if err := s.vec.Add(k, vec); err != nil {
			// A zero vector has no direction: the item stays findable by text.
			s.cfg.Logger.Debug("memstore: vector not indexed", "key", req.Key, "err", err)
		}
	}
	s.items[k] = e
}

// Batch implements store.Batcher: the reads run first, then every write applies under one
// hold of the lock, so no reader sees part of the batch.
func (s *Store) Batch(ctx context.Context, ops []store.Op) ([]store.Result, error) {
	return store.RunBatch(ctx, ops, func(ctx context.Context, op store.Op) (store.Result, error) { return store.ReadOp(ctx, s, op) },
		func(ctx context.Context, writes []store.Op) error {
			puts := make([]*put, len(writes))
			for i, w := range writes {
				var err error
				switch o := w.(type) {
				case store.PutRequest:
					puts[i], err = s.preparePut(ctx, o)
				case store.DeleteRequest:
					err = backend.CheckGet("delete", o.Namespace, o.Key)
				}
				if err != nil {
					return err
				}
			}
			if err := s.lock(); err != nil {
				return err
			}
			defer s.mu.Unlock()
			for i, w := range writes {
				if puts[i] != nil {
					s.applyPut(puts[i])
					continue
				}
				d := w.(store.DeleteRequest)
				s.deleteLocked(id(d.Namespace, d.Key))
			}
			return nil
		})
}

func (s *Store) deleteLocked(k string) {
	if e, ok := s.items[k]; ok {
		s.unindex(k, e)
		delete(s.items, k)
	}
}

// unindex removes an entry from the text and vector indexes; the caller holds the write lock.
func (s *Store) unindex(k string, e *entry) {
	for _, t := range e.tokens {
		if p := s.postings[t]; p != nil {
			delete(p, k)
			if len(p) == 0 {
				delete(s.postings, t)
			}
		}
	}
	if s.vec != nil {
		s.vec.Delete(k)
	}
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, req store.GetRequest) (*store.Item, error) {
	if err := backend.CheckGet("get", req.Namespace, req.Key); err != nil {
		return nil, err
	}
	now, refresh, err := s.read(req.RefreshTTL)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	e, ok := s.items[id(req.Namespace, req.Key)]
	if !ok || backend.Expired(e.item.ExpiresAt, now) {
		return nil, store.ErrNotFound
	}
	if refresh && e.ttl > 0 {
		e.item.ExpiresAt = now.Add(e.ttl)
	}
	return copyItem(e.item), nil
}

func copyItem(it store.Item) *store.Item {
	c := it
	c.Namespace = append([]string(nil), it.Namespace...)
	c.Value, _ = store.NormalizeValue(it.Value)
	return &c
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, req store.DeleteRequest) error {
	if err := backend.CheckGet("delete", req.Namespace, req.Key); err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	s.deleteLocked(id(req.Namespace, req.Key))
	return nil
}

// Search implements store.Store.
func (s *Store) Search(ctx context.Context, req store.SearchRequest) ([]store.SearchItem, error) {
	filter, err := backend.CheckSearch(&req)
	if err != nil {
		return nil, err
	}
	var terms []string
	var qvec []float32
	if req.Query != "" {
		terms = backend.QueryTerms(req.Query)
		if s.cfg.Index != nil {
			if qvec, err = s.cfg.Index.EmbedText(ctx, req.Query); err != nil {
				return nil, err
			}
		}
	}
	now, refresh, err := s.read(req.RefreshTTL)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	ok := func(e *entry) bool {
		return !backend.Expired(e.item.ExpiresAt, now) && store.HasPrefix(e.item.Namespace, req.NamespacePrefix) && filter.Match(e.item.Value)
	}
	var found []store.SearchItem
	switch {
	case req.Query == "":
		for _, e := range s.items {
			if ok(e) {
				found = append(found, store.SearchItem{Item: e.item})
			}
		}
	case qvec == nil:
		seen := map[string]bool{}
		for _, t := range terms {
			for k := range s.postings[t] {
				if seen[k] {
					continue
				}
				seen[k] = true
				if e := s.items[k]; ok(e) {
					found = append(found, store.SearchItem{Item: e.item, Score: backend.TextScore(terms, e.tokens)})
				}
			}
		}
	default:
		found, err = s.hybrid(req, terms, qvec, ok)
		if err != nil {
			return nil, err
		}
	}
	page := backend.RankAndPage(found, req.Offset, req.Limit)
	out := make([]store.SearchItem, len(page))
	for i, it := range page {
		k := id(it.Namespace, it.Key)
		if e := s.items[k]; refresh && e.ttl > 0 {
			e.item.ExpiresAt = now.Add(e.ttl)
		}
		out[i] = store.SearchItem{Item: *copyItem(it.Item), Score: it.Score}
	}
	return out, nil
}

// hybrid gathers the vector neighbours and the full-text matches of a query and scores each by
// the blend of cosine similarity and text match. The caller holds the lock.
func (s *Store) hybrid(req store.SearchRequest, terms []string, qvec []float32, ok func(*entry) bool) ([]store.SearchItem, error) {
	k := req.Offset + req.Limit
	accept := func(key string) bool { e := s.items[key]; return e != nil && ok(e) }
	var res []vector.Result
	var err error
	// Ask for more neighbours than needed so the text score can reorder them; the same number
	// either way, so ExactVectors differs from the index only by what the index misses.
	if s.exact {
		res, err = s.vec.Exact(qvec, max(2*k, k+10), accept)
	} else {
		res, err = s.vec.Search(qvec, max(2*k, k+10), accept)
	}
	if err != nil {
		return nil, err
	}
	cos := map[string]float64{}
	for _, r := range res {
		cos[r.ID] = float64(r.Similarity)
	}
	// Bring in the items with every query term that the vectors missed: the rarest term's
	// postings, kept when every other term's postings hold them too (set lookups, cheaper
	// than matching each item's tokens when all the terms are common words).
	sets := make([]map[string]struct{}, 0, len(terms))
	for _, t := range terms {
		sets = append(sets, s.postings[t])
	}
	slices.SortFunc(sets, func(a, b map[string]struct{}) int { return len(a) - len(b) })
	var first map[string]struct{}
	if len(sets) > 0 {
		first = sets[0]
	}
next:
	for key := range first {
		for _, set := range sets[1:] {
			if _, in := set[key]; !in {
				continue next
			}
		}
		if _, seen := cos[key]; seen || !accept(key) {
			continue
		}
		if v, found := s.vec.Vector(key); found {
			cos[key] = float64(vector.Cosine(qvec, v))
		}
	}
	out := make([]store.SearchItem, 0, len(cos))
	for key, c := range cos {
		e := s.items[key]
		out = append(out, store.SearchItem{Item: e.item, Score: s.cfg.Index.HybridScore(c, backend.TextScore(terms, e.tokens))})
	}
	return out, nil
}

// ListNamespaces implements store.Store.
func (s *Store) ListNamespaces(ctx context.Context, req store.ListNamespacesRequest) ([][]string, error) {
	if err := backend.CheckListNamespaces(&req); err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, store.ErrClosed
	}
	var all [][]string
	for _, e := range s.items {
		if !backend.Expired(e.item.ExpiresAt, now) {
			all = append(all, e.item.Namespace)
		}
	}
	return backend.CollectNamespaces(all, req), nil
}

// Sweep implements store.Sweeper.
func (s *Store) Sweep(ctx context.Context) (int, error) {
	now := s.cfg.Now()
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	n := 0
	for k, e := range s.items {
		if backend.Expired(e.item.ExpiresAt, now) {
			s.unindex(k, e)
			delete(s.items, k)
			n++
		}
	}
	if s.vec != nil && s.vec.Tombstones() > s.vec.Len() {
		s.vec.Compact()
	}
	return n, nil
}
