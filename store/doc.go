// Package store is trellis's long-term memory: JSON items kept under namespaces, found by key,
// by filter, by full text and by meaning.
//
// # Items and namespaces
//
// An item is a JSON object (map[string]any) stored under a namespace, a list of labels such
// as {"users", "u42", "memories"}, and a key. Namespaces nest: a search under {"users"} sees
// every user's items, one under {"users", "u42"} only that user's. Labels are 1 to 256 bytes of
// text without control characters; a namespace has at most 32 labels; a key is 1 to 1024
// bytes; a value's JSON is at most Config.MaxValueBytes (1 MiB). Anything else is refused with
// an [InputError] that says what was wrong and matches one of the ErrXxx sentinels.
//
//	err := s.Put(ctx, store.PutRequest{
//		Namespace: []string{"users", "u42", "memories"},
//		Key:       "m1",
//		Value:     map[string]any{"text": "prefers morning meetings", "kind": "preference"},
//	})
//	item, err := s.Get(ctx, store.GetRequest{Namespace: []string{"users", "u42", "memories"}, Key: "m1"})
//
// # Search
//
// [Store.Search] takes a namespace prefix, a filter on the value, an optional query, a limit
// (default 10) and an offset. Filters compare fields, with dotted paths for nested ones:
//
//	Filter: map[string]any{"kind": "preference", "score": map[string]any{"$gte": 0.5}}
//
// with the operators $eq $ne $gt $gte $lt $lte $in $nin $exists; an unknown operator is an
// error, never silently ignored. Without a query, results come newest first.
//
// With a query, the text of each item's indexed fields decides. Which fields are indexed is
// chosen per put: PutRequest.Index lists paths ("text", "meta.title", "sections[*].body", or
// "$" for the whole value), PutRequest.NoIndex leaves the item out of text search, and nil
// means the store's default (IndexConfig.Fields, else "$"). Every backend tokenizes the same
// way (see [Tokenize]) and gives its full-text engine those tokens (SQLite FTS5, Postgres
// tsvector, an inverted index in memory), so a query means the same everywhere:
//
//   - without an embedder, an item matches when it holds any query term, and scores the
//     share of query terms it holds;
//   - with an embedder (Config.Index), the query and each item's indexed text are embedded,
//     and the score is (1-w)·cosine + w·(share of terms), w being IndexConfig.TextWeight
//     (0.3). Candidates are the nearest vectors (an HNSW index in memory and on SQLite,
//     pgvector or an exact scan on Postgres) plus the items holding every query term.
//
// Ties are broken by newest update, then namespace and key, so pages are stable.
//
// # Time to live
//
// PutRequest.TTL (or Config.DefaultTTL) makes an item expire. Each Get and each Search that
// returns it restarts its TTL unless Config.NoRefreshOnRead or the request's RefreshTTL says
// otherwise. Expired items are invisible at once; [Sweeper.Sweep] deletes them, and
// Config.SweepInterval runs it in the background.
//
// # Backends
//
// memstore (in memory), sqlitestore (a file, the embedded default) and pgstore (Postgres, for
// several replicas) implement [Store] and [Sweeper] and pass the same conformance suite,
// storetest.Run. The SQL backends keep versioned migrations, run by their Open and exported as
// Migrate(ctx, db) for a trellis migrate command.
//
// Embedders live in package embed: embed.NewLocal works offline, embed.NewOpenAI speaks to
// OpenAI-compatible servers. The store only needs the one-method [Embedder] interface.
package store
