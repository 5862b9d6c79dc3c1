package pgsaver

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/checkpoint/internal/sqlcore"
	"github.com/trellis-go/trellis/internal/owned"
)

// Options configures a saver. The zero value (or a nil *Options) means the documented defaults.
type Options struct {
	// ListPageSize is how many checkpoints List reads per query. Zero means 256.
	ListPageSize int
}

func (o *Options) withDefaults() (Options, error) {
	return sqlcore.Defaults(o, func(o *Options) *int { return &o.ListPageSize })
}

// Saver is a [checkpoint.Saver] on Postgres. It is safe for concurrent use, also by many
// processes sharing one database.
type Saver struct {
	pool   *pgxpool.Pool
	opts   Options
	own    bool // Close closes pool
	closed atomic.Bool
}

var _ checkpoint.Saver = (*Saver)(nil)

// Open connects to the database connString names (a URL or key=value string, as pgxpool takes;
// search_path and pool_max_conns may be set in it), migrates it, and returns a saver that owns
// the pool: [Saver.Close] closes it.
func Open(ctx context.Context, connString string, opts *Options) (*Saver, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fail("open", "", err, "pass a connection string such as postgres://user@host:5432/db")
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, wrap(ctx, "open", "", err)
	}
	s, err := New(ctx, pool, opts)
	return owned.Open(s, err, pool.Close, func(s *Saver) { s.own = true })
}

// New returns a saver on pool after running [Migrate]. The tables live in the first schema of
// the pool's search_path. The caller keeps ownership of pool.
func New(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*Saver, error) {
	o, err := sqlcore.Prepare("pgsaver", opts.withDefaults, pool == nil, "pool", "pass a *pgxpool.Pool or use Open",
		func() error { return Migrate(ctx, pool) })
	if err != nil {
		return nil, err
	}
	return &Saver{pool: pool, opts: o}, nil
}

// Pool returns the pool the saver uses.
func (s *Saver) Pool() *pgxpool.Pool { return s.pool }

// Close makes further calls fail with [ErrClosed], and closes the pool if [Open] made it.
func (s *Saver) Close() {
	if s.closed.Swap(true) {
		return
	}
	if s.own {
		s.pool.Close()
	}
}

// begin checks what every call checks first.
func (s *Saver) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return ErrClosed
	}
	return nil
}

// The head compare-and-swap and the inserts are one statement, so one round trip and atomic
// without an explicit transaction: if the CAS matches no row, nothing else is inserted. The
// first variant moves an existing head; Postgres re-checks "head = $4" after waiting for a
// concurrent writer's row lock, so of two writers with the same expected head only one
// succeeds. The second creates the namespace's head row; a concurrent creator makes it a no-op.
const (
	casMove   = `UPDATE trellis_checkpoint_spaces SET head = $3::text WHERE thread_id = $1::text AND ns = $2::text AND head = $4::text RETURNING id`
	casCreate = `INSERT INTO trellis_checkpoint_spaces (thread_id, ns, head) SELECT $1::text, $2::text, $3::text WHERE $4::text = ''
ON CONFLICT (thread_id, ns) DO NOTHING RETURNING id`
	putRest = `),
cp AS (
	INSERT INTO trellis_checkpoints (space, id, parent_id, step, source, created_at, state, metadata)
	SELECT id, $3::text, $5::text, $6::bigint, $7::text, $8::bigint, $9::jsonb, $10::jsonb FROM cas
),
blobs AS (
	INSERT INTO trellis_checkpoint_blobs (space, channel, version, base, data)
	SELECT cas.id, x.channel, x.version, x.base, x.data
	FROM cas, unnest($11::text[], $12::text[], $13::text[], $14::bytea[]) AS x (channel, version, base, data)
	ON CONFLICT (space, channel, version) DO UPDATE SET base = excluded.base, data = excluded.data
)
SELECT id FROM cas`
)

var (
	putMove   = "WITH cas AS (" + casMove + putRest
	putCreate = "WITH cas AS (" + casCreate + putRest
)

// Put implements [checkpoint.Saver].
func (s *Saver) Put(ctx context.Context, req checkpoint.PutRequest) error {
	return wrap(ctx, "put", req.ThreadID, s.put(ctx, req))
}

func (s *Saver) put(ctx context.Context, req checkpoint.PutRequest) error {
	q, args, id, err := s.putArgs(ctx, req)
	if err != nil {
		return err
	}
	var space int64
	err = s.pool.QueryRow(ctx, q, args...).Scan(&space)
	if errors.Is(err, pgx.ErrNoRows) {
		return s.missed(ctx, req, id)
	}
	return err
}

// putArgs checks and encodes req: the put's statement, its arguments and the checkpoint's ID.
func (s *Saver) putArgs(ctx context.Context, req checkpoint.PutRequest) (string, []any, string, error) {
	r, err := sqlcore.EncodePut(req)
	if err != nil {
		return "", nil, "", err
	}
	if err := s.begin(ctx); err != nil {
		return "", nil, "", err
	}
	// One row per key: ON CONFLICT DO UPDATE may not touch a row twice in one statement.
	n := len(req.Blobs)
	channels, versions, bases, datas := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([][]byte, 0, n)
	seen := make(map[[2]string]int, n)
	for _, b := range req.Blobs {
		data := b.Data
		if data == nil {
			data = []byte{}
		}
		if i, ok := seen[[2]string{b.Channel, b.Version}]; ok {
			bases[i], datas[i] = b.Base, data
			continue
		}
		seen[[2]string{b.Channel, b.Version}] = len(channels)
		channels, versions, bases, datas = append(channels, b.Channel), append(versions, b.Version), append(bases, b.Base), append(datas, data)
	}
	q := putMove
	if req.Head == "" {
		q = putCreate
	}
	var metadata any
	if r.Metadata != nil {
		metadata = r.Metadata
	}
	return q, []any{req.ThreadID, req.NS, r.ID, req.Head, r.ParentID, r.Step, r.Source, r.CreatedAt, r.State, metadata,
		channels, versions, bases, datas}, r.ID, nil
}

// missed is what a put whose head did not match returns. Either the same put already committed
// (its reply was lost and this is the retry), or another writer moved the head.
func (s *Saver) missed(ctx context.Context, req checkpoint.PutRequest, id string) error {
	var head string
	err := s.pool.QueryRow(ctx, "SELECT head FROM trellis_checkpoint_spaces WHERE thread_id = $1 AND ns = $2", req.ThreadID, req.NS).Scan(&head)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	if head == id {
		return nil
	}
	return sqlcore.Conflict(req.ThreadID, req.NS, req.Head, head)
}

// QueuePut queues req's put on b, to go to the database in one round trip with b's other
// statements: a caller sends a checkpoint together with what follows it (the server, a run's
// checkpoint and the stream event after it). Sent without an explicit transaction, Postgres
// runs a batch's statements in one, committed at its end, so a statement that fails undoes
// them all; a put whose head does not match changes nothing and does not stop the others.
// Once b's results are closed, check(ctx) returns what [Saver.Put] would have: nil, a
// conflict, or the error of the batch (the error the batch's Close returned, if any, is
// passed to it).
func (s *Saver) QueuePut(ctx context.Context, b *pgx.Batch, req checkpoint.PutRequest) (check func(ctx context.Context, batchErr error) error, err error) {
	q, args, id, err := s.putArgs(ctx, req)
	if err != nil {
		return nil, wrap(ctx, "put", req.ThreadID, err)
	}
	missed := false
	b.Queue(q, args...).QueryRow(func(row pgx.Row) error {
		var space int64
		err := row.Scan(&space)
		if errors.Is(err, pgx.ErrNoRows) {
			missed = true
			return nil
		}
		return err
	})
	return func(ctx context.Context, batchErr error) error {
		switch {
		case batchErr != nil:
			return wrap(ctx, "put", req.ThreadID, batchErr)
		case missed:
			return wrap(ctx, "put", req.ThreadID, s.missed(ctx, req, id))
		}
		return nil
	}, nil
}

// PutWrites implements [checkpoint.Saver]. Deleting the task's earlier writes and inserting the
// new ones is one statement, so a reader never sees half of it.
func (s *Saver) PutWrites(ctx context.Context, req checkpoint.WritesRequest) error {
	return wrap(ctx, "put writes", req.Ref.ThreadID, s.putWrites(ctx, req))
}

const putWrites = `
WITH target AS (
	SELECT s.id FROM trellis_checkpoint_spaces s JOIN trellis_checkpoints c ON c.space = s.id
	WHERE s.thread_id = $1 AND s.ns = $2 AND c.id = $3
),
gone AS (
	DELETE FROM trellis_checkpoint_writes w USING target
	WHERE w.space = target.id AND w.checkpoint_id = $3 AND w.task_id = $4
),
added AS (
	INSERT INTO trellis_checkpoint_writes (space, checkpoint_id, task_id, channel, value)
	SELECT target.id, $3, $4, x.channel, x.value
	FROM target, unnest($5::text[], $6::bytea[]) WITH ORDINALITY AS x (channel, value, ord)
	ORDER BY x.ord
)
SELECT count(*) FROM target`

func (s *Saver) putWrites(ctx context.Context, req checkpoint.WritesRequest) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	ref := req.Ref
	channels, values := make([]string, len(req.Writes)), make([][]byte, len(req.Writes))
	for i, w := range req.Writes {
		channels[i], values[i] = w.Channel, w.Value
	}
	var found int
	if err := s.pool.QueryRow(ctx, putWrites, ref.ThreadID, ref.NS, ref.CheckpointID, req.TaskID, channels, values).Scan(&found); err != nil {
		return err
	}
	if found == 0 {
		return sqlcore.NotFound("thread %q namespace %q has no checkpoint %q", ref.ThreadID, ref.NS, ref.CheckpointID)
	}
	return nil
}

// The whole tuple in one statement, hence one snapshot: a concurrent Prune cannot remove a blob
// between reading the checkpoint and reading its chain. The chain recursion walks keys only and
// fetches each blob's data once at the end.
const getTemplate = `
WITH RECURSIVE cp AS (
	SELECT c.space, c.id, c.parent_id, c.step, c.source, c.created_at, c.state, c.metadata
	FROM trellis_checkpoint_spaces s JOIN trellis_checkpoints c ON c.space = s.id
	WHERE s.thread_id = $1 AND s.ns = $2 %s
	ORDER BY c.id DESC LIMIT 1
),
chain (space, channel, version) AS (
	SELECT cp.space, v.key, v.value FROM cp, jsonb_each_text(cp.state->'v') v
	UNION
	SELECT chain.space, b.channel, b.base
	FROM chain JOIN trellis_checkpoint_blobs b ON b.space = chain.space AND b.channel = chain.channel AND b.version = chain.version
	WHERE b.base <> ''
)
SELECT cp.id, cp.parent_id, cp.step, cp.source, cp.created_at, cp.state, cp.metadata,
	b.channels, b.versions, b.bases, b.datas, w.tasks, w.channels, w.vals
FROM cp
LEFT JOIN LATERAL (
	SELECT array_agg(bl.channel) AS channels, array_agg(bl.version) AS versions, array_agg(bl.base) AS bases, array_agg(bl.data) AS datas
	FROM chain JOIN trellis_checkpoint_blobs bl ON bl.space = chain.space AND bl.channel = chain.channel AND bl.version = chain.version
) b ON true
LEFT JOIN LATERAL (
	SELECT array_agg(task_id ORDER BY seq) AS tasks, array_agg(channel ORDER BY seq) AS channels, array_agg(value ORDER BY seq) AS vals
	FROM trellis_checkpoint_writes WHERE space = cp.space AND checkpoint_id = cp.id
) w ON true`

var (
	getNewest = fmt.Sprintf(getTemplate, "AND $3::text = ''")
	getByID   = fmt.Sprintf(getTemplate, "AND c.id = $3")
)

// Get implements [checkpoint.Saver].
func (s *Saver) Get(ctx context.Context, ref checkpoint.Ref) (*checkpoint.Tuple, error) {
	t, err := s.get(ctx, ref)
	if err != nil {
		return nil, wrap(ctx, "get", ref.ThreadID, err)
	}
	return t, nil
}

func (s *Saver) get(ctx context.Context, ref checkpoint.Ref) (*checkpoint.Tuple, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	q := getByID
	if ref.CheckpointID == "" {
		q = getNewest
	}
	var (
		r                         sqlcore.Row
		channels, versions, bases []string
		datas                     [][]byte
		tasks, writeChannels      []string
		values                    [][]byte
	)
	err := s.pool.QueryRow(ctx, q, ref.ThreadID, ref.NS, ref.CheckpointID).Scan(&r.ID, &r.ParentID, &r.Step, &r.Source, &r.CreatedAt, &r.State, &r.Metadata,
		&channels, &versions, &bases, &datas, &tasks, &writeChannels, &values)
	cp, err := sqlcore.Found(ref, r, err, pgx.ErrNoRows)
	if err != nil {
		return nil, err
	}
	if len(versions) != len(channels) || len(bases) != len(channels) || len(datas) != len(channels) ||
		len(writeChannels) != len(tasks) || len(values) != len(tasks) {
		return nil, fmt.Errorf("checkpoint %q: the database returned arrays of different lengths", cp.ID)
	}
	blobs := make([]checkpoint.Blob, len(channels))
	for i := range channels {
		blobs[i] = checkpoint.Blob{Channel: channels[i], Version: versions[i], Base: bases[i], Data: datas[i]}
	}
	t := &checkpoint.Tuple{Ref: checkpoint.Ref{ThreadID: ref.ThreadID, NS: ref.NS, CheckpointID: cp.ID}, Checkpoint: cp}
	if t.Blobs, err = sqlcore.CheckChains(ref.ThreadID, cp.ID, cp.Versions, blobs); err != nil {
		return nil, err
	}
	for i := range tasks {
		t.Pending = append(t.Pending, checkpoint.PendingWrite{TaskID: tasks[i], Channel: writeChannels[i], Value: values[i]})
	}
	return t, nil
}

// List implements [checkpoint.Saver]. It reads Options.ListPageSize checkpoints per query and
// holds no connection while the caller's loop body runs, so the body may call the saver. A
// metadata filter is applied in SQL as JSON containment (which can use an index) and then
// checked for equality in Go.
func (s *Saver) List(ctx context.Context, opts checkpoint.ListOptions) iter.Seq2[*checkpoint.Tuple, error] {
	fail := func(err error) error { return wrap(ctx, "list", opts.ThreadID, err) }
	return sqlcore.List(ctx, dialect, opts, s.opts.ListPageSize, s.begin, func(ctx context.Context, q string, args []any) (sqlcore.Rows, func(), error) {
		rows, err := s.pool.Query(ctx, q, args...) // never nil rows: on failure they hold the error
		return rows, rows.Close, err
	}, fail)
}

// dialect is how the shared listing query is written for Postgres.
var dialect = sqlcore.Dialect{
	Param:        func(n int) string { return fmt.Sprintf("$%d", n) },
	Collate:      ` COLLATE "C"`,
	JSONContains: func(p string) string { return "c.metadata @> " + p + "::jsonb" },
}

// SetMetadata implements [checkpoint.Saver]: one UPDATE of the checkpoint's row.
func (s *Saver) SetMetadata(ctx context.Context, ref checkpoint.Ref, metadata map[string]any) error {
	err := sqlcore.SetMetadata(ctx, dialect, ref, metadata, s.begin, func(ctx context.Context, q string, args ...any) (int64, error) {
		tag, err := s.pool.Exec(ctx, q, args...)
		return tag.RowsAffected(), err
	})
	return wrap(ctx, "set metadata", ref.ThreadID, err)
}

// DeleteThreads implements [checkpoint.Saver]. One statement whatever the number of threads:
// they disappear at once.
func (s *Saver) DeleteThreads(ctx context.Context, threadIDs []string) error {
	if len(threadIDs) == 0 {
		return nil
	}
	err := s.begin(ctx)
	if err == nil {
		_, err = s.pool.Exec(ctx, deleteThreads, threadIDs)
	}
	return wrap(ctx, "delete threads", sqlcore.OneThread(threadIDs), err)
}

// QueueDeleteThreads queues on b what [Saver.DeleteThreads] does, to go to the database in one
// round trip (and one transaction) with b's other statements: the server deletes finished
// stateless runs' checkpoints with their threads' records. The batch's error is the call's.
func (s *Saver) QueueDeleteThreads(ctx context.Context, b *pgx.Batch, threadIDs []string) error {
	if err := s.begin(ctx); err != nil {
		return wrap(ctx, "delete threads", sqlcore.OneThread(threadIDs), err)
	}
	if len(threadIDs) > 0 {
		b.Queue(deleteThreads, threadIDs)
	}
	return nil
}

// deleteThreads deletes the checkpoints of the threads in $1 (a text array).
const deleteThreads = `
WITH spaces AS (DELETE FROM trellis_checkpoint_spaces WHERE thread_id = ANY($1::text[]) RETURNING id),
writes AS (DELETE FROM trellis_checkpoint_writes WHERE space IN (SELECT id FROM spaces)),
blobs AS (DELETE FROM trellis_checkpoint_blobs WHERE space IN (SELECT id FROM spaces))
DELETE FROM trellis_checkpoints WHERE space IN (SELECT id FROM spaces)`

const pruneBlobs = `
WITH RECURSIVE needed (channel, version) AS (
	SELECT v.key, v.value FROM trellis_checkpoints c, jsonb_each_text(c.state->'v') v WHERE c.space = $1
	UNION
	SELECT b.channel, b.base
	FROM needed JOIN trellis_checkpoint_blobs b ON b.space = $1 AND b.channel = needed.channel AND b.version = needed.version
	WHERE b.base <> ''
)
DELETE FROM trellis_checkpoint_blobs b
WHERE b.space = $1 AND NOT EXISTS (SELECT 1 FROM needed n WHERE n.channel = b.channel AND n.version = b.version)`

// Prune implements [checkpoint.Saver]. It locks the thread's head rows first, so puts to the
// thread wait for it rather than interleave with it.
func (s *Saver) Prune(ctx context.Context, req checkpoint.PruneRequest) error {
	if req.Keep < 1 {
		return fail("prune", req.ThreadID, fmt.Errorf("the number of checkpoints to keep is %d; it must be at least 1", req.Keep), "to remove the whole thread, use DeleteThreads")
	}
	err := s.begin(ctx)
	if err == nil {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, "SELECT id FROM trellis_checkpoint_spaces WHERE thread_id = $1 ORDER BY id FOR UPDATE", req.ThreadID)
			if err != nil {
				return err
			}
			spaces, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			if err != nil {
				return err
			}
			for _, id := range spaces {
				tag, err := tx.Exec(ctx, `DELETE FROM trellis_checkpoints WHERE space = $1 AND id < (
	SELECT id FROM trellis_checkpoints WHERE space = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)`, id, req.Keep-1)
				if err != nil {
					return err
				}
				if tag.RowsAffected() == 0 {
					continue
				}
				if _, err := tx.Exec(ctx, `DELETE FROM trellis_checkpoint_writes w WHERE w.space = $1
	AND NOT EXISTS (SELECT 1 FROM trellis_checkpoints c WHERE c.space = $1 AND c.id = w.checkpoint_id)`, id); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, pruneBlobs, id); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return wrap(ctx, "prune", req.ThreadID, err)
}
