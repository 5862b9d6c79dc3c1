// Package sqlitestore keeps the long-term memory store (store.Store) in a SQLite file: the
// store of a single trellis process, and the default of `trellis serve`.
//
// # Opening
//
//	st, err := sqlitestore.Open(ctx, "data/store.db", &sqlitestore.Options{
//		Config: store.Config{Index: &store.IndexConfig{Embedder: emb, Dims: 1536}},
//	})
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//
// Open opens (or creates) the file with DSN's settings (WAL, a busy timeout, immediate write
// transactions) and runs Migrate; New takes a *sql.DB you opened, for example the one the
// checkpoint saver uses, and leaves it open on Close. A nil *Options is a store without
// vectors or TTL.
//
// # Search
//
// Items live in one table keyed by namespace prefix and key. Full-text search uses an FTS5
// table kept in step by triggers, fed the tokens of store.Tokenize, so results rank as on the
// other backends. With an IndexConfig the store also embeds each item's indexed text and
// answers semantic queries from an HNSW graph (package store/vector) held in memory; the graph
// is saved in the database now and then, so a restart loads it instead of rebuilding it, and a
// process that finds newer writes (another process on the same file) applies them before it
// searches. Options.ExactVectors scans every vector instead, for exact results on small stores.
// The index's dimension is recorded on first use; opening the file with another is an error.
//
// Items with a TTL expire: reads skip them, a read renews their TTL (unless Config.NoRefreshOnRead), and
// with Config.SweepInterval set a sweeper deletes them in the background.
//
// The store passes the conformance suite in package storetest, as every backend must.
package sqlitestore
