#!/usr/bin/env node
// Starts the LangGraph.js API server (@langchain/langgraph-api, its in-memory implementation,
// what `langgraphjs dev` runs) on loopback, serving graph.mjs as the graph "short", and prints
//   LISTEN http://127.0.0.1:PORT
// on stdout once it accepts requests. bench/cmd/serverbench starts it and drives it with the
// same Go client as trellis.
//
// Usage: node serve.mjs [--port 0] [--workers 10]
//   --workers is the API's number of run workers (nWorkers, `--n-jobs-per-worker` of the CLI,
//   10 by default there and here).
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
process.env.LOG_LEVEL ??= "warn";

// Imported after LOG_LEVEL is set: the API reads it when its logger module loads.
const { startServer } = await import("@langchain/langgraph-api/server");

const cwd = mkdtempSync(join(tmpdir(), "langgraphapi-"));
const graphFile = fileURLToPath(new URL("./graph.mjs", import.meta.url));
const { host, cleanup } = await startServer({
  port,
  nWorkers,
  host: "127.0.0.1",
  cwd,
  graphs: { short: graphFile + ":graph" },
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
