// Package modelbench measures the time the model layer adds to a streamed reply: from the moment
// a provider's chunk arrives on the HTTP connection to the moment the matching model.Chunk leaves
// Stream. Run it with
//
//	go test -run '^$' -bench . ./bench/modelbench/
//
// Each benchmark streams b.N text chunks from a local wire-format server (model/modeltest). The
// server sends one chunk only after the previous one has been consumed, so the last read of the
// response body before a chunk is yielded is that chunk's arrival. The reported p50-ns, p99-ns
// and max-ns are over all chunks of the run; the goal is a p99 under 100µs.
package modelbench
