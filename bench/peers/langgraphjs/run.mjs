#!/usr/bin/env node
// LangGraph.js side of the trellis runtime benchmarks.
//
// The workloads are ports of the Python ones in langchain-ai/langgraph
// (libs/langgraph/bench); docs/benchmarks.md ("Workloads") describes each of
// them and is the reference that the Go port in bench/ follows as well.
//
// Usage:
//   node run.mjs [--filter REGEX] [--runs N] [--warmup N] [--min-time SECONDS] [--budget SECONDS]
//       Runs every selected workload/variant, each in a fresh node process so
//       that the peak RSS it reports belongs to that workload alone, and
//       prints one JSON line per workload/variant on stdout.
//   node run.mjs --list
//       Prints the workload/variant pairs, one per line.
//   node run.mjs --child --workload NAME --variant VARIANT [--runs N] [--warmup N] [--min-time SECONDS] [--budget SECONDS]
//       Runs a single workload/variant in this process (the driver in
//       bench/cmd/compare calls this form directly).
//
// Saver variants: "sqlite" and "postgres" run a workload (react_agent_10x and
// react_agent_100x) on @langchain/langgraph-checkpoint-sqlite (a temporary
// file, WAL) or @langchain/langgraph-checkpoint-postgres (a schema of its own,
// dropped at the end, in the database of TRELLIS_TEST_DATABASE_URL, default
// postgres://postgres@127.0.0.1:5432/test) with durability "sync", a new
// thread per run, and add to the result line "bytes_per_thread": what the
// last run's thread occupies in the database, counted the way
// bench/savers_test.go counts it for trellis (the sum of pg_column_size of the
// thread's rows; on SQLite the sum of the lengths of its rows' columns, 8 per
// integer), and "synchronous", SQLite's synchronous setting in force.
//
// A measurement warms up for at least --warmup runs (1) and --min-time
// seconds (1), then times at least --runs runs (5) and --min-time seconds,
// like a Go benchmark's -benchtime; past --budget seconds (60) it stops as
// soon as it has three runs. The median is over the timed runs.
//
// Each result line looks like
//   {"peer":"langgraphjs","version":"1.7.3","workload":"sequential_1000",
//    "variant":"checkpoint","runs":5,"median_ns":123,"min_ns":100,
//    "max_ns":150,"events":1000,"peak_rss_bytes":123456}
// Errors go to stderr, and the process exits non-zero.

import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import {
  Annotation,
  END,
  MemorySaver,
  MessagesAnnotation,
  START,
  Send,
  StateGraph,
  entrypoint,
  task,
} from "@langchain/langgraph";
import { InMemoryCache } from "@langchain/langgraph-checkpoint";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

const SCRIPT = fileURLToPath(import.meta.url);
const LANGGRAPH_VERSION = JSON.parse(
  readFileSync(
    new URL("./node_modules/@langchain/langgraph/package.json", import.meta.url),
    "utf8",
  ),
).version;

const LETTERS = "abcdefghijklmnopqrstuvwxyz";

function randomLetters(n) {
  let s = "";
  for (let i = 0; i < n; i++) s += LETTERS[Math.floor(Math.random() * 26)];
  return s;
}

// ---------------------------------------------------------------------------
// sequential_N: N no-op nodes in a chain over a messages state.

function sequential(n) {
  const builder = new StateGraph(MessagesAnnotation);
  const noop = () => undefined;
  let prev = START;
  for (let i = 0; i < n; i++) {
    const name = `node_${i}`;
    builder.addNode(name, noop);
    builder.addEdge(prev, name);
    prev = name;
  }
  builder.addEdge(prev, END);
  return builder;
}

// ---------------------------------------------------------------------------
// fanout_to_subgraph_Nx: START sends every subject to a subgraph node.

function fanoutToSubgraph() {
  const JokeInput = Annotation.Root({ subject: Annotation() });
  const JokeOutput = Annotation.Root({ jokes: Annotation() });
  const JokeState = Annotation.Root({
    subject: Annotation(),
    jokes: Annotation(),
  });

  const sub = new StateGraph({
    stateSchema: JokeState,
    input: JokeInput,
    output: JokeOutput,
  })
    .addNode("edit", (s) => ({ subject: `${s.subject} - hohoho` }))
    .addNode("generate", (s) => ({ jokes: [`Joke about ${s.subject}`] }))
    .addNode("bump", (s) => ({ jokes: [s.jokes[0] + " a"] }))
    .addEdge(START, "edit")
    .addEdge("edit", "generate")
    .addEdge("generate", "bump")
    .addConditionalEdges("bump", (s) =>
      s.jokes[0].endsWith(" a".repeat(10)) ? END : "bump",
    )
    // The Python original also marks generate as a finish point; an edge to
    // END triggers nothing, so it changes no behaviour.
    .addEdge("generate", END)
    .compile();

  const Overall = Annotation.Root({
    subjects: Annotation(),
    jokes: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  });
  return new StateGraph(Overall)
    .addNode("generate_joke", sub)
    .addConditionalEdges(START, (s) =>
      s.subjects.map((subject) => new Send("generate_joke", { subject })),
    )
    .addEdge("generate_joke", END);
}

function fanoutInput(n) {
  const subjects = [];
  for (let i = 0; i < n; i++) subjects.push(randomLetters(1000));
  return { subjects };
}

// ---------------------------------------------------------------------------
// static_fanout_N: START has a static edge to each of N workers, worker i
// appends "result i" to results, and a collect node joins them all. Not a
// LangGraph benchmark: trellis and the eino peer run it too.

function staticFanout(n) {
  const State = Annotation.Root({
    results: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  });
  const builder = new StateGraph(State);
  const workers = [];
  for (let i = 0; i < n; i++) {
    const name = `worker_${i}`;
    builder.addNode(name, () => ({ results: [`result ${i}`] }));
    builder.addEdge(START, name);
    workers.push(name);
  }
  builder.addNode("collect", () => undefined);
  builder.addEdge(workers, "collect");
  builder.addEdge("collect", END);
  return builder;
}

// ---------------------------------------------------------------------------
// react_agent_Nx: the prebuilt ReAct agent with a scripted model.

// ScriptedChatModel replays its responses in order and starts over after the
// last one, like FakeMessagesListChatModel in the Python benchmark.
class ScriptedChatModel extends BaseChatModel {
  constructor(responses) {
    super({});
    this.responses = responses;
    this.i = 0;
  }

  _llmType() {
    return "scripted";
  }

  bindTools() {
    return this;
  }

  async _generate() {
    const r = this.responses[this.i];
    this.i = this.i < this.responses.length - 1 ? this.i + 1 : 0;
    const message = new AIMessage({
      content: r.content,
      tool_calls: r.tool_calls,
      id: r.id,
    });
    return { generations: [{ message, text: r.content }] };
  }
}

function reactAgent(nTools, checkpointer) {
  const searchTool = tool(
    ({ query }) => `result for query: ${query}`.repeat(10),
    {
      name: randomUUID(),
      description: "",
      schema: z.object({ query: z.string() }),
    },
  );
  const responses = [];
  for (let i = 0; i < nTools; i++) {
    responses.push({
      content: "",
      tool_calls: [
        {
          id: randomUUID(),
          name: searchTool.name,
          args: { query: randomUUID().repeat(100) },
          type: "tool_call",
        },
      ],
      id: randomUUID(),
    });
  }
  responses.push({ content: "answer".repeat(100), id: randomUUID() });
  return createReactAgent({
    llm: new ScriptedChatModel(responses),
    tools: [searchTool],
    checkpointer,
    // Python's create_react_agent defaults to v2: one Send per tool call.
    version: "v2",
  });
}

// ---------------------------------------------------------------------------
// wide_state_IxJ_n: six nodes, a join and a loop over 15 state keys.

// pyTruthy follows Python's truth rules, which the original reducers rely on.
function pyTruthy(v) {
  if (v === null || v === undefined || v === false || v === 0 || v === "")
    return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === "object") return Object.keys(v).length > 0;
  return true;
}

const concat = (a, b) => a.concat(b);
const present = (x, y) => (y !== null && y !== undefined ? y : x);
const union = (a, b) => ({ ...a, ...b });

function wideState(n) {
  const State = Annotation.Root({
    messages: Annotation({ reducer: concat, default: () => [] }),
    trigger_events: Annotation({ reducer: concat, default: () => [] }),
    primary_issue_medium: Annotation({
      reducer: (x, y) => (pyTruthy(y) ? y : x),
      default: () => "email",
    }),
    autoresponse: Annotation({ reducer: (_, y) => y, default: () => null }),
    issue: Annotation({
      reducer: (x, y) => (pyTruthy(y) ? y : x),
      default: () => null,
    }),
    relevant_rules: Annotation(),
    memory_docs: Annotation(),
    categorizations: Annotation({ reducer: concat, default: () => [] }),
    responses: Annotation({ reducer: concat, default: () => [] }),
    user_info: Annotation({ reducer: present, default: () => null }),
    crm_info: Annotation({ reducer: present, default: () => null }),
    email_thread_id: Annotation({ reducer: present, default: () => null }),
    slack_participants: Annotation({ reducer: union, default: () => ({}) }),
    bot_id: Annotation(),
    notified_assignees: Annotation({ reducer: union, default: () => ({}) }),
  });

  const listFields = new Set([
    "messages",
    "trigger_events",
    "categorizations",
    "responses",
    "memory_docs",
    "relevant_rules",
  ]);
  const dictFields = new Set([
    "user_info",
    "crm_info",
    "slack_participants",
    "notified_assignees",
    "autoresponse",
    "issue",
  ]);

  const readWrite = (read, write) => (state) => {
    let val = state[read];
    if (typeof val === "string") val = { [val]: val };
    const single = Array.isArray(val) ? val[val.length - 1] : val;
    const list = Array.isArray(val) ? val : [val];
    const out = {};
    for (const k of write) {
      if (listFields.has(k)) out[k] = list;
      else if (dictFields.has(k)) out[k] = single;
      else out[k] = randomLetters(n);
    }
    return out;
  };

  return new StateGraph(State)
    .addNode("one", readWrite("messages", ["trigger_events", "primary_issue_medium"]))
    .addNode("two", readWrite("trigger_events", ["autoresponse", "issue"]))
    .addNode("three", readWrite("autoresponse", ["relevant_rules"]))
    .addNode(
      "four",
      readWrite("trigger_events", ["categorizations", "responses", "memory_docs"]),
    )
    .addNode(
      "five",
      readWrite("categorizations", [
        "user_info",
        "crm_info",
        "email_thread_id",
        "slack_participants",
        "bot_id",
        "notified_assignees",
      ]),
    )
    .addNode("six", readWrite("responses", ["messages"]))
    .addEdge(START, "one")
    .addEdge("one", "two")
    .addEdge("two", "three")
    .addEdge("two", "four")
    .addEdge(["three", "four"], "five")
    .addEdge("five", "six")
    .addConditionalEdges("six", (s) => (s.messages.length > n ? END : "one"));
}

// wideInput builds {messages: [doc]} where doc maps outer keys "0000000000",
// "1111111111", ... (outer of them) to objects mapping inner keys the same
// way to a 25-element list.
function wideInput(outer, inner) {
  const doc = {};
  for (let i = 0; i < outer; i++) {
    const o = {};
    for (let j = 0; j < inner; j++) {
      const list = [];
      for (let r = 0; r < 5; r++)
        list.push("hi?".repeat(10), true, 1, 6327816386138, null);
      o[String(j).repeat(10)] = list;
    }
    doc[String(i).repeat(10)] = o;
  }
  return { messages: [doc] };
}

// ---------------------------------------------------------------------------
// functional_tasks_N: an entrypoint calls the task add_one N times, each on
// the last one's result.

function functionalTasks(n, checkpointer) {
  const addOne = task("add_one", async (x) => x + 1);
  return entrypoint({ name: "chain", checkpointer }, async (x) => {
    let v = x;
    for (let i = 0; i < n; i++) v = await addOne(v);
    return v;
  });
}

// ---------------------------------------------------------------------------
// cached_sequential_N: N nodes in a chain, each adding one to a counter, each
// with a cache policy keyed by its input, over an in-memory cache; after the
// first run (a warm-up) every node is a cache hit.

const CounterAnnotation = Annotation.Root({ count: Annotation() });

function cachedSequential(n) {
  const builder = new StateGraph(CounterAnnotation);
  const inc = (s) => ({ count: s.count + 1 });
  let prev = START;
  for (let i = 0; i < n; i++) {
    const name = `node_${i}`;
    builder.addNode(name, inc, { cachePolicy: {} });
    builder.addEdge(prev, name);
    prev = name;
  }
  builder.addEdge(prev, END);
  return builder;
}

// ---------------------------------------------------------------------------
// The table of workloads. build(checkpointer) returns a compiled graph,
// input() the input of every run, check(finalValues, events) throws when a
// run did not do what the workload says.

function expectEqual(what, got, want) {
  if (got !== want) throw new Error(`${what}: got ${got}, want ${want}`);
}

const WORKLOADS = {};

for (const n of [10, 1000]) {
  WORKLOADS[`sequential_${n}`] = {
    build: (cp) => sequential(n).compile({ checkpointer: cp }),
    input: () => ({ messages: [] }),
    check: (values, events) => {
      expectEqual("events", events, n);
      expectEqual("messages", values.messages.length, 0);
    },
  };
}
WORKLOADS.sequential_1000_first_event = {
  ...WORKLOADS.sequential_1000,
  firstEvent: true,
};

for (const n of [10, 100]) {
  WORKLOADS[`fanout_to_subgraph_${n}x`] = {
    build: (cp) => fanoutToSubgraph().compile({ checkpointer: cp }),
    input: () => fanoutInput(n),
    check: (values, events) => {
      expectEqual("events", events, n);
      expectEqual("jokes", values.jokes.length, n);
      for (const j of values.jokes) {
        if (!j.startsWith("Joke about ") || !j.endsWith(" - hohoho" + " a".repeat(10)))
          throw new Error(`unexpected joke ${JSON.stringify(j.slice(-40))}`);
      }
    },
  };
}

WORKLOADS.static_fanout_100 = {
  build: (cp) => staticFanout(100).compile({ checkpointer: cp }),
  input: () => ({ results: [] }),
  check: (values, events) => {
    expectEqual("events", events, 101);
    expectEqual("results", values.results.length, 100);
  },
};

for (const n of [10, 100]) {
  WORKLOADS[`react_agent_${n}x`] = {
    build: (cp) => reactAgent(n, cp),
    input: () => ({ messages: [new HumanMessage("hi?")] }),
    check: (values, events) => {
      // agent and tools alternate n times, then the final answer.
      expectEqual("events", events, 2 * n + 1);
      expectEqual("messages", values.messages.length, 2 * n + 2);
      expectEqual("answer", values.messages.at(-1).content, "answer".repeat(100));
    },
  };
}

for (const [name, outer, inner, n] of [
  ["wide_state_25x300", 5, 5, 300],
  ["wide_state_15x600", 3, 5, 600],
  ["wide_state_9x1200", 3, 3, 1200],
]) {
  WORKLOADS[name] = {
    build: (cp) => wideState(n).compile({ checkpointer: cp }),
    input: () => wideInput(outer, inner),
    check: (values, events) => {
      // Per loop: one, two, three, four, five, six = 6 update events.
      if (events % 6 !== 0) throw new Error(`events: ${events} is not a multiple of 6`);
      if (values.messages.length <= n)
        throw new Error(`messages: ${values.messages.length}, want more than ${n}`);
    },
  };
}

WORKLOADS.functional_tasks_100 = {
  build: (cp) => functionalTasks(100, cp),
  input: () => 0,
  check: (value, events) => {
    // One update per task call, and the entrypoint's.
    expectEqual("events", events, 101);
    expectEqual("value", value, 100);
  },
};

WORKLOADS.cached_sequential_100 = {
  build: (cp) => cachedSequential(100).compile({ checkpointer: cp, cache: new InMemoryCache() }),
  input: () => ({ count: 0 }),
  check: (values, events) => {
    expectEqual("events", events, 100);
    expectEqual("count", values.count, 100);
  },
};

const VARIANTS = ["nocheckpoint", "checkpoint"];
// SAVER_VARIANTS run only on the workloads of SAVER_WORKLOADS.
const SAVER_VARIANTS = ["sqlite", "postgres"];
const SAVER_WORKLOADS = ["react_agent_10x", "react_agent_100x"];

function variantsOf(workload) {
  return SAVER_WORKLOADS.includes(workload) ? [...VARIANTS, ...SAVER_VARIANTS] : VARIANTS;
}

function pairs(filter) {
  const out = [];
  for (const w of Object.keys(WORKLOADS)) {
    for (const v of variantsOf(w)) {
      const id = `${w}/${v}`;
      if (!filter || filter.test(id)) out.push([w, v]);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Measuring.

// durability is "exit" like LangGraph's driver, or "sync" for the saver
// variants; set once by child().
let durability = "exit";
// lastThread is the thread of the latest run, whose size the saver variants
// report.
let lastThread = "";

function streamConfig(extra) {
  lastThread = randomUUID();
  return {
    configurable: { thread_id: lastThread },
    recursionLimit: 1_000_000_000,
    durability,
    streamMode: "updates",
    ...extra,
  };
}

// runToEnd streams every event of one run, as LangGraph's own driver does,
// and returns how many there were.
async function runToEnd(graph, input) {
  let events = 0;
  for await (const _ of await graph.stream(input, streamConfig())) events++;
  return events;
}

// runFirstEvent stops at the first event and closes the stream.
async function runFirstEvent(graph, input) {
  const controller = new AbortController();
  const stream = await graph.stream(input, streamConfig({ signal: controller.signal }));
  let events = 0;
  for await (const _ of stream) {
    events++;
    break;
  }
  controller.abort();
  return events;
}

async function child({ workload, variant, runs, warmup, budget, minTime }) {
  const w = WORKLOADS[workload];
  if (!w) {
    throw new Error(
      `unknown workload ${JSON.stringify(workload)}; run with --list to see the workloads`,
    );
  }
  if (!variantsOf(workload).includes(variant)) {
    throw new Error(
      `unknown variant ${JSON.stringify(variant)} for ${workload}; want one of ${variantsOf(workload).join(", ")}`,
    );
  }
  let saver;
  if (SAVER_VARIANTS.includes(variant)) {
    saver = await openSaver(variant);
    durability = "sync";
  }
  try {
    return await measure(w, workload, variant, saver, { runs, warmup, budget, minTime });
  } finally {
    if (saver) await saver.close();
  }
}

// ---------------------------------------------------------------------------
// The durable savers.

function databaseURL() {
  return process.env.TRELLIS_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
}

// openSaver returns { checkpointer, bytesOf(thread), synchronous, close() }.
async function openSaver(variant) {
  if (variant === "sqlite") {
    const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
    const dir = mkdtempSync(join(tmpdir(), "lgjs-saver-"));
    const checkpointer = SqliteSaver.fromConnString(join(dir, "checkpoints.db"));
    checkpointer.setup();
    const db = checkpointer.db;
    const synchronous = ["OFF", "NORMAL", "FULL", "EXTRA"][db.pragma("synchronous", { simple: true })];
    // Every column's length, 8 bytes per integer, as bench/savers_test.go
    // counts trellis's rows.
    const size = db.prepare(`
SELECT (SELECT coalesce(sum(length(thread_id) + length(checkpoint_ns) + length(checkpoint_id)
          + coalesce(length(parent_checkpoint_id), 0) + coalesce(length(type), 0)
          + coalesce(length(checkpoint), 0) + coalesce(length(metadata), 0)), 0)
          FROM checkpoints WHERE thread_id = @thread)
     + (SELECT coalesce(sum(length(thread_id) + length(checkpoint_ns) + length(checkpoint_id)
          + length(task_id) + 8 + length(channel) + coalesce(length(type), 0)
          + coalesce(length(value), 0)), 0)
          FROM writes WHERE thread_id = @thread) AS n`);
    return {
      checkpointer,
      synchronous,
      bytesOf: async (thread) => size.get({ thread }).n,
      close: async () => {
        db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const { PostgresSaver } = await import("@langchain/langgraph-checkpoint-postgres");
  const schema = `lgjs_bench_${process.pid}`;
  const checkpointer = PostgresSaver.fromConnString(databaseURL(), { schema });
  // The saver's own pool also measures and drops the schema.
  const pool = checkpointer.pool;
  try {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } catch (e) {
    await checkpointer.end();
    throw new Error(
      `Postgres unreachable at ${databaseURL()} (${e.message}); start it or set TRELLIS_TEST_DATABASE_URL`,
    );
  }
  await checkpointer.setup(); // creates the schema and the tables
  const size = `
SELECT (SELECT coalesce(sum(pg_column_size(c.*)), 0) FROM ${schema}.checkpoints c WHERE c.thread_id = $1)
     + (SELECT coalesce(sum(pg_column_size(b.*)), 0) FROM ${schema}.checkpoint_blobs b WHERE b.thread_id = $1)
     + (SELECT coalesce(sum(pg_column_size(w.*)), 0) FROM ${schema}.checkpoint_writes w WHERE w.thread_id = $1) AS n`;
  return {
    checkpointer,
    synchronous: "",
    bytesOf: async (thread) => Number((await pool.query(size, [thread])).rows[0].n),
    close: async () => {
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await checkpointer.end();
    },
  };
}

async function measure(w, workload, variant, saver, { runs, warmup, budget, minTime }) {
  const cp = saver ? saver.checkpointer : variant === "checkpoint" ? new MemorySaver() : undefined;
  const graph = w.build(cp);
  const input = w.input();

  // One checked run first: it is also the first warm-up.
  const values = await graph.invoke(input, streamConfig({ streamMode: "values" }));
  const checkEvents = await runToEnd(graph, input);
  w.check(values, checkEvents);

  const once = w.firstEvent ? runFirstEvent : runToEnd;
  const now = () => process.hrtime.bigint();
  const seconds = (x) => BigInt(Math.round(x * 1e9));

  // Warm up the JIT: at least `warmup` runs and `minTime` seconds, within
  // the budget.
  let t0 = now();
  for (let i = 1; i < warmup || (now() - t0 < seconds(minTime) && now() - t0 < seconds(budget)); i++)
    await once(graph, input);

  // Timed runs: at least `runs` of them and `minTime` seconds, at most
  // 10000; past the budget, stop as soon as there are three.
  const times = [];
  let events = 0;
  t0 = now();
  while (times.length < 10000) {
    const start = now();
    events = await once(graph, input);
    const end = now();
    times.push(Number(end - start));
    const spent = end - t0;
    if (times.length >= runs && spent >= seconds(minTime)) break;
    if (times.length >= 3 && spent > seconds(budget)) break;
  }
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  const median =
    times.length % 2 === 1 ? times[mid] : Math.round((times[mid - 1] + times[mid]) / 2);
  return {
    peer: "langgraphjs",
    version: LANGGRAPH_VERSION,
    workload,
    variant,
    runs: times.length,
    median_ns: median,
    min_ns: times[0],
    max_ns: times.at(-1),
    events,
    peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
    ...(saver && {
      bytes_per_thread: await saver.bytesOf(lastThread),
      durability,
      synchronous: saver.synchronous || undefined,
    }),
  };
}

function runChildProcess(workload, variant, opts) {
  return new Promise((resolve) => {
    const args = [
      SCRIPT,
      "--child",
      "--workload", workload,
      "--variant", variant,
      "--runs", String(opts.runs),
      "--warmup", String(opts.warmup),
      "--budget", String(opts.budget),
      "--min-time", String(opts.minTime),
    ];
    const p = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.on("close", (code) => {
      if (code === 0) {
        process.stdout.write(out);
        resolve(true);
      } else {
        process.stderr.write(`${workload}/${variant}: child exited with ${code}\n`);
        resolve(false);
      }
    });
  });
}

function positiveInt(name, s, min) {
  const v = Number(s);
  if (!Number.isInteger(v) || v < min)
    throw new Error(`--${name} ${JSON.stringify(s)}: want an integer of at least ${min}`);
  return v;
}

async function main() {
  const { values: a } = parseArgs({
    options: {
      child: { type: "boolean", default: false },
      list: { type: "boolean", default: false },
      workload: { type: "string" },
      variant: { type: "string", default: "nocheckpoint" },
      filter: { type: "string" },
      runs: { type: "string", default: "5" },
      warmup: { type: "string", default: "1" },
      budget: { type: "string", default: "60" },
      "min-time": { type: "string", default: "1" },
    },
  });
  const opts = {
    runs: positiveInt("runs", a.runs, 1),
    warmup: positiveInt("warmup", a.warmup, 1),
    budget: Number(a.budget),
    minTime: Number(a["min-time"]),
  };
  if (!(opts.minTime >= 0))
    throw new Error(`--min-time ${JSON.stringify(a["min-time"])}: want a number of seconds, 0 or more`);
  if (!(opts.budget > 0))
    throw new Error(`--budget ${JSON.stringify(a.budget)}: want a positive number of seconds`);

  if (a.list) {
    for (const [w, v] of pairs()) console.log(`${w}/${v}`);
    return;
  }
  if (a.child) {
    if (!a.workload) throw new Error("--child needs --workload; run with --list to see them");
    const r = await child({ workload: a.workload, variant: a.variant, ...opts });
    console.log(JSON.stringify(r));
    return;
  }
  let filter;
  if (a.filter) {
    try {
      filter = new RegExp(a.filter);
    } catch (e) {
      throw new Error(`--filter ${JSON.stringify(a.filter)}: ${e.message}`);
    }
  }
  const selected = pairs(filter);
  if (selected.length === 0)
    throw new Error(`--filter ${JSON.stringify(a.filter)} matches no workload; run with --list`);
  let failed = 0;
  for (const [w, v] of selected) {
    if (!(await runChildProcess(w, v, opts))) failed++;
  }
  if (failed > 0) throw new Error(`${failed} of ${selected.length} workloads failed`);
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`langgraphjs bench: ${e.message}\n`);
    process.exit(1);
  },
);
