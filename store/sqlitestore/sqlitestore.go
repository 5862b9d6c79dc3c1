package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"

	"github.com/trellis-go/trellis/internal/owned"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/internal/backend"
	"github.com/trellis-go/trellis/store/internal/sqlcore"
	"github.com/trellis-go/trellis/store/vector"
)

// Options configure a Store. The zero Options are a store without vectors or TTL.
type Options struct {
	store.Config
	// Vector tunes the HNSW index; the zero value is vector's defaults.
	Vector vector.Options
	// ExactVectors makes every semantic search an exact scan instead of an HNSW walk.
	ExactVectors bool
}

// Store is the SQLite backend. It is safe for concurrent use, and several processes may open the
// same file: each one's vector index catches up with the others' writes before it searches.
type Store struct {
	core  *sqlcore.Core // the database, dialect, configuration and closed flag
	db    *sql.DB
	ownDB bool
	cfg   store.Config
	exact bool
	vopts vector.Options

	vmu     sync.Mutex // serializes catching up the vector index
	vec     *vector.Index
	lastSeq int64 // last change applied to vec; -1 before the first load
	// savedSeq is the change the saved graph (store_vector_graph) is at, as far as this
	// process knows; -1 when there is none.
	savedSeq int64
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Sweeper = (*Store)(nil)
	_ store.Batcher = (*Store)(nil)
)

var (
	opName = sqlcore.OpName
	nsOf   = sqlcore.OpNamespace
	keyOf  = sqlcore.OpKey
)

// DSN returns the connection string Open uses for a file: WAL journal, a 5 s busy timeout,
// synchronous=NORMAL (durable across process crashes, as WAL makes it), immediate write
// transactions, and reads of the main file through a memory map of up to 256 MiB with a
// 16 MiB page cache per connection (SQLite's defaults, no map and 2 MiB, make a search of a
// large store one pread system call per page).
func DSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "mmap_size(268435456)")
	q.Add("_pragma", "cache_size(-16384)")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the SQLite database at path, migrates it and returns the store.
// opts may be nil. Close the store to close the database.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	if path == "" {
		return nil, &store.ConfigError{Field: "path", Problem: "is empty", Hint: "give a file name such as trellis.db"}
	}
	db, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		return nil, wrap("open "+path, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, wrap("open "+path, err)
	}
	s, err := New(ctx, db, opts)
	return owned.Open(s, err, func() { db.Close() }, func(s *Store) { s.ownDB = true })
}

// New returns a store on an open database (for example one shared with the checkpoint saver),
// after migrating it. Close does not close db.
func New(ctx context.Context, db *sql.DB, opts *Options) (*Store, error) {
	o, cfg, err := backend.Configure(opts, func(o Options) store.Config { return o.Config })
	if err != nil {
		return nil, err
	}
	if err := Migrate(ctx, db); err != nil {
		return nil, err
	}
	s := &Store{db: db, cfg: cfg, exact: o.ExactVectors, vopts: o.Vector, lastSeq: -1, savedSeq: -1,
		core: sqlcore.NewCore(sqlcore.StdDB{DB: db}, dialect, cfg, "sqlite", classify)}
	s.vopts.Flat = s.vopts.Flat || o.ExactVectors
	if cfg.Index != nil {
		if err := s.checkDims(ctx); err != nil {
			return nil, err
		}
		if err := s.syncVectors(ctx); err != nil {
			return nil, err
		}
		mode := "hnsw"
		if s.exact {
			mode = "exact"
		}
		cfg.Logger.Info("store: vector search ready", "backend", "sqlite", "index", mode, "dims", cfg.Index.Dims, "vectors", s.vec.Len())
	}
	s.core.StartSweeper(s)
	return s, nil
}

// checkDims records the index dimension on first use and refuses to open with another.
func (s *Store) checkDims(ctx context.Context) error { return s.core.CheckDims(ctx, "a new file") }

// Close stops the sweeper, saves the vector graph when it has moved on by more than
// [graphResave] changes since it was saved, and, when Open made it, closes the database.
func (s *Store) Close() error {
	if s.core.Close() {
		return nil
	}
	if s.vec != nil {
		s.vmu.Lock()
		if s.lastSeq-s.savedSeq > graphResave || (s.savedSeq < 0 && s.lastSeq >= 0) {
			s.saveGraph(context.Background())
		}
		s.vmu.Unlock()
	}
	if s.ownDB {
		return s.db.Close()
	}
	return nil
}

// DB returns the underlying database.
func (s *Store) DB() *sql.DB { return s.db }

var itemID = sqlcore.ID

func nullTime(ns sql.NullInt64) time.Time {
	if !ns.Valid {
		return time.Time{}
	}
	return time.Unix(0, ns.Int64).UTC()
}

// Put implements store.Store.
func (s *Store) Put(ctx context.Context, req store.PutRequest) error {
	p, err := s.core.PreparePut(ctx, req)
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return wrap("put", err)
	}
	defer tx.Rollback()
	if err := s.putTx(ctx, tx, p, now); err != nil {
		return wrap("put", err)
	}
	return wrap("put", tx.Commit())
}

func (s *Store) putTx(ctx context.Context, tx *sql.Tx, p *sqlcore.Put, now time.Time) error {
	q, args := dialect.Upsert(p, now)
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return err
	}
	if s.cfg.Index != nil {
		if _, err := tx.ExecContext(ctx, "INSERT INTO store_vector_changes (prefix, key, at) VALUES (?, ?, ?)", p.Prefix, p.Key, now.UnixNano()); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) deleteTx(ctx context.Context, tx *sql.Tx, prefix, key string) error {
	res, err := tx.ExecContext(ctx, "DELETE FROM store_items WHERE prefix = ? AND key = ?", prefix, key)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n > 0 && s.cfg.Index != nil {
		if _, err := tx.ExecContext(ctx, "INSERT INTO store_vector_changes (prefix, key, at) VALUES (?, ?, ?)", prefix, key, s.cfg.Now().UnixNano()); err != nil {
			return err
		}
	}
	return nil
}

// Batch implements store.Batcher: the reads run first, then every put and delete of the batch
// is written in one transaction, so a write that fails leaves none of them applied.
func (s *Store) Batch(ctx context.Context, ops []store.Op) ([]store.Result, error) {
	return store.RunBatch(ctx, ops, func(ctx context.Context, op store.Op) (store.Result, error) { return store.ReadOp(ctx, s, op) },
		func(ctx context.Context, writes []store.Op) error {
			puts, err := s.core.PrepareWrites(ctx, writes)
			if err != nil {
				return err
			}
			now := s.cfg.Now()
			tx, err := s.db.BeginTx(ctx, nil)
			if err != nil {
				return wrap("batch", err)
			}
			defer tx.Rollback()
			for i, w := range writes {
				if puts[i] != nil {
					err = s.putTx(ctx, tx, puts[i], now)
				} else {
					d := w.(store.DeleteRequest)
					err = s.deleteTx(ctx, tx, store.JoinNamespace(d.Namespace), d.Key)
				}
				if err != nil {
					return fmt.Errorf("store: batch write %d of %d (%s %v/%s), none applied: %w", i+1, len(writes), opName(w), nsOf(w), keyOf(w), wrap("batch", err))
				}
			}
			return wrap("batch", tx.Commit())
		})
}

const itemCols = "prefix, key, value, created_at, updated_at, expires_at, ttl_ns, fts_text"

// row is an item read back (sqlcore.Row).
type row = sqlcore.Row

type scanner interface{ Scan(...any) error }

// scanRows is scanRow for a listing's rows.
func scanRows(rows sqlcore.Rows) (*row, error) { return scanRow(rows) }

func scanRow(sc scanner) (*row, error) {
	var prefix, key string
	var value []byte
	var created, updated int64
	var expires, ttl sql.NullInt64
	var fts sql.NullString
	if err := sc.Scan(&prefix, &key, &value, &created, &updated, &expires, &ttl, &fts); err != nil {
		return nil, err
	}
	r := &row{}
	if ttl.Valid {
		r.TTL = &ttl.Int64
	}
	r.Item.CreatedAt, r.Item.UpdatedAt, r.Item.ExpiresAt = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC(), nullTime(expires)
	var tokens *string
	if fts.Valid {
		tokens = &fts.String
	}
	return r, r.Fill("sqlite", prefix, key, value, tokens)
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, req store.GetRequest) (*store.Item, error) {
	if err := s.core.Check("get", req.Namespace, req.Key); err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	prefix := store.JoinNamespace(req.Namespace)
	r, err := scanRow(s.db.QueryRowContext(ctx, "SELECT "+itemCols+" FROM store_items WHERE prefix = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)", prefix, req.Key, now.UnixNano()))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, wrap("get", err)
	}
	if s.cfg.Refresh(req.RefreshTTL) {
		s.refresh(ctx, now, []*row{r})
	}
	return &r.Item, nil
}

// refresh restarts the TTL of rows that have one. A failure only loses the refresh, so it is
// logged rather than failing the read (a read-only replica can still serve reads).
func (s *Store) refresh(ctx context.Context, now time.Time, rows []*row) {
	for _, r := range rows {
		if r.TTL == nil {
			continue
		}
		exp := now.Add(time.Duration(*r.TTL))
		_, err := s.db.ExecContext(ctx, "UPDATE store_items SET expires_at = ? WHERE prefix = ? AND key = ? AND expires_at IS NOT NULL",
			exp.UnixNano(), store.JoinNamespace(r.Item.Namespace), r.Item.Key)
		if err != nil {
			s.cfg.Logger.Warn("store: TTL refresh failed", "backend", "sqlite", "key", r.Item.Key, "err", wrap("refresh", err))
			continue
		}
		r.Item.ExpiresAt = exp.UTC()
	}
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, req store.DeleteRequest) error {
	if err := s.core.Check("delete", req.Namespace, req.Key); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return wrap("delete", err)
	}
	defer tx.Rollback()
	if err := s.deleteTx(ctx, tx, store.JoinNamespace(req.Namespace), req.Key); err != nil {
		return wrap("delete", err)
	}
	return wrap("delete", tx.Commit())
}

// dialect is how the conditions every listing applies are written for SQLite.
var dialect = sqlcore.Dialect{
	Param: func(int) string { return "?" },
	Time:  func(t time.Time) any { return t.UnixNano() },
	JSONEq: func(c *sqlcore.Conds, path []string, v any) (string, bool) {
		jp, ok := jsonPath(path)
		if !ok {
			return "", false
		}
		return "json_extract(i.value, " + c.Arg(jp) + ") = " + c.Arg(v), true
	},
}

// where returns the conditions every listing applies, and their arguments.
func where(prefix []string, filter *store.Filter, now time.Time) (string, []any) {
	c := dialect.Where(prefix, filter, now)
	return c.String(), c.Args
}

func jsonPath(path []string) (string, bool) {
	var b strings.Builder
	b.WriteString("$")
	for _, p := range path {
		if strings.ContainsAny(p, `"\`) {
			return "", false
		}
		b.WriteString(`."` + p + `"`)
	}
	return b.String(), true
}

// ftsQuery writes the terms as an FTS5 query that matches any of them.
func ftsQuery(terms []string) string { return sqlcore.QuoteTerms(terms, `"`, " OR ") }

// Search implements store.Store.
func (s *Store) Search(ctx context.Context, req store.SearchRequest) ([]store.SearchItem, error) {
	return s.core.Search(ctx, sqlcore.Searcher{Browse: s.browse, Text: s.text, Hybrid: s.hybrid, Refresh: s.refresh}, req)
}

// text finds the items matching any of terms. An item holding every term has the top text
// score, and among equal scores the newest ranks first; so when enough items hold every term,
// the page is the newest of them, and FTS5 need not rank the many items that share only a
// common word with the query.
func (s *Store) text(ctx context.Context, req store.SearchRequest, filter *store.Filter, now time.Time, terms []string) ([]*row, error) {
	want := req.Offset + req.Limit
	var found []*row
	var err error
	if len(terms) > 1 {
		found, err = s.fullText(ctx, req, filter, now, terms, want, textAllNewest)
	}
	if err == nil && len(found) < want {
		found, err = s.fullText(ctx, req, filter, now, terms, sqlcore.TextCandidates(req.Offset, req.Limit), textAnyRanked)
	}
	return found, err
}

// browse lists items newest first, stopping once a page is full.
func (s *Store) browse(ctx context.Context, req store.SearchRequest, filter *store.Filter, now time.Time) ([]*row, error) {
	cond, args := where(req.NamespacePrefix, filter, now)
	return s.core.Find(ctx, "SELECT "+prefixed(itemCols)+" FROM store_items i WHERE "+cond+" ORDER BY i.updated_at DESC, i.prefix, i.key", args, scanRows, filter, req.Offset+req.Limit)
}

func prefixed(cols string) string {
	parts := strings.Split(cols, ", ")
	for i, p := range parts {
		parts[i] = "i." + p
	}
	return strings.Join(parts, ", ")
}

// textMode says which full-text matches fullText returns, in which order.
type textMode int

const (
	// textAnyRanked: items with any term, best by bm25 first.
	textAnyRanked textMode = iota
	// textAll: items with every term, in no particular order (much cheaper: no ranking of
	// the many items that share one common word with the query).
	textAll
	// textAllNewest: items with every term, newest first (the order RankAndPage gives equal
	// scores).
	textAllNewest
)

// fullText returns up to n live items matching the terms as mode says.
func (s *Store) fullText(ctx context.Context, req store.SearchRequest, filter *store.Filter, now time.Time, terms []string, n int, mode textMode) ([]*row, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	cond, args := where(req.NamespacePrefix, filter, now)
	q, order := ftsQuery(terms), " ORDER BY store_fts.rank"
	switch mode {
	case textAll:
		q, order = strings.ReplaceAll(q, " OR ", " AND "), ""
	case textAllNewest:
		q, order = strings.ReplaceAll(q, " OR ", " AND "), " ORDER BY i.updated_at DESC, i.prefix, i.key"
	}
	args = append([]any{q}, args...)
	args = append(args, n)
	return s.core.Find(ctx, "SELECT "+prefixed(itemCols)+" FROM store_fts JOIN store_items i ON i.rowid = store_fts.rowid WHERE store_fts MATCH ? AND "+cond+order+" LIMIT ?", args, scanRows, filter, 0)
}

// hybrid merges the vector neighbours of the query with its full-text matches and scores them.
func (s *Store) hybrid(ctx context.Context, req store.SearchRequest, filter *store.Filter, now time.Time) ([]*row, []float64, error) {
	q, err := s.cfg.Index.EmbedText(ctx, req.Query)
	if err != nil {
		return nil, nil, err
	}
	if err := s.syncVectors(ctx); err != nil {
		return nil, nil, err
	}
	terms := backend.QueryTerms(req.Query)
	want := req.Offset + req.Limit
	var wantPrefix string
	if len(req.NamespacePrefix) > 0 {
		wantPrefix = store.JoinNamespace(req.NamespacePrefix)
	}
	accept := func(id string) bool {
		if wantPrefix == "" {
			return true
		}
		p, _, _ := strings.Cut(id, "\x00")
		return p == wantPrefix || strings.HasPrefix(p, wantPrefix+store.NamespaceSeparator)
	}
	// The text side (the items with every query term) does not depend on the vectors: it runs
	// on another connection while the index is searched, so on an idle machine a search
	// costs the longer of the two rather than their sum.
	type textResult struct {
		rows []*row
		err  error
	}
	textc := make(chan textResult, 1)
	go func() {
		rows, err := s.fullText(ctx, req, filter, now, terms, 2*want+20, textAll)
		textc <- textResult{rows, err}
	}()
	cos := map[string]float64{}
	var found []*row
	seen := map[string]bool{}
	// Fetch more neighbours than needed, since the filter and expiry are checked after the walk;
	// widen until the page is full or every vector was considered.
	for k := max(2*want, want+10); ; k *= 4 {
		var res []vector.Result
		if s.exact || k >= s.vec.Len() {
			res, err = s.vec.Exact(q, k, accept)
		} else {
			res, err = s.vec.Search(q, k, accept)
		}
		if err != nil {
			<-textc
			return nil, nil, err
		}
		var fresh []string
		for _, r := range res {
			if !seen[r.ID] {
				fresh = append(fresh, r.ID)
			}
		}
		rows, err := s.loadMany(ctx, fresh, now)
		if err != nil {
			<-textc
			return nil, nil, err
		}
		for _, r := range res {
			if seen[r.ID] {
				continue
			}
			seen[r.ID] = true
			row := rows[r.ID]
			if row == nil || !filter.Match(row.Item.Value) {
				continue
			}
			cos[r.ID] = float64(r.Similarity)
			found = append(found, row)
		}
		if len(found) >= want || len(res) < k || s.exact {
			break
		}
	}
	// The text side brings in the items with every query term that the vectors missed.
	tr := <-textc
	text, err := tr.rows, tr.err
	if err != nil {
		return nil, nil, err
	}
	for _, r := range text {
		id := itemID(store.JoinNamespace(r.Item.Namespace), r.Item.Key)
		if seen[id] {
			continue
		}
		v, ok := s.vec.Vector(id)
		if !ok {
			continue
		}
		seen[id] = true
		cos[id] = float64(vector.Cosine(q, v))
		found = append(found, r)
	}
	scores := make([]float64, len(found))
	for i, r := range found {
		id := itemID(store.JoinNamespace(r.Item.Namespace), r.Item.Key)
		scores[i] = s.cfg.Index.HybridScore(cos[id], backend.TextScore(terms, r.Tokens))
	}
	return found, scores, nil
}

// loadMany reads the live items of ids (itemID form) with one query per 200, keyed by id; an
// id whose item is gone or expired is absent from the map.
func (s *Store) loadMany(ctx context.Context, ids []string, now time.Time) (map[string]*row, error) {
	out := make(map[string]*row, len(ids))
	for len(ids) > 0 {
		batch := ids[:min(len(ids), 200)]
		ids = ids[len(batch):]
		args := make([]any, 0, 2*len(batch)+1)
		var b strings.Builder
		for i, id := range batch {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?)")
			prefix, key, _ := strings.Cut(id, "\x00")
			args = append(args, prefix, key)
		}
		args = append(args, now.UnixNano())
		rows, err := s.db.QueryContext(ctx, "SELECT "+itemCols+" FROM store_items WHERE (prefix, key) IN (VALUES "+b.String()+") AND (expires_at IS NULL OR expires_at > ?)", args...)
		if err != nil {
			return nil, wrap("search", err)
		}
		for rows.Next() {
			r, err := scanRow(rows)
			if err != nil {
				rows.Close()
				return nil, wrap("search", err)
			}
			out[itemID(store.JoinNamespace(r.Item.Namespace), r.Item.Key)] = r
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, wrap("search", err)
		}
	}
	return out, nil
}

// syncVectors brings the in-memory index up to date: a full load the first time (or when the
// change log was pruned past this process's position), the logged changes afterwards.
func (s *Store) syncVectors(ctx context.Context) error {
	s.vmu.Lock()
	defer s.vmu.Unlock()
	var minSeq, maxSeq sql.NullInt64
	// Two subqueries, not min(seq), max(seq) in one: SQLite answers a lone min or max from
	// the end of the key's b-tree, but both in one query scan the whole log (100,000 rows
	// after a bulk load: most of a search's time).
	if err := s.db.QueryRowContext(ctx, "SELECT (SELECT min(seq) FROM store_vector_changes), (SELECT max(seq) FROM store_vector_changes)").Scan(&minSeq, &maxSeq); err != nil {
		return wrap("load vectors", err)
	}
	if s.lastSeq >= 0 && maxSeq.Int64 == s.lastSeq {
		return nil
	}
	if s.lastSeq < 0 || (minSeq.Valid && minSeq.Int64 > s.lastSeq+1) {
		loaded, err := s.loadSaved(ctx, minSeq, maxSeq)
		if err != nil {
			return err
		}
		if !loaded {
			if err := s.loadAll(ctx); err != nil {
				return err
			}
			s.saveGraph(ctx)
			return nil
		}
		if s.lastSeq == maxSeq.Int64 {
			return nil
		}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT c.seq, c.prefix, c.key, i.vec FROM store_vector_changes c
		LEFT JOIN store_items i ON i.prefix = c.prefix AND i.key = c.key WHERE c.seq > ? ORDER BY c.seq`, s.lastSeq)
	if err != nil {
		return wrap("load vectors", err)
	}
	defer rows.Close()
	latest := map[string][]byte{}
	var order []string
	last := s.lastSeq
	for rows.Next() {
		var seq int64
		var prefix, key string
		var blob []byte
		if err := rows.Scan(&seq, &prefix, &key, &blob); err != nil {
			return wrap("load vectors", err)
		}
		id := itemID(prefix, key)
		if _, ok := latest[id]; !ok {
			order = append(order, id)
		}
		latest[id] = blob
		last = seq
	}
	if err := rows.Err(); err != nil {
		return wrap("load vectors", err)
	}
	for _, id := range order {
		s.apply(id, latest[id])
	}
	s.lastSeq = last
	if s.vec.Tombstones() > s.vec.Len() && s.vec.Tombstones() > 1000 {
		s.vec.Compact()
	}
	return nil
}

func (s *Store) apply(id string, blob []byte) {
	if blob == nil {
		s.vec.Delete(id)
		return
	}
	if err := s.vec.Add(id, sqlcore.DecodeVec(blob)); err != nil {
		s.cfg.Logger.Warn("store: vector not indexed", "backend", "sqlite", "id", id, "err", err)
	}
}

func (s *Store) loadAll(ctx context.Context) error {
	ix, err := vector.New(s.cfg.Index.Dims, &s.vopts)
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return wrap("load vectors", err)
	}
	defer tx.Rollback()
	var maxSeq sql.NullInt64
	if err := tx.QueryRowContext(ctx, "SELECT max(seq) FROM store_vector_changes").Scan(&maxSeq); err != nil {
		return wrap("load vectors", err)
	}
	rows, err := tx.QueryContext(ctx, "SELECT prefix, key, vec FROM store_items WHERE vec IS NOT NULL ORDER BY rowid")
	if err != nil {
		return wrap("load vectors", err)
	}
	defer rows.Close()
	for rows.Next() {
		var prefix, key string
		var blob []byte
		if err := rows.Scan(&prefix, &key, &blob); err != nil {
			return wrap("load vectors", err)
		}
		if len(blob) != 4*s.cfg.Index.Dims {
			return &store.InputError{Op: "load vectors", Field: "vector of " + key, Problem: fmt.Sprintf("has %d dimensions, the index has %d", len(blob)/4, s.cfg.Index.Dims),
				Hint: "the database was filled with another embedder; re-ingest into a new file", Kind: store.ErrDimension}
		}
		if err := ix.Add(itemID(prefix, key), sqlcore.DecodeVec(blob)); err != nil {
			s.cfg.Logger.Warn("store: vector not indexed", "backend", "sqlite", "key", key, "err", err)
		}
	}
	if err := rows.Err(); err != nil {
		return wrap("load vectors", err)
	}
	s.vec = ix
	s.lastSeq = maxSeq.Int64
	return nil
}

// ListNamespaces implements store.Store.
func (s *Store) ListNamespaces(ctx context.Context, req store.ListNamespacesRequest) ([][]string, error) {
	return s.core.ListNamespaces(ctx, req)
}

// changeLogAge is how long vector changes are kept for other processes to catch up; one that
// falls further behind reloads every vector.
const changeLogAge = time.Hour

// Sweep implements store.Sweeper.
func (s *Store) Sweep(ctx context.Context) (int, error) {
	if s.core.Closed() {
		return 0, store.ErrClosed
	}
	now := s.cfg.Now().UnixNano()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, wrap("sweep", err)
	}
	defer tx.Rollback()
	if s.cfg.Index != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO store_vector_changes (prefix, key, at)
			SELECT prefix, key, ? FROM store_items WHERE expires_at IS NOT NULL AND expires_at <= ? AND vec IS NOT NULL`, now, now); err != nil {
			return 0, wrap("sweep", err)
		}
	}
	res, err := tx.ExecContext(ctx, "DELETE FROM store_items WHERE expires_at IS NOT NULL AND expires_at <= ?", now)
	if err != nil {
		return 0, wrap("sweep", err)
	}
	n, _ := res.RowsAffected()
	if _, err := tx.ExecContext(ctx, "DELETE FROM store_vector_changes WHERE at < ? AND seq < (SELECT max(seq) FROM store_vector_changes)", now-int64(changeLogAge)); err != nil {
		return 0, wrap("sweep", err)
	}
	return int(n), wrap("sweep", tx.Commit())
}

// SQLite result codes (the low byte of an extended code).
const (
	codeBusy     = 5
	codeReadOnly = 8
	codeCantOpen = 14
	codeFull     = 13
	codeIOErr    = 10
)

// wrap turns a driver error into a store.BackendError with a hint; nil stays nil and context
// errors pass through.
func wrap(op string, err error) error { return sqlcore.Wrap("sqlite", op, err, classify) }

func classify(err error) (string, error) {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return "", nil
	}
	switch se.Code() & 0xff {
	case codeReadOnly:
		return "the database file or its folder is not writable by this process; check permissions, or open a writable copy", store.ErrReadOnly
	case codeCantOpen, codeIOErr:
		return "check that the file's folder exists and is readable and writable", store.ErrUnavailable
	case codeBusy:
		return "another process held the write lock for more than the 5 s busy timeout", store.ErrUnavailable
	case codeFull:
		return "the disk is full", nil
	}
	return "", nil
}

// Saving the vector graph. Building an HNSW graph costs a search per vector (minutes at 100,000
// vectors); reading a saved one costs a scan of the vectors and no distance at all. The saved
// graph records the change-log position it is at: a process that loads it replays the logged
// changes after that position, like any process catching up. A graph older than the change
// log (pruned by Sweep) or of another dimension is ignored and rebuilt.
const (
	// graphSaveMin is the fewest vectors worth saving a graph for; below it building is quick.
	graphSaveMin = 2000
	// graphResave is how many changes past the saved graph make Close save it again.
	graphResave = 1000
)

// loadSaved loads the saved graph when it can catch up from the change log; it reports whether
// it did. The caller holds vmu.
func (s *Store) loadSaved(ctx context.Context, minSeq, maxSeq sql.NullInt64) (bool, error) {
	if s.vopts.Flat {
		return false, nil
	}
	var seq int64
	var dims int
	var graph []byte
	err := s.db.QueryRowContext(ctx, "SELECT seq, dims, graph FROM store_vector_graph WHERE id = 1").Scan(&seq, &dims, &graph)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, wrap("load vectors", err)
	}
	// Every change after seq must still be in the log.
	if dims != s.cfg.Index.Dims || seq > maxSeq.Int64 || (minSeq.Valid && minSeq.Int64 > seq+1 && seq != maxSeq.Int64) {
		s.cfg.Logger.Info("store: saved vector graph is stale; rebuilding", "backend", "sqlite", "graph_seq", seq, "log_from", minSeq.Int64)
		return false, nil
	}
	vecs := map[string][]float32{}
	rows, err := s.db.QueryContext(ctx, "SELECT prefix, key, vec FROM store_items WHERE vec IS NOT NULL")
	if err != nil {
		return false, wrap("load vectors", err)
	}
	defer rows.Close()
	for rows.Next() {
		var prefix, key string
		var blob []byte
		if err := rows.Scan(&prefix, &key, &blob); err != nil {
			return false, wrap("load vectors", err)
		}
		vecs[itemID(prefix, key)] = sqlcore.DecodeVec(blob)
	}
	if err := rows.Err(); err != nil {
		return false, wrap("load vectors", err)
	}
	ix, err := vector.LoadGraph(bytes.NewReader(graph), func(id string) ([]float32, bool) {
		v, ok := vecs[id]
		return v, ok
	})
	if err != nil {
		s.cfg.Logger.Warn("store: saved vector graph unreadable; rebuilding", "backend", "sqlite", "err", err)
		return false, nil
	}
	ix.SetEfSearch(s.vopts.EfSearch)
	s.vec, s.lastSeq, s.savedSeq = ix, seq, seq
	s.cfg.Logger.Info("store: vector graph loaded", "backend", "sqlite", "graph_seq", seq, "vectors", ix.Len())
	return true, nil
}

// saveGraph writes the graph as of lastSeq, when it is big enough to be worth it. Failing to
// save (a read-only file, a busy writer) only costs the next opener a rebuild, so it is logged
// and not returned. The caller holds vmu.
func (s *Store) saveGraph(ctx context.Context) {
	if s.vopts.Flat || s.vec == nil || s.vec.Len() < graphSaveMin || s.lastSeq < 0 {
		return
	}
	var buf bytes.Buffer
	if err := s.vec.SaveGraph(&buf); err != nil {
		s.cfg.Logger.Warn("store: vector graph not saved", "backend", "sqlite", "err", err)
		return
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO store_vector_graph (id, seq, dims, graph) VALUES (1, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, dims = excluded.dims, graph = excluded.graph
		WHERE excluded.seq >= store_vector_graph.seq`, s.lastSeq, s.cfg.Index.Dims, buf.Bytes())
	if err != nil {
		s.cfg.Logger.Warn("store: vector graph not saved", "backend", "sqlite", "err", wrap("save vector graph", err))
		return
	}
	s.savedSeq = s.lastSeq
}
