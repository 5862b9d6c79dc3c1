package sqlcore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/internal/backend"
)

// Put is what a SQL store writes for a put request, worked out the same way by both.
type Put struct {
	Prefix string // the joined namespace
	Key    string
	Value  string  // the value as JSON
	FTS    *string // the indexed text's tokens; nil when nothing is indexed
	Vec    []float32
	TTL    time.Duration // zero for none
}

// PreparePut checks a put request and works out what to write: the value's JSON, its indexed
// text and its embedding (see backend.Index), and its TTL.
func PreparePut(ctx context.Context, cfg store.Config, req store.PutRequest) (*Put, error) {
	raw, err := cfg.CheckPut(req)
	if err != nil {
		return nil, err
	}
	p := &Put{Prefix: store.JoinNamespace(req.Namespace), Key: req.Key, Value: string(raw), TTL: cfg.TTLFor(req)}
	if req.NoIndex {
		return p, nil
	}
	var value map[string]any
	if err := json.Unmarshal(raw, &value); err != nil {
		return nil, err
	}
	texts, vec, err := backend.Index(ctx, cfg, req, value)
	if err != nil {
		return nil, err
	}
	if len(texts) > 0 {
		fts := backend.FTSText(texts)
		p.FTS, p.Vec = &fts, vec
	}
	return p, nil
}

// Upsert returns the statement that writes p's item at now, and its arguments. An item that
// replaces an expired one is new: it gets a new creation time.
func (d Dialect) Upsert(p *Put, now time.Time) (string, []any) {
	var expires, ttl, fts, vec any // NULL unless set
	if p.FTS != nil {
		fts = *p.FTS
	}
	if p.TTL > 0 {
		expires, ttl = d.Time(now.Add(p.TTL)), int64(p.TTL)
	}
	if p.Vec != nil {
		vec = EncodeVec(p.Vec)
	}
	c := NewConds(d.Param)
	q := `INSERT INTO store_items (prefix, key, value, created_at, updated_at, expires_at, ttl_ns, fts_text, vec)
	VALUES (` + strings.Join([]string{c.Arg(p.Prefix), c.Arg(p.Key), c.Arg(p.Value), c.Arg(d.Time(now)), c.Arg(d.Time(now)),
		c.Arg(expires), c.Arg(ttl), c.Arg(fts), c.Arg(vec)}, ", ") + `)
	ON CONFLICT (prefix, key) DO UPDATE SET
		value = excluded.value,
		created_at = CASE WHEN store_items.expires_at IS NOT NULL AND store_items.expires_at <= excluded.updated_at
			THEN excluded.created_at ELSE store_items.created_at END,
		updated_at = excluded.updated_at, expires_at = excluded.expires_at, ttl_ns = excluded.ttl_ns,
		fts_text = excluded.fts_text, vec = excluded.vec`
	return q, c.Args
}

// Fill sets what every store reads back the same way: the item's namespace, key and value (the
// JSON of the value column) and the indexed tokens. backend names the store in errors.
func (r *Row) Fill(backend, prefix, key string, value []byte, fts *string) error {
	r.Item.Namespace, r.Item.Key = store.SplitNamespace(prefix), key
	if err := json.Unmarshal(value, &r.Item.Value); err != nil {
		return fmt.Errorf("store: %s: item %q holds invalid JSON: %w", backend, key, err)
	}
	if fts != nil {
		r.Tokens = strings.Fields(*fts)
	}
	return nil
}

// Matching reads rows, each with scan, and keeps those whose item filter matches, up to max of
// them (all when max is 0). The caller closes rows.
func Matching(rows Rows, scan func() (*Row, error), filter *store.Filter, max int) ([]*Row, error) {
	var out []*Row
	for (max == 0 || len(out) < max) && rows.Next() {
		r, err := scan()
		if err != nil {
			return nil, err
		}
		if filter.Match(r.Item.Value) {
			out = append(out, r)
		}
	}
	return out, rows.Err()
}
