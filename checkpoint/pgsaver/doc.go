// Package pgsaver stores checkpoints in Postgres, through pgx: the saver for several trellis
// replicas sharing one database.
//
// # Opening
//
//	saver, err := pgsaver.Open(ctx, "postgres://trellis@db:5432/trellis?pool_max_conns=10", nil)
//	if err != nil {
//		return err
//	}
//	defer saver.Close()
//
// Open makes a pgxpool.Pool and runs [Migrate]; [New] takes a pool you made. The tables live in
// the first schema of the connection's search_path, so one database can hold several
// independent sets (the tests give each test a schema of its own).
//
// # Concurrency and durability
//
// A put is one SQL statement: an UPDATE of the thread namespace's head row guarded by
// "head = expected" (or, for the first checkpoint, an INSERT that does nothing if the row
// exists), with the checkpoint and blob inserts as data-modifying CTEs that only run when that
// guard matched. Postgres re-checks the guard after waiting for a concurrent writer's row lock,
// so of two writers with the same expected head exactly one succeeds and the other gets
// [checkpoint.ErrConflict], from any number of processes. It is one round trip and one commit,
// and a put that failed stored nothing.
//
// If the connection breaks during a put ([ErrUnavailable]), whether it committed is unknown:
// retry the same request. If it had committed, the retry finds its checkpoint at the head and
// succeeds without a duplicate.
//
// [Saver.QueuePut] and [Saver.QueueDeleteThreads] queue the same statements on a pgx.Batch, so
// that a caller sends them with statements of its own in one round trip; sent without an
// explicit transaction, Postgres runs the batch as one (the trellis server sends a stateless
// run's checkpoint with the stream event that follows it).
//
// Get is one statement too (the checkpoint, its blob chains by a recursive CTE, and its pending
// writes, aggregated into arrays), so it reads one snapshot and costs one round trip.
//
// # Errors
//
// Failures are [*Error] values naming the operation and thread, with a hint; they match
// [checkpoint.ErrNotFound], [checkpoint.ErrConflict], [ErrReadOnly] (a standby, or
// default_transaction_read_only), [ErrUnavailable] (cannot connect, or the connection was lost),
// [ErrClosed] and context errors with errors.Is.
package pgsaver
