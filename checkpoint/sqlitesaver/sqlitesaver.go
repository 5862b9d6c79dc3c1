package sqlitesaver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the pure-Go driver, registered as "sqlite"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/checkpoint/internal/sqlcore"
	"github.com/trellis-go/trellis/internal/owned"
)

// Options configures a saver. The zero value (or a nil *Options) means the documented defaults.
type Options struct {
	// BusyTimeout is how long a connection opened by [Open] waits for another connection's write
	// lock before failing with [ErrBusy]. Zero means 5 seconds.
	BusyTimeout time.Duration
	// Synchronous is SQLite's synchronous setting for connections opened by [Open]: "FULL" (the
	// default when empty: a put that returned survives a power cut), "NORMAL" (a put that
	// returned survives a crash of the process but maybe not of the machine; faster), or "OFF".
	Synchronous string
	// ListPageSize is how many checkpoints List reads per query. Zero means 256.
	ListPageSize int
}

func (o *Options) withDefaults() (Options, error) {
	out, err := sqlcore.Defaults(o, func(o *Options) *int { return &o.ListPageSize })
	if err != nil {
		return out, err
	}
	if out.BusyTimeout < 0 {
		return out, fmt.Errorf("Options.BusyTimeout is %v; use zero for the default of 5s or a positive duration", out.BusyTimeout)
	}
	if out.BusyTimeout == 0 {
		out.BusyTimeout = 5 * time.Second
	}
	switch strings.ToUpper(out.Synchronous) {
	case "":
		out.Synchronous = "FULL"
	case "FULL", "NORMAL", "OFF", "EXTRA":
		out.Synchronous = strings.ToUpper(out.Synchronous)
	default:
		return out, fmt.Errorf("Options.Synchronous is %q; use FULL, NORMAL, OFF, EXTRA or empty for FULL", out.Synchronous)
	}
	return out, nil
}

// Saver is a [checkpoint.Saver] on a SQLite database. It is safe for concurrent use, also by
// several processes sharing one database file.
type Saver struct {
	db    *sql.DB
	opts  Options
	own   bool // Close closes db
	stmts map[string]*sql.Stmt
}

// Statements prepared once per connection (database/sql keeps them per connection): parsing
// the SQL is most of the cost of a small query in SQLite.
var statements = map[string]string{
	"casMove":   "UPDATE trellis_checkpoint_spaces SET head = ?1 WHERE thread_id = ?2 AND ns = ?3 AND head = ?4 RETURNING id",
	"casCreate": "INSERT INTO trellis_checkpoint_spaces (thread_id, ns, head) SELECT ?2, ?3, ?1 WHERE ?4 = '' ON CONFLICT (thread_id, ns) DO NOTHING RETURNING id",
	"head":      "SELECT head FROM trellis_checkpoint_spaces WHERE thread_id = ? AND ns = ?",
	"insertCheckpoint": `INSERT INTO trellis_checkpoints (space, id, parent_id, step, source, created_at, state, metadata)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
	"upsertBlob": `INSERT INTO trellis_checkpoint_blobs (space, channel, version, base, data) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (space, channel, version) DO UPDATE SET base = excluded.base, data = excluded.data`,
	"deleteTaskWrites": `DELETE FROM trellis_checkpoint_writes
WHERE space = (SELECT id FROM trellis_checkpoint_spaces WHERE thread_id = ?1 AND ns = ?2) AND checkpoint_id = ?3 AND task_id = ?4`,
	"checkpointSpace": `SELECT s.id FROM trellis_checkpoint_spaces s JOIN trellis_checkpoints c ON c.space = s.id
WHERE s.thread_id = ? AND s.ns = ? AND c.id = ?`,
	"insertWrite": "INSERT INTO trellis_checkpoint_writes (space, checkpoint_id, task_id, channel, value) VALUES (?, ?, ?, ?, ?)",
	"getNewest": `SELECT c.space, c.id, c.parent_id, c.step, c.source, c.created_at, c.state, c.metadata
FROM trellis_checkpoint_spaces s JOIN trellis_checkpoints c ON c.space = s.id
WHERE s.thread_id = ? AND s.ns = ? ORDER BY c.id DESC LIMIT 1`,
	"getByID": `SELECT c.space, c.id, c.parent_id, c.step, c.source, c.created_at, c.state, c.metadata
FROM trellis_checkpoint_spaces s JOIN trellis_checkpoints c ON c.space = s.id
WHERE s.thread_id = ? AND s.ns = ? AND c.id = ?`,
	"chain":   chainQuery,
	"pending": "SELECT task_id, channel, value FROM trellis_checkpoint_writes WHERE space = ? AND checkpoint_id = ? ORDER BY seq",
}

// stmt returns the prepared statement name bound to tx.
func (s *Saver) stmt(ctx context.Context, tx *sql.Tx, name string) *sql.Stmt {
	return tx.StmtContext(ctx, s.stmts[name])
}

var _ checkpoint.Saver = (*Saver)(nil)

// Open opens (creating it if needed) the SQLite database file at path in WAL mode with a busy
// timeout, migrates it, and returns a saver that owns it: [Saver.Close] closes it.
func Open(ctx context.Context, path string, opts *Options) (*Saver, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fail("open", "", err, "")
	}
	switch {
	case path == "":
		return nil, fail("open", "", errors.New("no database path"), "pass a file path such as trellis.db")
	case strings.Contains(path, "?"), strings.HasPrefix(path, "file:"):
		return nil, fail("open", "", fmt.Errorf("path %q is a URI or has a query", path), "pass a plain file path; to tune the connection, open the *sql.DB yourself and call New")
	case path == ":memory:" || strings.HasPrefix(path, ":memory:"):
		return nil, fail("open", "", errors.New("an in-memory SQLite database is private to each connection"), "use checkpoint.NewMemorySaver, or a file in a temporary directory")
	}
	dsn := fmt.Sprintf("%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(%s)",
		path, o.BusyTimeout.Milliseconds(), o.Synchronous)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, wrap(ctx, "open", "", err)
	}
	s, err := New(ctx, db, &o)
	return owned.Open(s, err, func() { db.Close() }, func(s *Saver) { s.own = true })
}

// New returns a saver on db, a database opened with the "sqlite" driver of modernc.org/sqlite,
// after running [Migrate]. Open db with a busy timeout (Open's DSN shows how); without one,
// concurrent writers fail with [ErrBusy] instead of waiting. The caller keeps ownership of db.
func New(ctx context.Context, db *sql.DB, opts *Options) (*Saver, error) {
	o, err := sqlcore.Prepare("sqlitesaver", opts.withDefaults, db == nil, "db", "pass an open *sql.DB or use Open",
		func() error { return Migrate(ctx, db) })
	if err != nil {
		return nil, err
	}
	saver := &Saver{db: db, opts: o, stmts: map[string]*sql.Stmt{}}
	for name, q := range statements {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			saver.closeStmts()
			return nil, wrap(ctx, "open", "", fmt.Errorf("preparing %s: %w", name, err))
		}
		saver.stmts[name] = st
	}
	return saver, nil
}

func (s *Saver) closeStmts() {
	for _, st := range s.stmts {
		st.Close()
	}
}

// DB returns the database the saver uses.
func (s *Saver) DB() *sql.DB { return s.db }

// Close closes the database if [Open] opened it; a saver made by [New] leaves it open.
func (s *Saver) Close() error {
	s.closeStmts()
	if s.own {
		return s.db.Close()
	}
	return nil
}

// inTx runs fn inside BEGIN IMMEDIATE ... COMMIT on conn, for migrations: IMMEDIATE takes the
// write lock up front (waiting up to the busy timeout), so two processes migrating at once run
// one after the other.
func inTx(ctx context.Context, conn *sql.Conn, fn func() error) (err error) {
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	defer func() {
		if err == nil {
			if _, err = conn.ExecContext(ctx, "COMMIT"); err == nil {
				return
			}
		}
		// Roll back even when ctx is done; if that fails too, the connection is in an unknown
		// state and must not go back to the pool.
		if _, rbErr := conn.ExecContext(context.Background(), "ROLLBACK"); rbErr != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	return fn()
}

// write runs fn in a transaction and commits it if fn returns nil. fn's first statement must
// write: SQLite then takes the write lock at once, waiting up to the busy timeout for another
// writer, and holds it to the commit, so what fn reads afterwards cannot change before it writes.
// That is what makes the head compare-and-swap atomic across connections and processes. (A
// transaction that reads first and writes later could instead fail with SQLITE_BUSY at once.)
func (s *Saver) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Put implements [checkpoint.Saver].
func (s *Saver) Put(ctx context.Context, req checkpoint.PutRequest) error {
	return s.PutAll(ctx, []checkpoint.PutRequest{req})
}

// PutAll writes the puts reqs in order in one transaction: all of them, or none when one fails
// (its error says which thread's put failed, as Put's does). Each is checked and stored as Put
// stores it, with one commit for all: SQLite writes a transaction's pages to its write-ahead log
// once, so a run's successive checkpoints written together cost about one put. A put whose Head
// is the checkpoint the put before it writes, in the same thread namespace, moves that
// namespace's head along with it: the head is compared and swapped once for such a chain, from
// the first put's Head to the last put's checkpoint.
func (s *Saver) PutAll(ctx context.Context, reqs []checkpoint.PutRequest) error {
	if len(reqs) == 0 {
		return nil
	}
	rows := make([]sqlcore.Row, len(reqs))
	for i, req := range reqs {
		r, err := sqlcore.EncodePut(req)
		if err != nil {
			return fail("put", req.ThreadID, err, "")
		}
		rows[i] = r
	}
	failed := ""
	err := s.write(ctx, func(tx *sql.Tx) error {
		for i := 0; i < len(reqs); {
			j := i + 1
			for j < len(reqs) && reqs[j].ThreadID == reqs[i].ThreadID && reqs[j].NS == reqs[i].NS && reqs[j].Head == rows[j-1].ID {
				j++
			}
			if err := s.putChain(ctx, tx, reqs[i:j], rows[i:j]); err != nil {
				failed = reqs[i].ThreadID
				return err
			}
			i = j
		}
		return nil
	})
	if err != nil && failed == "" {
		failed = reqs[0].ThreadID
	}
	return wrap(ctx, "put", failed, err)
}

// putChain stores a chain of puts of one thread namespace, each put's Head the checkpoint of
// the put before it, in tx: the head moves once, from the first put's Head to the last put's
// checkpoint. A chain whose last checkpoint is already the head is a retry of a write that
// committed but whose reply was lost: it stores nothing.
func (s *Saver) putChain(ctx context.Context, tx *sql.Tx, reqs []checkpoint.PutRequest, rows []sqlcore.Row) error {
	first, last := reqs[0], rows[len(rows)-1]
	// The compare-and-swap comes first: it is the write that takes the lock.
	var id int64
	cas := "casMove"
	if first.Head == "" {
		cas = "casCreate"
	}
	err := s.stmt(ctx, tx, cas).QueryRowContext(ctx, last.ID, first.ThreadID, first.NS, first.Head).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		var head string
		err := s.stmt(ctx, tx, "head").QueryRowContext(ctx, first.ThreadID, first.NS).Scan(&head)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if head == last.ID {
			return nil // a retry of a put that committed but whose reply was lost
		}
		return sqlcore.Conflict(first.ThreadID, first.NS, first.Head, head)
	}
	if err != nil {
		return err
	}
	insert := s.stmt(ctx, tx, "insertCheckpoint")
	var upsert *sql.Stmt
	for i, req := range reqs {
		r := rows[i]
		if _, err := insert.ExecContext(ctx, id, r.ID, r.ParentID, r.Step, r.Source, r.CreatedAt, string(r.State), nullText(r.Metadata)); err != nil {
			return err
		}
		if len(req.Blobs) > 0 && upsert == nil {
			upsert = s.stmt(ctx, tx, "upsertBlob")
		}
		for _, b := range req.Blobs {
			data := b.Data
			if data == nil {
				data = []byte{}
			}
			if _, err := upsert.ExecContext(ctx, id, b.Channel, b.Version, b.Base, data); err != nil {
				return err
			}
		}
	}
	return nil
}

func nullText(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// PutWrites implements [checkpoint.Saver].
func (s *Saver) PutWrites(ctx context.Context, req checkpoint.WritesRequest) error {
	ref := req.Ref
	err := s.write(ctx, func(tx *sql.Tx) error {
		if _, err := s.stmt(ctx, tx, "deleteTaskWrites").ExecContext(ctx, ref.ThreadID, ref.NS, ref.CheckpointID, req.TaskID); err != nil {
			return err
		}
		var id int64
		err := s.stmt(ctx, tx, "checkpointSpace").QueryRowContext(ctx, ref.ThreadID, ref.NS, ref.CheckpointID).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return sqlcore.NotFound("thread %q namespace %q has no checkpoint %q", ref.ThreadID, ref.NS, ref.CheckpointID)
		}
		if err != nil {
			return err
		}
		if len(req.Writes) > 0 {
			insert := s.stmt(ctx, tx, "insertWrite")
			for _, w := range req.Writes {
				if _, err := insert.ExecContext(ctx, id, ref.CheckpointID, req.TaskID, w.Channel, w.Value); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return wrap(ctx, "put writes", ref.ThreadID, err)
}

// Get implements [checkpoint.Saver].
func (s *Saver) Get(ctx context.Context, ref checkpoint.Ref) (*checkpoint.Tuple, error) {
	t, err := s.get(ctx, ref)
	if err != nil {
		return nil, wrap(ctx, "get", ref.ThreadID, err)
	}
	return t, nil
}

// chainQuery returns the blobs of a checkpoint's channel versions and, for deltas, the blobs
// below them down to a full one. The recursion walks keys only (UNION compares whole rows, and
// also stops a chain that loops); each blob's data is read once at the end. CROSS JOIN fixes the
// join order: SQLite would otherwise be free to scan a thread's blobs and parse the checkpoint's
// versions once per blob.
const chainQuery = `
WITH RECURSIVE chain (channel, version) AS (
	SELECT v.key, v.value
	FROM trellis_checkpoints c CROSS JOIN json_each(c.state, '$.v') v
	WHERE c.space = ?1 AND c.id = ?2
	UNION
	SELECT b.channel, b.base
	FROM chain CROSS JOIN trellis_checkpoint_blobs b
	WHERE b.space = ?1 AND b.channel = chain.channel AND b.version = chain.version AND b.base <> ''
)
SELECT b.channel, b.version, b.base, b.data
FROM chain CROSS JOIN trellis_checkpoint_blobs b
WHERE b.space = ?1 AND b.channel = chain.channel AND b.version = chain.version`

func (s *Saver) get(ctx context.Context, ref checkpoint.Ref) (*checkpoint.Tuple, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// One read transaction: a snapshot, so a concurrent Prune cannot remove blobs between the
	// queries.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()

	var (
		spaceID int64
		r       sqlcore.Row
		dest    = []any{&spaceID, &r.ID, &r.ParentID, &r.Step, &r.Source, &r.CreatedAt, &r.State, &r.Metadata}
	)
	if ref.CheckpointID == "" {
		err = s.stmt(ctx, tx, "getNewest").QueryRowContext(ctx, ref.ThreadID, ref.NS).Scan(dest...)
	} else {
		err = s.stmt(ctx, tx, "getByID").QueryRowContext(ctx, ref.ThreadID, ref.NS, ref.CheckpointID).Scan(dest...)
	}
	cp, err := sqlcore.Found(ref, r, err, sql.ErrNoRows)
	if err != nil {
		return nil, err
	}
	t := &checkpoint.Tuple{Ref: checkpoint.Ref{ThreadID: ref.ThreadID, NS: ref.NS, CheckpointID: cp.ID}, Checkpoint: cp}

	rows, err := s.stmt(ctx, tx, "chain").QueryContext(ctx, spaceID, cp.ID)
	if err != nil {
		return nil, err
	}
	var blobs []checkpoint.Blob
	for rows.Next() {
		var b checkpoint.Blob
		if err := rows.Scan(&b.Channel, &b.Version, &b.Base, &b.Data); err != nil {
			rows.Close()
			return nil, err
		}
		blobs = append(blobs, b)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if t.Blobs, err = sqlcore.CheckChains(ref.ThreadID, cp.ID, cp.Versions, blobs); err != nil {
		return nil, err
	}

	rows, err = s.stmt(ctx, tx, "pending").QueryContext(ctx, spaceID, cp.ID)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var w checkpoint.PendingWrite
		if err := rows.Scan(&w.TaskID, &w.Channel, &w.Value); err != nil {
			rows.Close()
			return nil, err
		}
		t.Pending = append(t.Pending, w)
	}
	return t, rows.Err()
}

// List implements [checkpoint.Saver]. It reads Options.ListPageSize checkpoints per query and
// holds no transaction while the caller's loop body runs, so the body may call the saver.
func (s *Saver) List(ctx context.Context, opts checkpoint.ListOptions) iter.Seq2[*checkpoint.Tuple, error] {
	fail := func(err error) error { return wrap(ctx, "list", opts.ThreadID, err) }
	return sqlcore.List(ctx, dialect, opts, s.opts.ListPageSize, contextErr, func(ctx context.Context, q string, args []any) (sqlcore.Rows, func(), error) {
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, nil, err
		}
		return rows, func() { rows.Close() }, nil
	}, fail)
}

func contextErr(ctx context.Context) error { return ctx.Err() }

// dialect is how the shared listing query is written for SQLite: the metadata filter is
// checked in Go only.
var dialect = sqlcore.Dialect{Param: func(int) string { return "?" }}

// SetMetadata implements [checkpoint.Saver]: one UPDATE of the checkpoint's row.
func (s *Saver) SetMetadata(ctx context.Context, ref checkpoint.Ref, metadata map[string]any) error {
	err := sqlcore.SetMetadata(ctx, dialect, ref, metadata, contextErr, func(ctx context.Context, q string, args ...any) (int64, error) {
		res, err := s.db.ExecContext(ctx, q, args...)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	})
	return wrap(ctx, "set metadata", ref.ThreadID, err)
}

// DeleteThreads implements [checkpoint.Saver]: one transaction of four statements whatever the
// number of threads.
func (s *Saver) DeleteThreads(ctx context.Context, threadIDs []string) error {
	if len(threadIDs) == 0 {
		return nil
	}
	ids, err := json.Marshal(threadIDs)
	if err != nil {
		return fail("delete threads", sqlcore.OneThread(threadIDs), err, "")
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		const spaces = "(SELECT id FROM trellis_checkpoint_spaces WHERE thread_id IN (SELECT value FROM json_each(?1)))"
		for _, table := range []string{"trellis_checkpoint_writes", "trellis_checkpoint_blobs", "trellis_checkpoints"} {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE space IN "+spaces, string(ids)); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM trellis_checkpoint_spaces WHERE thread_id IN (SELECT value FROM json_each(?1))", string(ids))
		return err
	})
	return wrap(ctx, "delete threads", sqlcore.OneThread(threadIDs), err)
}

const pruneBlobs = `
WITH RECURSIVE needed (channel, version) AS (
	SELECT v.key, v.value FROM trellis_checkpoints c CROSS JOIN json_each(c.state, '$.v') v WHERE c.space = ?1
	UNION
	SELECT b.channel, b.base
	FROM needed CROSS JOIN trellis_checkpoint_blobs b
	WHERE b.space = ?1 AND b.channel = needed.channel AND b.version = needed.version AND b.base <> ''
)
DELETE FROM trellis_checkpoint_blobs
WHERE space = ?1 AND (channel, version) NOT IN (SELECT channel, version FROM needed)`

// Prune implements [checkpoint.Saver].
func (s *Saver) Prune(ctx context.Context, req checkpoint.PruneRequest) error {
	if req.Keep < 1 {
		return fail("prune", req.ThreadID, fmt.Errorf("the number of checkpoints to keep is %d; it must be at least 1", req.Keep), "to remove the whole thread, use DeleteThreads")
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM trellis_checkpoints
WHERE space IN (SELECT id FROM trellis_checkpoint_spaces WHERE thread_id = ?1)
AND id < (SELECT c.id FROM trellis_checkpoints c WHERE c.space = trellis_checkpoints.space ORDER BY c.id DESC LIMIT 1 OFFSET ?2)`,
			req.ThreadID, req.Keep-1)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		rows, err := tx.QueryContext(ctx, "SELECT id FROM trellis_checkpoint_spaces WHERE thread_id = ?", req.ThreadID)
		if err != nil {
			return err
		}
		var spaces []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			spaces = append(spaces, id)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range spaces {
			if _, err := tx.ExecContext(ctx, `DELETE FROM trellis_checkpoint_writes WHERE space = ?1
	AND checkpoint_id NOT IN (SELECT id FROM trellis_checkpoints WHERE space = ?1)`, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, pruneBlobs, id); err != nil {
				return err
			}
		}
		return nil
	})
	return wrap(ctx, "prune", req.ThreadID, err)
}
