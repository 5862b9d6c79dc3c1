// Package metadb is the server's metadata database: the records the Agent Protocol API serves
// and the runner works on, in the server's SQLite file or its Postgres database, next to the
// checkpoint saver's and the store's tables. It cannot see the server package: it reads and
// writes rows of its own (Thread, Run, Event, Assistant, Cron), holding the columns that are the
// server's own types in JSON (a run's kwargs and progress, a cron's principal) as raw JSON; the
// server converts the rows to and from the API's types (server/meta.go), checks what a per-user
// principal may see, and turns ErrNotFound into a 404.
//
// # Tables
//
//   - trellis_threads: a tenant's threads: metadata, status, the state's newest values and
//     interrupts (copied there when a run ends, for searches), a temporary flag for stateless
//     runs' threads, a ttl, and created/updated/state-updated stamps.
//   - trellis_runs: runs: their thread and assistant, status, metadata, the kwargs they were
//     created with, and their execution: the lease (lease_owner, lease_until: which worker
//     executes the run, until when it is known alive), the attempt count, the progress, the last
//     error and when the next attempt is due.
//   - trellis_run_events: the events of resumable runs' streams, by run and number, so that a
//     client can rejoin a stream, on any replica.
//   - trellis_assistants, trellis_assistant_versions: the assistants created through the API (the
//     current version of each; every version it had). Assistants registered from graphs are not
//     stored.
//   - trellis_crons: runs started on a schedule, with the payload, the creator's principal and the
//     next run date that processes claim with a compare-and-swap (ClaimCron).
//   - trellis_server_migrations: the migrations applied (Migrate).
//
// Every query of the API's records names the tenant; the few that do not (RunByID,
// UnfinishedRuns, ExpiredLeases, DueCrons, ...) serve the runner and the schedulers, which work
// for every tenant. Times are stored as Unix milliseconds, stamped by Stamp, which never gives
// the same millisecond twice so that records sort in the order they were made.
//
// # Dialects
//
// Queries are written once with $N placeholders, which Q rewrites to SQLite's ?N. Where the two
// differ:
//   - claims and inserts of a thread's runs (ClaimRun, InsertRunOnThread) hold Postgres advisory
//     locks on the thread (and the tenant) in a transaction, so that replicas take turns; SQLite
//     has one writer, and one statement decides;
//   - several runs' events are written in one statement of arrays (unnest) on Postgres, without
//     waiting for the disk (synchronous_commit off), and can go out with a NOTIFY in the same
//     statement (AppendEventsNotify), or with a run's final status (SetRunEndEvents, Postgres
//     only); SQLite writes them in INSERTs of up to 500 rows;
//   - thread searches compare metadata and values keys with jsonb on Postgres, json_extract on
//     SQLite (scalars only: the caller checks the rest);
//   - a new thread and its first run are inserted in one statement on Postgres (a data-modifying
//     WITH), in two on SQLite (InsertRunWithThread);
//   - lists of IDs travel as arrays on Postgres and as a JSON array (json_each) on SQLite;
//   - concurrent migrations serialise on an advisory lock on Postgres.
package metadb
