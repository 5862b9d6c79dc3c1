// Package modelbench measures the time trellis adds to a streamed reply: from the moment a
// provider's chunk arrives on the HTTP connection to the moment the matching text leaves
// trellis. Run it with
//
//	go test -run '^$' -bench . -benchtime 20000x ./bench/modelbench/
//
// Each benchmark streams b.N text chunks from a local wire-format server (model/modeltest). The
// server sends one chunk only after the previous one has been consumed, so the last read of the
// response body before a chunk is yielded is that chunk's arrival. Two layers are measured:
//
//   - *StreamChunkLatency: to the model.Chunk leaving Model.Stream (the model layer);
//   - *ReActChunkLatency: to the messages-mode graph.Event leaving graph.Stream of a ReAct agent
//     (react.New) that runs the same model, so the graph runtime's share is included.
//
// The reported p50-ns, p99-ns and max-ns are over all chunks of the run; the goal is a p99 under
// 100µs. Allocations per op include the in-process test server's.
package modelbench
