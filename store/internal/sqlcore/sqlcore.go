// Package sqlcore is what the SQL stores (sqlitestore, pgstore) share, so that each keeps only
// what its database does differently. A store holds a [Core] (core.go): its database behind the
// small [DB] interface, its [Dialect], configuration, closed flag and sweeper, and the methods
// that differ in nothing but the dialect (ListNamespaces, the dimension check, the search's
// filtered row loop). Beside it: the preparation and upsert of a put (put.go), the order of a
// search (browse, full text or hybrid, then ranking, paging and TTL refresh), the conditions
// every listing applies (live items under a namespace prefix, the filter's equalities pushed
// down), the vector encoding and the error type with its hints.
package sqlcore

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/internal/backend"
)

// Row is an item as a store reads it back, with what ranking needs.
type Row struct {
	Item   store.Item
	TTL    *int64 // nanoseconds; nil when the item has no TTL
	Tokens []string
	Vec    []float32 // only when asked for
}

// Searcher is a store's three ways of finding items; Search puts them in order.
type Searcher struct {
	// Browse lists live items newest first, up to offset+limit of them.
	Browse func(ctx context.Context, req store.SearchRequest, f *store.Filter, now time.Time) ([]*Row, error)
	// Text finds items matching any of terms (no embedder configured).
	Text func(ctx context.Context, req store.SearchRequest, f *store.Filter, now time.Time, terms []string) ([]*Row, error)
	// Hybrid scores items by meaning and text (an embedder configured).
	Hybrid func(ctx context.Context, req store.SearchRequest, f *store.Filter, now time.Time) ([]*Row, []float64, error)
	// Refresh restarts the TTLs of rows, setting their items' new expiry; a failure only loses
	// the refresh.
	Refresh func(ctx context.Context, now time.Time, rows []*Row)
}

// Search is a store's Search: the request checked, the items found the way the query asks,
// ranked and paged, and the page's TTLs refreshed when cfg says so.
func (s Searcher) Search(ctx context.Context, cfg store.Config, req store.SearchRequest) ([]store.SearchItem, error) {
	filter, err := backend.CheckSearch(&req)
	if err != nil {
		return nil, err
	}
	now := cfg.Now()
	var found []*Row
	var scores []float64
	switch {
	case req.Query == "":
		found, err = s.Browse(ctx, req, filter, now)
		scores = make([]float64, len(found))
	case cfg.Index == nil:
		terms := backend.QueryTerms(req.Query)
		found, err = s.Text(ctx, req, filter, now, terms)
		for _, r := range found {
			scores = append(scores, backend.TextScore(terms, r.Tokens))
		}
	default:
		found, scores, err = s.Hybrid(ctx, req, filter, now)
	}
	if err != nil {
		return nil, err
	}
	all := make([]store.SearchItem, len(found))
	byID := make(map[string]*Row, len(found))
	for i, r := range found {
		all[i] = store.SearchItem{Item: r.Item, Score: scores[i]}
		byID[ID(store.JoinNamespace(r.Item.Namespace), r.Item.Key)] = r
	}
	page := backend.RankAndPage(all, req.Offset, req.Limit)
	if cfg.Refresh(req.RefreshTTL) {
		rows := make([]*Row, len(page))
		for i, p := range page {
			rows[i] = byID[ID(store.JoinNamespace(p.Namespace), p.Key)]
		}
		s.Refresh(ctx, now, rows)
		for i := range page {
			page[i].ExpiresAt = rows[i].Item.ExpiresAt
		}
	}
	return page, nil
}

// ID is an item's identity in one string: its joined namespace and its key.
func ID(prefix, key string) string { return prefix + "\x00" + key }

// QuoteTerms writes search terms as a full-text query: each term between quote characters (one
// inside a term doubled), joined by op (" OR ", " | ").
func QuoteTerms(terms []string, quote, op string) string {
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = quote + strings.ReplaceAll(t, quote, quote+quote) + quote
	}
	return strings.Join(q, op)
}

// TextCandidates bounds how many full-text matches a query scores.
func TextCandidates(offset, limit int) int { return max(500, 10*(offset+limit)) }

// Conds accumulates SQL conditions and their arguments.
type Conds struct {
	sql   []string
	Args  []any
	param func(n int) string
}

// NewConds starts conditions whose placeholders param writes ("$1" or "?").
func NewConds(param func(n int) string) *Conds { return &Conds{param: param} }

// Arg adds an argument and returns its placeholder.
func (c *Conds) Arg(v any) string {
	c.Args = append(c.Args, v)
	return c.param(len(c.Args))
}

// Add adds a condition.
func (c *Conds) Add(s string) { c.sql = append(c.sql, s) }

func (c *Conds) String() string {
	if len(c.sql) == 0 {
		return "true"
	}
	return strings.Join(c.sql, " AND ")
}

// Dialect is how a store's SQL differs in the conditions every listing applies.
type Dialect struct {
	Param func(n int) string
	// Time is a timestamp as the store keeps it.
	Time func(time.Time) any
	// JSONEq returns the condition that the item's value holds v at path, or false when the
	// path cannot be written in SQL (the filter is checked in Go anyway).
	JSONEq func(c *Conds, path []string, v any) (string, bool)
}

// Where returns the conditions shared by listings: live items at now under prefix, with the
// filter's equalities pushed down (the caller still checks the filter in Go). The items table
// is aliased i.
func (d Dialect) Where(prefix []string, filter *store.Filter, now time.Time) *Conds {
	c := NewConds(d.Param)
	d.WhereOn(c, prefix, filter, now)
	return c
}

// WhereOn adds Where's conditions to c.
func (d Dialect) WhereOn(c *Conds, prefix []string, filter *store.Filter, now time.Time) {
	c.Add("(i.expires_at IS NULL OR i.expires_at > " + c.Arg(d.Time(now)) + ")")
	if len(prefix) > 0 {
		p := store.JoinNamespace(prefix)
		// A byte-wise range on the primary key: p itself, or p followed by a separator.
		c.Add("(i.prefix = " + c.Arg(p) + " OR (i.prefix > " + c.Arg(p+store.NamespaceSeparator) + " AND i.prefix < " + c.Arg(p+"\x20") + "))")
	}
	paths, values := filter.Equalities()
	for i, path := range paths {
		if cond, ok := d.JSONEq(c, path, values[i]); ok {
			c.Add(cond)
		}
	}
}

// EncodeVec lays a vector out as little-endian float32s.
func EncodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVec reads what EncodeVec wrote.
func DecodeVec(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// Classify names what a database error means: hint, what to do (empty when the store does not
// know), and kind, the store sentinel it matches (nil for none).
type Classify func(err error) (hint string, kind error)

// Wrap turns a driver error of op into a store.BackendError with a hint. nil stays nil; context
// errors and the store's own errors pass through.
func Wrap(backend, op string, err error, classify Classify) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var be *store.BackendError
	var ie *store.InputError
	if errors.As(err, &be) || errors.As(err, &ie) {
		return err
	}
	e := &store.BackendError{Backend: backend, Op: op, Err: err}
	e.Hint, e.Kind = classify(err)
	return e
}
