// Command serverbench measures trellis's server against the LangGraph.js API server
// (@langchain/langgraph-api, in memory) serving the same graphs: concurrent token streams held
// open, and short runs per second through the HTTP API on SQLite and on Postgres. Run it from the
// trellis checkout:
//
//	go run ./bench/cmd/serverbench                      # everything: 500 and 2,000 streams on both servers, runs/s on all three
//	go run ./bench/cmd/serverbench -only runs           # runs per second only
//	go run ./bench/cmd/serverbench -only streams -streams 2000
//	go run ./bench/cmd/serverbench -only trellis-streams -streams 10000
//	go run ./bench/cmd/serverbench -out /tmp/server.md  # also write the tables to a file
//
// -only takes streams (both servers), runs (all three), or a comma-separated list of
// trellis-streams, langgraphjs-streams, sqlite, postgres and langgraphjs; -streams a number or
// a comma-separated list of them. The report ends each part with the verdict on its goal (issue
// 37): at 2,000 streams trellis's p99 added latency per token at most a tenth of the LangGraph.js
// API server's, every token in order, under 50 KB of live heap per idle stream; short runs at 8
// clients at least 50 times the LangGraph.js API server's on SQLite with a p99 under 30 ms, and 25
// times on Postgres with a p99 under 50 ms.
//
// # How it measures
//
// Each server runs in a process of its own, fresh for each measurement, and the load comes from
// this one, so the memory a server reports is its own: a trellis server is this same binary
// started with -serve (a bench host, see package bench/serverbench), LangGraph.js is node
// --expose-gc bench/peers/langgraphapi/serve.mjs, whose pinned packages are installed with npm
// ci first when node_modules is missing. This process raises its limit on open files as far as
// the hard limit allows before it starts them.
//
// Streams: at each -streams size, that many runs of a ReAct agent whose model writes -tokens
// tokens, -interval apart (20 a second by default), each streamed over SSE in -mode
// (messages-tuple: one event per token), on trellis and then on the LangGraph.js API server
// (stream.mjs: createReactAgent on a fake chat model with the same pacing, a run worker per
// stream). Every token carries the time the model emitted it; the client takes the difference
// on arrival (both processes read the same clock). After -pause tokens every answer waits at a
// gate in its server's process: with all streams open and idle the server's live heap and
// resident memory are read and divided by the streams. Then one request opens the gate, each
// stream resumes at a phase of its own, and the bench checks that every stream brought every
// token in order and that trellis's goroutines and heap went back to their baseline.
//
// Runs per second: -clients clients each send POST /runs/wait (a stateless run of the two-node
// graph "short") and wait for the answer before sending the next, for -warmup then -duration;
// every answer is checked. trellis runs with its defaults (River queue, 64 workers) on SQLite in
// a temporary directory and on Postgres in a database of its own created for the run and
// dropped after it; Postgres is skipped, saying so, when -pg cannot be reached.
//
// The report gives the machine's load average around each measurement: the machine may be
// shared.
package main
