// The graph of the streams measurement, as bench/serverbench defines it for trellis (graphs.go,
// paced.go): a ReAct agent without tools whose chat model streams BENCH_TOKENS tokens
// BENCH_INTERVAL_MS apart, each written "i@unixnano " (its index and the wall-clock time it was
// due, in nanoseconds: the answer's start plus one interval per token, and after the gate the
// gate's opening plus the answer's phase, as PacedModel stamps them), and waits idle after BENCH_PAUSE tokens at a gate that
// POST /bench/release opens. Exported here:
//   graph  the agent, served as "stream";
//   app    the bench's routes beside the API (the API's custom HTTP app, `http.app`):
//          GET /bench/stats[?settle=1] and POST /bench/release, as a trellis bench host
//          answers them (bench/serverbench/host.go).
// serve.mjs sets the BENCH_* variables before the API imports this module; the graph and the
// routes are the same module instance, so they share the gate.
import { AIMessage, AIMessageChunk } from "@langchain/core/messages";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatGenerationChunk } from "@langchain/core/outputs";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { Hono } from "hono";

function setting(name, def) {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return def;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < 0) {
    throw new Error(`stream.mjs: ${name}=${raw} is not a non-negative number`);
  }
  return v;
}

const tokens = setting("BENCH_TOKENS", 40);
const pauseAfter = setting("BENCH_PAUSE", 20);
const intervalMs = setting("BENCH_INTERVAL_MS", 50);
if (!Number.isInteger(tokens) || tokens < 1) {
  throw new Error(`stream.mjs: BENCH_TOKENS=${tokens} must be a positive integer`);
}

// The gate: one promise every paused answer awaits, resolved by POST /bench/release, in this
// process as the trellis host's gate is in its own (a closed channel).
let openGate;
let openedAtMs = 0; // when POST /bench/release opened the gate (ms since timeOrigin)
const gate = new Promise((resolve) => {
  openGate = resolve;
});
let waiting = 0;
let resumed = 0;

// sleep waits ms, or rejects when signal aborts (the run was cancelled or its client left).
function sleep(ms, signal) {
  return untilAbort(new Promise((resolve) => setTimeout(resolve, ms)), signal);
}

// untilAbort settles as p does, or rejects when signal aborts first; it leaves no listener
// behind (a run sleeps 40 times on one signal).
function untilAbort(p, signal) {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason ?? new Error("aborted"));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason ?? new Error("aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

// Wall-clock nanoseconds with microsecond resolution: Date.now() has only milliseconds, and the
// driver (Go, CLOCK_REALTIME) subtracts this from the arrival time.
const dueNanos = (ms) => BigInt(Math.round((performance.timeOrigin + ms) * 1000)) * 1000n;

// PacedChatModel is the JS twin of serverbench.PacedModel.
class PacedChatModel extends BaseChatModel {
  _llmType() {
    return "paced";
  }

  // The agent binds its tools, none here: the model is unchanged, as trellis's agent without
  // tools sends none.
  bindTools() {
    return this;
  }

  async _generate(messages, options, runManager) {
    let text = "";
    for await (const chunk of this._streamResponseChunks(messages, options, runManager)) {
      text += chunk.text;
    }
    return { generations: [{ text, message: new AIMessage({ content: text }) }] };
  }

  async *_streamResponseChunks(_messages, options, runManager) {
    // due is when token i is due (ms since timeOrigin); each wait is until then, so a late wake
    // is not carried into the next token's schedule, and the stamp is the schedule, not the wake.
    let due = performance.now();
    for (let i = 0; i < tokens; i++) {
      if (i > 0 && i === pauseAfter) {
        waiting++;
        try {
          await untilAbort(gate, options.signal);
        } finally {
          waiting--;
        }
        // Resume at a phase of our own within one interval, not in step with every other
        // stream (the golden ratio's fractions spread the phases evenly, as PacedModel's do).
        resumed++;
        due = openedAtMs + ((resumed * 0.6180339887498949) % 1) * intervalMs;
      } else {
        due += intervalMs;
      }
      await sleep(Math.max(0, due - performance.now()), options.signal);
      const text = `${i}@${dueNanos(due)} `;
      const chunk = new ChatGenerationChunk({ text, message: new AIMessageChunk({ content: text }) });
      yield chunk;
      await runManager?.handleLLMNewToken(text, undefined, undefined, undefined, undefined, { chunk });
    }
  }
}

export const graph = createReactAgent({ llm: new PacedChatModel({}), tools: [] });

// The process's account of itself in the shape of serverbench.Stats: no goroutines; the live
// heap is V8's used heap plus the memory outside it that JS objects hold (Buffers, such as the
// sockets' and streams' data), after a full collection when settle=1.
export const app = new Hono();
app.get("/bench/stats", (c) => {
  if (c.req.query("settle") === "1") {
    if (typeof globalThis.gc !== "function") {
      return c.text("stream.mjs: settled stats need node --expose-gc (serve.mjs is started so by serverbench)", 500);
    }
    globalThis.gc();
    globalThis.gc();
  }
  const mem = process.memoryUsage();
  const cpu = process.cpuUsage();
  return c.json({
    goroutines: 0,
    heap_alloc: mem.heapUsed + mem.external,
    sys: mem.heapTotal + mem.external,
    stack: 0,
    stack_start: 0,
    rss: mem.rss,
    waiting,
    cpu_ns: (cpu.user + cpu.system) * 1000,
  });
});
app.post("/bench/release", (c) => {
  if (!openedAtMs) openedAtMs = performance.now();
  openGate();
  return c.body(null, 204);
});
