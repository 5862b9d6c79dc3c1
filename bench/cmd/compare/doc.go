// Command compare sets trellis's graph runtime against LangGraph.js and eino
// on LangGraph's own benchmark workloads, and prints the result as a
// Markdown table.
//
// Run it from the trellis checkout:
//
//	go run ./bench/cmd/compare                       # everything, 5 runs each
//	go run ./bench/cmd/compare -filter sequential_1000 -runs 3
//	go run ./bench/cmd/compare -out /tmp/bench.md    # also write the table to a file
//	go run ./bench/cmd/compare -list                 # the workloads and benchmark names
//
// # What it runs
//
// trellis: the Go benchmarks of package bench (./bench). compare builds its
// test binary once with go test -c, then runs every benchmark in a process
// of its own with -test.run=^$ -test.bench=^BenchmarkX$/^variant$
// -test.benchmem -test.count=N, takes the median of the N ns/op figures and
// the process's peak RSS from the rusage the kernel kept for it. Benchmarks
// that do not exist yet, or a package that does not build, show as
// "missing" with the reason under the table; they do not stop the run.
//
// LangGraph.js: bench/peers/langgraphjs/run.mjs, one node process per
// workload (run.mjs --child), which prints one JSON line with the median of
// its timed runs. compare installs the peer's pinned packages with npm ci
// first when node_modules is missing, and takes the peak RSS from the
// child's rusage like for the Go sides.
//
// eino: the Go benchmarks of the separate module bench/peers/eino, run the
// same way as trellis's, for the workloads eino has a port of.
//
// # Reading the table
//
// "speed-up" is the peer's median over trellis's: 60x means trellis takes a
// sixtieth of the time. "RSS ratio" is trellis's peak RSS over the peer's.
// "goal" checks the targets: against LangGraph.js a speed-up of at
// least 50 and an RSS ratio of at most 0.2; against eino a speed-up above 1.
//
// The workloads themselves are described in docs/benchmarks.md.
package main
