// Package vector is the embedded approximate nearest-neighbour index under the in-memory and
// SQLite stores: cosine similarity over normalized float32 vectors.
//
// An [Index] answers a search one of three ways, each chosen by itself:
//
//   - A sparse query (at most a quarter of its components non-zero, which is what a short text
//     embedded by hashing looks like) is answered exactly by a column scan: the index keeps
//     its vectors twice, by node for the graph and by dimension for this scan, and adds up
//     only the query's non-zero dimensions. Its recall is 1; its cost grows with the corpus
//     and with the number of non-zero components (about 2 ms at 100,000 vectors of 256
//     dimensions for a five-word query). [Options].NoSparseScan or [Index.SetSparseScan] turn
//     it off, to measure the graph.
//   - A dense query (a model provider's embeddings) on an index of fewer than
//     [Options].DenseGraphFrom vectors (a million by default) takes the sketch scan: every
//     vector keeps a 512-bit sign sketch (one bit per hyperplane of fixed pseudo-random
//     rotations), the query counts differing bits against all of them, and the few hundred
//     nearest by that count ([Options].Rerank) are re-scored exactly. Its recall does not
//     depend on how the data is spread (see sketch.go); [Index.SetRerank] trades it for
//     speed, [Index.SetDenseScan] turns the scan off.
//   - A dense query on a larger index walks the HNSW graph (Malkov and Yashunin): the
//     breadth of the walk, [Options].EfSearch, trades recall for speed, and
//     [Index.SetEfSearch] changes it without a rebuild.
//   - [Options].Flat, or [Index.Exact], scans every vector.
//
// Building the graph costs a search per added vector, minutes at 100,000; [Index.SaveGraph]
// writes the graph (not the vectors, which the caller keeps) and [LoadGraph] reads it back
// without computing a distance. The SQLite store saves it in its file this way.
//
//	ix, _ := vector.New(256, nil)
//	_ = ix.Add("doc-1", v)
//	res, _ := ix.Search(q, 10, nil) // []Result{ID, Similarity}, most similar first
//
// Dimensions that do not match give [ErrDimension]; an all-zero vector gives [ErrZeroVector].
package vector
