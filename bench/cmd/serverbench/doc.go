// Command serverbench measures trellis's server: concurrent token streams held open, and short
// runs per second through the HTTP API on SQLite and on Postgres against the LangGraph.js API
// server (@langchain/langgraph-api, in memory) serving the same graph. Run it from the trellis
// checkout:
//
//	go run ./bench/cmd/serverbench                      # everything: 10,000 streams, runs/s on all three servers
//	go run ./bench/cmd/serverbench -only runs           # runs per second only
//	go run ./bench/cmd/serverbench -only streams -streams 2000
//	go run ./bench/cmd/serverbench -out /tmp/server.md  # also write the tables to a file
//
// # How it measures
//
// Each server runs in a process of its own and the load comes from this one, so the memory a
// server reports is its own: a trellis server is this same binary started with -serve (a
// bench host, see package bench/serverbench), LangGraph.js is node
// bench/peers/langgraphapi/serve.mjs, whose pinned packages are installed with npm ci first
// when node_modules is missing. Both processes raise their limit on open files as far as the
// hard limit allows.
//
// Streams: -streams runs of a ReAct agent whose model writes -tokens tokens, -interval apart
// (20 a second by default), each streamed over SSE in -mode (messages-tuple: one event per
// token). Every token carries the time the model emitted it; the client takes the difference
// on arrival (both processes read the same clock). After -pause tokens every answer waits at a
// gate: with all streams open and idle the host's live heap and resident memory are read and
// divided by the streams. Then the gate opens, each stream resumes at a phase of its own, and
// the bench checks that every stream brought every token in order and that the host's
// goroutines and heap went back to their baseline.
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
