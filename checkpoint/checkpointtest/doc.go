// Package checkpointtest is the conformance suite for [checkpoint.Saver] implementations.
//
// A saver is correct when it passes [Run]. Every saver in trellis runs it (the in-memory one in
// package checkpoint, the SQLite one in sqlitesaver, the Postgres one in pgsaver), and a
// third-party saver should too:
//
//	func TestConformance(t *testing.T) {
//		checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
//			s, err := mysaver.Open(t.TempDir())
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// Run calls newSaver once per subtest. It may hand back a fresh, empty saver each time or the
// same shared one: every subtest uses thread IDs of its own, so subtests never see each other's
// data. [RunFreshAndShared] runs the suite both ways. A SQL saver also checks its Migrate with
// [Migrate].
//
// # What the suite pins down
//
// Each subtest is named after the behaviour of the [checkpoint.Saver] documentation it checks:
//
//   - Get returns the newest checkpoint or the one named, with its Ref filled in, and
//     [checkpoint.ErrNotFound] for an unknown thread, namespace or checkpoint ID;
//   - every field of a checkpoint, blob and pending write comes back as it was put: Next with
//     its Arg bytes, Barriers, Metadata (compared as JSON), CreatedAt to the nanosecond, and blob
//     data byte for byte (no JSON normalisation);
//   - blob chains: a delta on a delta on a full blob comes back whole, an older checkpoint gets
//     only its own chain, and blobs of other threads or namespaces never leak in;
//   - pending writes keep their put order, a repeated PutWrites for a task replaces that task's
//     writes, and writes against a checkpoint that does not exist fail with ErrNotFound;
//   - List: newest first, one namespace or all, Before, Limit, metadata filters, no blobs;
//   - the head compare-and-swap: a stale head gets [checkpoint.ErrConflict] and stores nothing
//     (no checkpoint, no blob), a put repeated after a lost reply succeeds without a duplicate,
//     and of many goroutines racing on one head exactly one wins;
//   - a put with no checkpoint ID or a malformed blob is rejected and stores nothing; of two
//     blobs with the same key in one put, the last is kept;
//   - SetMetadata replaces one checkpoint's metadata and nothing else (blobs, pending writes,
//     the head), clears it with nil, and fails with ErrNotFound for an unknown checkpoint;
//   - forking, DeleteThreads (several threads at once, every namespace, blobs and pending writes
//     included; unknown threads are no error) and Prune as documented, including the blobs Prune
//     must keep;
//   - a cancelled context makes every method fail with an error that matches context.Canceled.
package checkpointtest
