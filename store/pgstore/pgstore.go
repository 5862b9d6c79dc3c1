package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trellis-go/trellis/internal/owned"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/internal/backend"
	"github.com/trellis-go/trellis/store/internal/sqlcore"
	"github.com/trellis-go/trellis/store/vector"
)

// VectorMode chooses how semantic search runs on Postgres.
type VectorMode string

// The vector modes.
const (
	// VectorAuto uses pgvector when the extension can be created, and an exact scan otherwise.
	VectorAuto VectorMode = ""
	// VectorPGVector requires pgvector and fails to open without it.
	VectorPGVector VectorMode = "pgvector"
	// VectorExact scans every candidate vector in the store process.
	VectorExact VectorMode = "exact"
)

// Options configure a Store. The zero Options are a store without vectors or TTL.
type Options struct {
	store.Config
	// Vector chooses pgvector or an exact scan; the zero value picks pgvector when installed.
	Vector VectorMode
	// EfSearch is pgvector's hnsw.ef_search for a search asking for k rows: the breadth of
	// the HNSW walk, so recall against speed. Zero means the default, the larger of 10*k and
	// DefaultEfSearch; it is raised to k and capped at 1000 (pgvector's maximum). Negative
	// means pgvector's default, 40, raised to k.
	EfSearch int
}

// DefaultEfSearch is the least hnsw.ef_search a pgvector search runs with when
// [Options].EfSearch is zero. On the 100,000-chunk benchmark corpus (hashed n-gram vectors,
// the hard case for a graph walk; see docs/benchmarks.md) recall@10 was 0.47 at pgvector's
// default of 40, 0.66 at 200, 0.70 at 400 and 0.73 at 1000, where a query took 48 ms.
const DefaultEfSearch = 200

// Store is the Postgres backend. It is safe for concurrent use by any number of processes.
type Store struct {
	core     *sqlcore.Core // the database, dialect, configuration and closed flag
	db       *pgxpool.Pool
	ownDB    bool
	cfg      store.Config
	pgvector bool
	// vecType and cosineOp name pgvector's type and cosine distance operator with the
	// extension's schema; iterative says whether its HNSW scans can go on past ef_search
	// (pgvector 0.8 and later).
	vecType   string
	cosineOp  string
	iterative bool
	efSearch  int
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Sweeper = (*Store)(nil)
	_ store.Batcher = (*Store)(nil)
)

// Open connects to Postgres (a URL or key=value connection string), migrates and returns the
// store. Close the store to close the pool.
func Open(ctx context.Context, connString string, opts *Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, &store.ConfigError{Field: "connection string", Problem: err.Error(), Hint: "write it as postgres://user@host:5432/db"}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, wrap("connect", err)
	}
	s, err := New(ctx, pool, opts)
	return owned.Open(s, err, pool.Close, func(s *Store) { s.ownDB = true })
}

// New returns a store on an open pool, after migrating. Close does not close the pool.
func New(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*Store, error) {
	o, cfg, err := backend.Configure(opts, func(o Options) store.Config { return o.Config })
	if err != nil {
		return nil, err
	}
	switch o.Vector {
	case VectorAuto, VectorPGVector, VectorExact:
	default:
		return nil, &store.ConfigError{Field: "Vector", Problem: fmt.Sprintf("is %q", o.Vector), Hint: `use "", "pgvector" or "exact"`}
	}
	if err := Migrate(ctx, pool); err != nil {
		return nil, err
	}
	s := &Store{db: pool, cfg: cfg, efSearch: o.EfSearch, core: sqlcore.NewCore(pgDB{pool}, dialect, cfg, "postgres", classify)}
	if cfg.Index != nil {
		if err := s.checkDims(ctx); err != nil {
			return nil, err
		}
		if err := s.setupVectors(ctx, o.Vector); err != nil {
			return nil, err
		}
	}
	s.core.StartSweeper(s)
	return s, nil
}

func (s *Store) checkDims(ctx context.Context) error { return s.core.CheckDims(ctx, "a new schema") }

// setupVectors decides between pgvector and the exact scan, and says which in the log.
//
// An extension lives in one schema per database, whichever store created it first; the store
// creates it in public (when there is one, so that dropping a store's schema never drops the
// extension under other stores) and names its type, operator class and operator with that
// schema, so the store's search_path need not include it.
func (s *Store) setupVectors(ctx context.Context, mode VectorMode) error {
	log := s.cfg.Logger
	if mode == VectorExact {
		log.Info("store: vector search ready", "backend", "postgres", "index", "exact", "reason", "Options.Vector is exact")
		return nil
	}
	var available bool
	if err := s.db.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')").Scan(&available); err != nil {
		return wrap("open", err)
	}
	if !available {
		if mode == VectorPGVector {
			return &store.ConfigError{Field: "Vector", Problem: "is pgvector but the extension is not installed on the server",
				Hint: "install it on the server (postgresql-NN-pgvector, or build it: see .ci/pgvector.sh) or use the default mode"}
		}
		log.Info("store: vector search ready", "backend", "postgres", "index", "exact", "reason", "pgvector is not installed on the server")
		return nil
	}
	var schema, version string
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLock)); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `SELECT n.nspname, e.extversion FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
			WHERE e.extname = 'vector'`).Scan(&schema, &version)
		if errors.Is(err, pgx.ErrNoRows) {
			create := "CREATE EXTENSION vector"
			var public bool
			if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'public')").Scan(&public); err != nil {
				return err
			}
			if public {
				create += " SCHEMA public"
			}
			if _, err := tx.Exec(ctx, create); err != nil {
				return err
			}
			err = tx.QueryRow(ctx, `SELECT n.nspname, e.extversion FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
				WHERE e.extname = 'vector'`).Scan(&schema, &version)
		}
		if err != nil {
			return err
		}
		q := pgx.Identifier{schema}.Sanitize()
		_, err = tx.Exec(ctx, fmt.Sprintf(`CREATE TABLE IF NOT EXISTS store_vectors (
			prefix text COLLATE "C" NOT NULL, key text COLLATE "C" NOT NULL, embedding %s.vector(%d) NOT NULL,
			PRIMARY KEY (prefix, key),
			FOREIGN KEY (prefix, key) REFERENCES store_items (prefix, key) ON DELETE CASCADE);
		CREATE INDEX IF NOT EXISTS store_vectors_hnsw ON store_vectors USING hnsw (embedding %s.vector_cosine_ops)`, q, s.cfg.Index.Dims, q))
		return err
	})
	if err == nil {
		s.vecType = pgx.Identifier{schema}.Sanitize() + ".vector"
		s.cosineOp = "OPERATOR(" + pgx.Identifier{schema}.Sanitize() + ".<=>)"
		s.iterative = versionAtLeast(version, 0, 8)
		err = s.backfill(ctx)
	}
	if err != nil {
		if mode == VectorPGVector {
			return wrap("set up pgvector", err)
		}
		log.Warn("store: vector search ready", "backend", "postgres", "index", "exact", "reason", "pgvector is installed but could not be enabled", "err", err)
		return nil
	}
	s.pgvector = true
	log.Info("store: vector search ready", "backend", "postgres", "index", "pgvector", "version", version, "schema", schema,
		"method", "hnsw (vector_cosine_ops)", "iterative_scan", s.iterative)
	return nil
}

// versionAtLeast reports whether a version like "0.8.0" is at least major.minor.
func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	a, err1 := strconv.Atoi(parts[0])
	b, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return a > major || (a == major && b >= minor)
}

// backfill copies into pgvector the vectors of items written while it was not in use, a few
// hundred rows per statement.
func (s *Store) backfill(ctx context.Context) error {
	rows, err := s.db.Query(ctx, `SELECT i.prefix, i.key, i.vec FROM store_items i
		WHERE i.vec IS NOT NULL AND NOT EXISTS (SELECT 1 FROM store_vectors v WHERE v.prefix = i.prefix AND v.key = i.key)`)
	if err != nil {
		return err
	}
	var prefixes, keys, vecs []string
	for rows.Next() {
		var prefix, key string
		var b []byte
		if err := rows.Scan(&prefix, &key, &b); err != nil {
			rows.Close()
			return err
		}
		if len(b) != 4*s.cfg.Index.Dims {
			continue // written by an embedder of another dimension: checkDims forbids it now
		}
		prefixes, keys, vecs = append(prefixes, prefix), append(keys, key), append(vecs, vectorText(sqlcore.DecodeVec(b)))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for i := 0; i < len(keys); i += 500 {
		j := min(len(keys), i+500)
		if _, err := s.db.Exec(ctx, `INSERT INTO store_vectors (prefix, key, embedding)
			SELECT p, k, e::`+s.vecType+` FROM unnest($1::text[], $2::text[], $3::text[]) AS t(p, k, e)
			ON CONFLICT (prefix, key) DO NOTHING`, prefixes[i:j], keys[i:j], vecs[i:j]); err != nil {
			return err
		}
	}
	if len(keys) > 0 {
		s.cfg.Logger.Info("store: copied vectors into pgvector", "backend", "postgres", "vectors", len(keys))
	}
	return nil
}

// Close stops the sweeper and, when Open made it, closes the pool.
func (s *Store) Close() error {
	if s.core.Close() {
		return nil
	}
	if s.ownDB {
		s.db.Close()
	}
	return nil
}

// UsesPGVector reports whether semantic search runs on pgvector.
func (s *Store) UsesPGVector() bool { return s.pgvector }

// vectorText writes v in pgvector's text form.
func vectorText(v []float32) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 32))
	}
	b.WriteByte(']')
	return b.String()
}

// Put implements store.Store.
func (s *Store) Put(ctx context.Context, req store.PutRequest) error {
	p, err := s.core.PreparePut(ctx, req)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error { return s.putTx(ctx, tx, p, s.cfg.Now()) })
	return wrap("put", err)
}

func (s *Store) putTx(ctx context.Context, tx pgx.Tx, p *sqlcore.Put, now time.Time) error {
	q, args := dialect.Upsert(p, now)
	_, err := tx.Exec(ctx, q, args...)
	if err != nil || !s.pgvector {
		return err
	}
	if p.Vec == nil {
		_, err = tx.Exec(ctx, "DELETE FROM store_vectors WHERE prefix = $1 AND key = $2", p.Prefix, p.Key)
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO store_vectors (prefix, key, embedding) VALUES ($1, $2, $3::text::`+s.vecType+`)
		ON CONFLICT (prefix, key) DO UPDATE SET embedding = excluded.embedding`, p.Prefix, p.Key, vectorText(p.Vec))
	return err
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
			return pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
				for i, w := range writes {
					var err error
					if puts[i] != nil {
						err = s.putTx(ctx, tx, puts[i], now)
					} else {
						d := w.(store.DeleteRequest)
						_, err = tx.Exec(ctx, "DELETE FROM store_items WHERE prefix = $1 AND key = $2", store.JoinNamespace(d.Namespace), d.Key)
					}
					if err != nil {
						return fmt.Errorf("store: batch write %d of %d (%s %v/%s), none applied: %w", i+1, len(writes), sqlcore.OpName(w), sqlcore.OpNamespace(w), sqlcore.OpKey(w), wrap("batch", err))
					}
				}
				return nil
			})
		})
}

const itemCols = "i.prefix, i.key, i.value, i.created_at, i.updated_at, i.expires_at, i.ttl_ns, i.fts_text"

// row is an item read back (sqlcore.Row).
type row = sqlcore.Row

// scanRow reads itemCols, then the vector when withVec, then extra.
func scanRow(sc pgx.Row, withVec bool, extra ...any) (*row, error) {
	var prefix, key string
	var value []byte
	var expires *time.Time
	var fts *string
	var vec []byte
	r := &row{}
	dest := []any{&prefix, &key, &value, &r.Item.CreatedAt, &r.Item.UpdatedAt, &expires, &r.TTL, &fts}
	if withVec {
		dest = append(dest, &vec)
	}
	dest = append(dest, extra...)
	if err := sc.Scan(dest...); err != nil {
		return nil, err
	}
	r.Item.CreatedAt, r.Item.UpdatedAt = r.Item.CreatedAt.UTC(), r.Item.UpdatedAt.UTC()
	if expires != nil {
		r.Item.ExpiresAt = expires.UTC()
	}
	if vec != nil {
		r.Vec = sqlcore.DecodeVec(vec)
	}
	return r, r.Fill("postgres", prefix, key, value, fts)
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, req store.GetRequest) (*store.Item, error) {
	if err := s.core.Check("get", req.Namespace, req.Key); err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	var r *row
	var err error
	if s.cfg.Refresh(req.RefreshTTL) {
		// Refresh and read in one statement.
		r, err = scanRow(s.db.QueryRow(ctx, `UPDATE store_items i SET expires_at = CASE WHEN ttl_ns IS NULL THEN NULL
			ELSE $3::timestamptz + make_interval(secs => ttl_ns / 1e9) END
			WHERE prefix = $1 AND key = $2 AND (expires_at IS NULL OR expires_at > $3) RETURNING `+itemCols,
			store.JoinNamespace(req.Namespace), req.Key, now), false)
		if err != nil && isReadOnly(err) {
			s.cfg.Logger.Warn("store: TTL refresh failed", "backend", "postgres", "key", req.Key, "err", err)
			r, err = nil, nil
		}
	}
	if r == nil && err == nil {
		r, err = scanRow(s.db.QueryRow(ctx, "SELECT "+itemCols+" FROM store_items i WHERE prefix = $1 AND key = $2 AND (expires_at IS NULL OR expires_at > $3)",
			store.JoinNamespace(req.Namespace), req.Key, now), false)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, wrap("get", err)
	}
	return &r.Item, nil
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, req store.DeleteRequest) error {
	if err := s.core.Check("delete", req.Namespace, req.Key); err != nil {
		return err
	}
	_, err := s.db.Exec(ctx, "DELETE FROM store_items WHERE prefix = $1 AND key = $2", store.JoinNamespace(req.Namespace), req.Key)
	return wrap("delete", err)
}

// dialect is how the conditions every listing applies are written for Postgres.
var dialect = sqlcore.Dialect{
	Param: func(n int) string { return "$" + strconv.Itoa(n) },
	Time:  func(t time.Time) any { return t },
	JSONEq: func(c *sqlcore.Conds, path []string, v any) (string, bool) {
		b, _ := json.Marshal(v)
		return fmt.Sprintf("i.value #> %s = %s::jsonb", c.Arg(path), c.Arg(string(b))), true
	},
}

func tsQuery(terms []string) string { return sqlcore.QuoteTerms(terms, "'", " | ") }

// Search implements store.Store.
func (s *Store) Search(ctx context.Context, req store.SearchRequest) ([]store.SearchItem, error) {
	return s.core.Search(ctx, sqlcore.Searcher{Browse: s.browse, Text: s.text, Hybrid: s.hybrid, Refresh: s.refresh}, req)
}

// text finds the items matching any of terms, best by ts_rank first.
func (s *Store) text(ctx context.Context, req store.SearchRequest, filter *store.Filter, now time.Time, terms []string) ([]*row, error) {
	return s.fullText(ctx, req, filter, now, terms, sqlcore.TextCandidates(req.Offset, req.Limit), false)
}

// refresh restarts the TTLs of rows, and sets their items' new expiry.
func (s *Store) refresh(ctx context.Context, now time.Time, rows []*row) {
	for _, r := range rows {
		if r.TTL == nil {
			continue
		}
		var exp time.Time
		err := s.db.QueryRow(ctx, `UPDATE store_items SET expires_at = $3::timestamptz + make_interval(secs => ttl_ns / 1e9)
			WHERE prefix = $1 AND key = $2 AND ttl_ns IS NOT NULL RETURNING expires_at`,
			store.JoinNamespace(r.Item.Namespace), r.Item.Key, now).Scan(&exp)
		if err != nil {
			s.cfg.Logger.Warn("store: TTL refresh failed", "backend", "postgres", "key", r.Item.Key, "err", wrap("refresh", err))
			continue
		}
		r.Item.ExpiresAt = exp.UTC()
	}
}

func (s *Store) browse(ctx context.Context, req store.SearchRequest, filter *store.Filter, now time.Time) ([]*row, error) {
	c := sqlcore.NewConds(dialect.Param)
	dialect.WhereOn(c, req.NamespacePrefix, filter, now)
	return s.core.Find(ctx, "SELECT "+itemCols+" FROM store_items i WHERE "+c.String()+" ORDER BY i.updated_at DESC, i.prefix, i.key", c.Args, func(rows sqlcore.Rows) (*row, error) { return scanRow(rows, false) }, filter, req.Offset+req.Limit)
}

// fullText returns up to n live items matching any term, best by ts_rank first; withVec (the
// hybrid search) asks instead for items with every term, unranked, which is much cheaper.
func (s *Store) fullText(ctx context.Context, req store.SearchRequest, filter *store.Filter, now time.Time, terms []string, n int, withVec bool) ([]*row, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	c := sqlcore.NewConds(dialect.Param)
	tq := tsQuery(terms)
	if withVec {
		tq = strings.ReplaceAll(tq, " | ", " & ")
	}
	q := c.Arg(tq)
	c.Add("i.tsv @@ to_tsquery('simple', " + q + ")")
	dialect.WhereOn(c, req.NamespacePrefix, filter, now)
	cols := itemCols
	if withVec {
		cols += ", i.vec"
	}
	order := " ORDER BY ts_rank(i.tsv, to_tsquery('simple', " + q + ")) DESC"
	if withVec {
		order = ""
	}
	return s.core.Find(ctx, "SELECT "+cols+" FROM store_items i WHERE "+c.String()+order+" LIMIT "+c.Arg(n), c.Args, func(rows sqlcore.Rows) (*row, error) { return scanRow(rows, withVec) }, filter, 0)
}

func (s *Store) hybrid(ctx context.Context, req store.SearchRequest, filter *store.Filter, now time.Time) ([]*row, []float64, error) {
	q, err := s.cfg.Index.EmbedText(ctx, req.Query)
	if err != nil {
		return nil, nil, err
	}
	qn, err := vector.Normalize(q)
	if err != nil {
		return nil, nil, err
	}
	terms := backend.QueryTerms(req.Query)
	var found []*row
	var cos []float64
	if s.pgvector {
		found, cos, err = s.nearestPGVector(ctx, req, filter, now, q)
	} else {
		found, cos, err = s.nearestExact(ctx, req, filter, now, qn)
	}
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for _, r := range found {
		seen[sqlcore.ID(store.JoinNamespace(r.Item.Namespace), r.Item.Key)] = true
	}
	text, err := s.fullText(ctx, req, filter, now, terms, 2*(req.Offset+req.Limit)+20, true)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range text {
		if seen[sqlcore.ID(store.JoinNamespace(r.Item.Namespace), r.Item.Key)] || r.Vec == nil {
			continue
		}
		found = append(found, r)
		cos = append(cos, float64(vector.Cosine(qn, r.Vec)))
	}
	scores := make([]float64, len(found))
	for i, r := range found {
		scores[i] = s.cfg.Index.HybridScore(cos[i], backend.TextScore(terms, r.Tokens))
	}
	return found, scores, nil
}

// nearestExact scans every live vector under the prefix that passes the filter.
func (s *Store) nearestExact(ctx context.Context, req store.SearchRequest, filter *store.Filter, now time.Time, qn []float32) ([]*row, []float64, error) {
	c := sqlcore.NewConds(dialect.Param)
	c.Add("i.vec IS NOT NULL")
	dialect.WhereOn(c, req.NamespacePrefix, filter, now)
	rows, err := s.db.Query(ctx, "SELECT "+itemCols+", i.vec FROM store_items i WHERE "+c.String(), c.Args...)
	if err != nil {
		return nil, nil, wrap("search", err)
	}
	defer rows.Close()
	k := req.Offset + req.Limit
	type scored struct {
		r   *row
		cos float64
	}
	var top []scored
	for rows.Next() {
		r, err := scanRow(rows, true)
		if err != nil {
			return nil, nil, wrap("search", err)
		}
		if !filter.Match(r.Item.Value) || len(r.Vec) != len(qn) {
			continue
		}
		top = append(top, scored{r, float64(vector.Cosine(qn, r.Vec))})
	}
	if err := rows.Err(); err != nil {
		return nil, nil, wrap("search", err)
	}
	// Keep the k best; ties are settled later by RankAndPage.
	sort.SliceStable(top, func(i, j int) bool { return top[i].cos > top[j].cos })
	if len(top) > k {
		top = top[:k]
	}
	out, cos := make([]*row, len(top)), make([]float64, len(top))
	for i, t := range top {
		out[i], cos[i] = t.r, t.cos
	}
	return out, cos, nil
}

// nearestPGVector asks pgvector's HNSW index for neighbours, widening until the filter leaves
// a full page. When the index runs out before the page is full (a prefix or filter that few
// items pass: the walk gives up after hnsw.max_scan_tuples, or, before pgvector 0.8, after
// ef_search rows), one exact pass without the index settles it.
func (s *Store) nearestPGVector(ctx context.Context, req store.SearchRequest, filter *store.Filter, now time.Time, q []float32) ([]*row, []float64, error) {
	want := req.Offset + req.Limit
	qt := vectorText(q)
	for k := max(2*want, want+10); ; k *= 4 {
		out, cos, n, err := s.pgvectorScan(ctx, req, filter, now, qt, k, false)
		if err != nil {
			return nil, nil, err
		}
		if len(out) >= want {
			return out, cos, nil
		}
		if n < k {
			out, cos, _, err = s.pgvectorScan(ctx, req, filter, now, qt, k, true)
			return out, cos, err
		}
	}
}

// pgvectorScan reads the k nearest live rows under the prefix that pass the pushed-down
// filter, and returns those that pass the whole filter with their cosine similarity, and how
// many rows the query gave.
//
// An HNSW scan yields at most hnsw.ef_search rows (40 by default), which a prefix or a filter
// applied after it could leave short of a page. So ef_search is raised to k (and by default
// well past it, for recall: see [Options].EfSearch), and from pgvector
// 0.8 the scan is iterative in strict order: it goes on walking the graph until k rows pass
// the conditions (or hnsw.max_scan_tuples are visited).
//
// exact turns index scans off, so the planner sorts the rows under the prefix (found by a
// bitmap scan of the primary key) instead of walking the graph.
func (s *Store) pgvectorScan(ctx context.Context, req store.SearchRequest, filter *store.Filter, now time.Time, qt string, k int, exact bool) ([]*row, []float64, int, error) {
	var out []*row
	var cos []float64
	n := 0
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		set := fmt.Sprintf("SET LOCAL hnsw.ef_search = %d", s.efFor(k))
		if s.iterative {
			set += "; SET LOCAL hnsw.iterative_scan = strict_order"
		}
		if exact {
			set += "; SET LOCAL enable_indexscan = off"
		}
		if _, err := tx.Exec(ctx, set); err != nil {
			return err
		}
		c := sqlcore.NewConds(dialect.Param)
		qa := c.Arg(qt) + "::text::" + s.vecType
		dialect.WhereOn(c, req.NamespacePrefix, filter, now)
		rows, err := tx.Query(ctx, "SELECT "+itemCols+", 1 - (v.embedding "+s.cosineOp+" "+qa+") FROM store_vectors v JOIN store_items i USING (prefix, key) WHERE "+
			c.String()+" ORDER BY v.embedding "+s.cosineOp+" "+qa+" LIMIT "+c.Arg(k), c.Args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			n++
			var sim float64
			r, err := scanRow(rows, false, &sim)
			if err != nil {
				return err
			}
			if filter.Match(r.Item.Value) {
				out = append(out, r)
				cos = append(cos, sim)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, nil, 0, wrap("search", err)
	}
	return out, cos, n, nil
}

// efFor is the hnsw.ef_search of a scan asking for k rows (see [Options].EfSearch).
func (s *Store) efFor(k int) int {
	ef := s.efSearch
	switch {
	case ef == 0:
		ef = max(10*k, DefaultEfSearch)
	case ef < 0:
		ef = 40
	}
	return min(1000, max(ef, k))
}

// ListNamespaces implements store.Store.
func (s *Store) ListNamespaces(ctx context.Context, req store.ListNamespacesRequest) ([][]string, error) {
	return s.core.ListNamespaces(ctx, req)
}

// Sweep implements store.Sweeper.
func (s *Store) Sweep(ctx context.Context) (int, error) {
	if s.core.Closed() {
		return 0, store.ErrClosed
	}
	tag, err := s.db.Exec(ctx, "DELETE FROM store_items WHERE expires_at IS NOT NULL AND expires_at <= $1", s.cfg.Now())
	if err != nil {
		return 0, wrap("sweep", err)
	}
	return int(tag.RowsAffected()), nil
}

func isReadOnly(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "25006"
}

// pgDB is a pool as the shared code's sqlcore.DB.
type pgDB struct{ pool *pgxpool.Pool }

func (d pgDB) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := d.pool.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}

func (d pgDB) QueryRow(ctx context.Context, q string, args ...any) interface{ Scan(dest ...any) error } {
	return d.pool.QueryRow(ctx, q, args...)
}

func (d pgDB) Query(ctx context.Context, q string, args ...any) (sqlcore.Rows, func(), error) {
	rows, err := d.pool.Query(ctx, q, args...) // never nil rows: on failure they hold the error
	return rows, rows.Close, err
}

// wrap turns a driver error into a store.BackendError with a hint.
func wrap(op string, err error) error { return sqlcore.Wrap("postgres", op, err, classify) }

func classify(err error) (string, error) {
	var pe *pgconn.PgError
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case isReadOnly(err):
		return "the server or this session is read-only (a standby, or default_transaction_read_only); point the store at the primary", store.ErrReadOnly
	case errors.As(err, &pe):
		switch {
		case pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || strings.HasPrefix(pe.Code, "08"):
			return "the server is shutting down or restarting; retry when it is back", store.ErrUnavailable
		case pe.Code == "42501":
			return "the database user lacks a privilege the store needs", nil
		}
	case errors.As(err, &ce), errors.As(err, &ne), pgconn.SafeToRetry(err), strings.Contains(err.Error(), "closed pool"):
		return "cannot reach Postgres; check that it is running and that the connection string's host and port are right", store.ErrUnavailable
	}
	return "", nil
}
