// Package pgstore keeps the long-term memory store (store.Store) in Postgres, through pgx: the
// store for several trellis replicas sharing one database.
//
// # Opening
//
//	st, err := pgstore.Open(ctx, "postgres://trellis@db:5432/trellis", &pgstore.Options{
//		Config: store.Config{Index: &store.IndexConfig{Embedder: emb, Dims: 1536}},
//	})
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//
// Open makes a pgxpool.Pool and runs Migrate; New takes a pool you made and leaves it open on
// Close. The tables live in the first schema of the connection's search_path, so one database
// can hold several stores (the tests give each test a schema of its own). Migrations take an
// advisory lock, so replicas starting together migrate once. A nil *Options is a store without
// vectors or TTL.
//
// # Search
//
// Items live in one table keyed by namespace prefix and key. Full-text search uses a generated
// tsvector column with a GIN index, fed the tokens of store.Tokenize, so results rank as on
// the other backends. With an IndexConfig the store also embeds each item's indexed text and
// answers semantic queries with pgvector's HNSW index when the extension can be created
// (Options.Vector: VectorAuto), insists on it (VectorPGVector), or scans the candidate vectors
// exactly in the store process (VectorExact). Options.EfSearch trades recall for speed in the
// HNSW walk.
//
// Items with a TTL expire: reads skip them, a read renews their TTL (unless Config.NoRefreshOnRead), and
// with Config.SweepInterval set a sweeper deletes them in the background.
//
// The store passes the conformance suite in package storetest, as every backend must.
package pgstore
