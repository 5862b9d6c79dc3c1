// Package sqlitesaver stores checkpoints in a SQLite database file: the embedded default of
// trellis, on the pure-Go driver modernc.org/sqlite, so building needs no C compiler.
//
// # Opening
//
//	saver, err := sqlitesaver.Open(ctx, "trellis.db", nil)
//	if err != nil {
//		return err
//	}
//	defer saver.Close()
//
// Open puts the database in WAL mode (readers never wait for the writer), sets a busy timeout
// (writers from other connections and processes wait for each other instead of failing), and
// runs [Migrate]. To share a *sql.DB with other code, open it yourself with the same settings
// and call [New]; see [Options] for the defaults.
//
// # Concurrency and durability
//
// Every write is one transaction whose first statement is the write that moves the thread's
// head (see [checkpoint.PutRequest.Head]), so SQLite takes its write lock at once and the head
// check and the inserts happen under it. Two processes writing one thread, each with its own
// *sql.DB on the same file, therefore never fork its history: the second gets
// [checkpoint.ErrConflict]. A put retried after a lost reply finds its own checkpoint at the head
// and succeeds without storing it twice.
//
// [Saver.PutAll] writes several puts in one transaction, all or none: SQLite writes a
// transaction's pages to its write-ahead log once, so a run's successive checkpoints written
// together cost about one put, and a chain of them (each put's Head the checkpoint before it)
// moves the head once. The server writes a stateless run's checkpoints that way.
//
// With the default synchronous=FULL a put that returned survives a power cut; NORMAL trades
// that for speed (it still survives a crash of the process).
//
// # Schema
//
// Four tables, created by versioned migrations recorded in trellis_checkpoint_migrations:
// trellis_checkpoint_spaces (one row per thread namespace, holding its head), trellis_checkpoints,
// trellis_checkpoint_blobs and trellis_checkpoint_writes. docs/checkpoints.md describes them.
//
// # Errors
//
// Failures are [*Error] values naming the operation and thread, with a hint when the saver knows
// what to do; they match [checkpoint.ErrNotFound], [checkpoint.ErrConflict], [ErrReadOnly],
// [ErrBusy] and context errors with errors.Is.
package sqlitesaver
