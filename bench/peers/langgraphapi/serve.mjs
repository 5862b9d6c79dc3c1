#!/usr/bin/env node
// Starts the LangGraph.js API server (@langchain/langgraph-api, its in-memory implementation,
// what `langgraphjs dev` runs) on loopback, serving graph.mjs as the graph "short", and prints
//   LISTEN http://127.0.0.1:PORT
// on stdout once it accepts requests. It also serves stream.mjs's graph as "stream" (the
// streams measurement's ReAct agent on a paced model) and its bench routes (GET /bench/stats,
// POST /bench/release) as the API's custom HTTP app. bench/cmd/serverbench starts it and drives
// it with the same Go client as trellis.
//
// Usage: node --expose-gc serve.mjs [--port 0] [--workers 10] [--tokens 40] [--pause 20] [--interval-ms 50]
//   --workers is the API's number of run workers (nWorkers, `--n-jobs-per-worker` of the CLI,
//   10 by default there and here): at most that many runs execute at once, so the streams
//   measurement asks for more than its streams.
//   --tokens, --pause and --interval-ms are the paced model's (see stream.mjs).
//   --expose-gc lets GET /bench/stats?settle=1 collect garbage before it reads the memory.
// Environment: LOG_LEVEL (default "warn" here: the API logs every request at "info", which is
// not what is measured). No license key or LangSmith setting is needed in memory; tracing stays
// off unless LANGSMITH_TRACING is set. The API keeps its state in memory and writes a snapshot
// to <cwd>/.langgraph_api now and then: cwd is a temporary directory, removed at exit.
// It stops on SIGTERM or SIGINT, or when its standard input closes (the driver went away).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    port: { type: "string", default: "0" },
    workers: { type: "string", default: "10" },
    tokens: { type: "string", default: "40" },
    pause: { type: "string", default: "20" },
    "interval-ms": { type: "string", default: "50" },
  },
});
const port = Number.parseInt(args.port, 10);
const nWorkers = Number.parseInt(args.workers, 10);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`serve.mjs: --port ${args.port} is not a port number`);
  process.exit(2);
}
if (!Number.isInteger(nWorkers) || nWorkers < 1) {
  console.error(`serve.mjs: --workers ${args.workers} must be a positive integer`);
  process.exit(2);
}
const tokens = Number.parseInt(args.tokens, 10);
const pause = Number.parseInt(args.pause, 10);
const intervalMs = Number(args["interval-ms"]);
if (!Number.isInteger(tokens) || tokens < 1) {
  console.error(`serve.mjs: --tokens ${args.tokens} must be a positive integer`);
  process.exit(2);
}
if (!Number.isInteger(pause) || pause < 0 || pause >= tokens) {
  console.error(`serve.mjs: --pause ${args.pause} must be 0 (no pause) to --tokens minus one`);
  process.exit(2);
}
if (!Number.isFinite(intervalMs) || intervalMs < 0) {
  console.error(`serve.mjs: --interval-ms ${args["interval-ms"]} must be a non-negative number of milliseconds`);
  process.exit(2);
}
process.env.LOG_LEVEL ??= "warn";
// Read by stream.mjs when the API imports it.
process.env.BENCH_TOKENS = String(tokens);
process.env.BENCH_PAUSE = String(pause);
process.env.BENCH_INTERVAL_MS = String(intervalMs);

// Imported after LOG_LEVEL is set: the API reads it when its logger module loads.
const { startServer } = await import("@langchain/langgraph-api/server");

const cwd = mkdtempSync(join(tmpdir(), "langgraphapi-"));
const graphFile = fileURLToPath(new URL("./graph.mjs", import.meta.url));
const streamFile = fileURLToPath(new URL("./stream.mjs", import.meta.url));
const { host, cleanup } = await startServer({
  port,
  nWorkers,
  host: "127.0.0.1",
  cwd,
  graphs: { short: graphFile + ":graph", stream: streamFile + ":graph" },
  http: { app: streamFile + ":app" },
});

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  try {
    await cleanup();
  } finally {
    rmSync(cwd, { recursive: true, force: true });
    process.exit(0);
  }
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.on("error", stop);
process.stdin.resume();

console.log(`LISTEN http://${host}`);
