// Drives a trellis server with the official LangGraph JS SDK, unchanged.
// Usage: node e2e.mjs http://127.0.0.1:PORT
// The Go test TestSDKEndToEnd starts the server (graphs "flow", "slow", "example" and others) and runs
// this script; every check throws on failure, and the script prints "sdk e2e: ok" at the end.
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";

const client = new Client({ apiUrl: process.argv[2], apiKey: process.env.TRELLIS_E2E_KEY });
const step = (name) => console.log("- " + name);

// Assistants.
step("assistants");
const assistants = await client.assistants.search({ limit: 10 });
const ids = assistants.map((a) => a.graph_id).sort();
assert.deepEqual(ids, ["asking", "example", "flow", "nested", "personal", "reviewed", "slow"]);
const flow = assistants.find((a) => a.graph_id === "flow");
assert.equal((await client.assistants.get(flow.assistant_id)).graph_id, "flow");
const drawn = await client.assistants.getGraph(flow.assistant_id, { xray: true });
assert.deepEqual(drawn.nodes.map((n) => n.id), ["__start__", "plan", "approve", "act", "__end__"]);
const schemas = await client.assistants.getSchemas("flow");
assert.ok(schemas.state_schema.properties.steps, "state schema lists steps");
await assert.rejects(client.assistants.get("no-such-assistant"), /404/);
assert.deepEqual(Object.keys(await client.assistants.getSubgraphs("nested")), ["inner"]);
const nestedAll = await client.assistants.getSubgraphs("nested", { recurse: true });
assert.deepEqual(Object.keys(nestedAll).sort(), ["inner", "inner|deep"]);
assert.equal(nestedAll["inner|deep"].state_schema.title, "deepState");
const deepOnly = await client.assistants.getSubgraphs("nested", { namespace: "inner|deep" });
assert.deepEqual(Object.keys(deepOnly), ["inner|deep"]);
await assert.rejects(client.assistants.getSubgraphs("nested", { namespace: "nope" }), /404/);

// Assistants created through the API: versions, latest, count, a run on one, delete.
step("assistants create, update, versions, delete");
const mine = await client.assistants.create({
  graphId: "flow", name: "careful", description: "asks first",
  config: { configurable: { tone: "calm", model: "a" } }, context: { lang: "fr" }, metadata: { team: "sdk" },
});
assert.equal(mine.graph_id, "flow");
assert.equal(mine.version, 1);
assert.equal(mine.name, "careful");
assert.equal((await client.assistants.get(mine.assistant_id)).description, "asks first");
const same = await client.assistants.create({ graphId: "flow", assistantId: mine.assistant_id, ifExists: "do_nothing" });
assert.equal(same.assistant_id, mine.assistant_id);
await assert.rejects(client.assistants.create({ graphId: "flow", assistantId: mine.assistant_id }), /409/);
await assert.rejects(client.assistants.create({ graphId: "no-such-graph" }), /400/);
const v2 = await client.assistants.update(mine.assistant_id, { metadata: { owner: "kim" }, config: { configurable: { tone: "brisk" } } });
assert.equal(v2.version, 2);
assert.equal(v2.metadata.team, "sdk");
assert.equal(v2.metadata.owner, "kim");
const versions = await client.assistants.getVersions(mine.assistant_id);
assert.deepEqual(versions.map((v) => v.version), [2, 1]);
const back = await client.assistants.setLatest(mine.assistant_id, 1);
assert.equal(back.version, 1);
assert.equal(back.config.configurable.tone, "calm");
assert.equal(await client.assistants.count({ graphId: "flow" }), 2);
assert.equal(await client.assistants.count({ metadata: { team: "sdk" } }), 1);
const page = await client.assistants.search({ limit: 2, sortBy: "graph_id", sortOrder: "asc", includePagination: true });
assert.deepEqual(page.assistants.map((a) => a.graph_id), ["asking", "example"]);
assert.equal(page.next, "2");
const onMine = await client.threads.create();
const mineRun = await client.runs.create(onMine.thread_id, mine.assistant_id, {
  input: { topic: "mine" }, config: { configurable: { model: "b" } },
});
const mineOut = await client.runs.join(onMine.thread_id, mineRun.run_id);
assert.equal(mineOut.__interrupt__[0].value.question, "approve mine?");
const mineKw = (await client.runs.get(onMine.thread_id, mineRun.run_id)).kwargs;
assert.deepEqual(mineKw.config.configurable, { tone: "calm", model: "b" }, "the assistant's config under the run's");
assert.deepEqual(mineKw.context, { lang: "fr" });
await client.assistants.delete(mine.assistant_id, { deleteThreads: true });
await assert.rejects(client.assistants.get(mine.assistant_id), /404/);
await assert.rejects(client.threads.get(onMine.thread_id), /404/);

// Threads.
step("threads");
const thread = await client.threads.create({ metadata: { owner: "sdk" } });
assert.equal(thread.status, "idle");
const again = await client.threads.create({ threadId: thread.thread_id, ifExists: "do_nothing" });
assert.equal(again.thread_id, thread.thread_id);
await client.threads.update(thread.thread_id, { metadata: { topic: "units" } });
const got = await client.threads.get(thread.thread_id);
assert.equal(got.metadata.owner, "sdk");
assert.equal(got.metadata.topic, "units");
const found = await client.threads.search({ metadata: { owner: "sdk" } });
assert.equal(found.length, 1);
assert.equal(await client.threads.count({ metadata: { owner: "sdk" } }), 1);
const newest = await client.threads.search({ sortBy: "updated_at", sortOrder: "desc", limit: 1 });
assert.equal(newest[0].thread_id, thread.thread_id, "the thread just updated sorts first by updated_at");
await assert.rejects(client.threads.search({ sortBy: "colour" }), /400/);
const seeded = await client.threads.create({
  graphId: "flow",
  supersteps: [{ updates: [{ values: { topic: "seeded", steps: ["plan"] }, asNode: "plan" }] }],
});
const seededState = await client.threads.getState(seeded.thread_id);
assert.equal(seededState.values.topic, "seeded");
assert.deepEqual(seededState.next, ["approve"]);

// Streaming a run with several modes.
step("runs.stream");
let created;
const events = [];
for await (const chunk of client.runs.stream(thread.thread_id, "example", {
  input: { messages: [{ role: "user", content: "What time is it in Tokyo?" }] },
  streamMode: ["values", "updates", "messages-tuple"],
  onRunCreated: (meta) => { created = meta; },
})) {
  events.push(chunk);
}
assert.equal(events[0].event, "metadata");
assert.ok(created && created.run_id === events[0].data.run_id, "onRunCreated saw the run from Content-Location");
assert.ok(events.some((e) => e.event === "updates"));
assert.ok(events.some((e) => e.event === "messages" && Array.isArray(e.data) && e.data.length === 2));
const lastValues = events.filter((e) => e.event === "values").at(-1).data;
assert.match(lastValues.messages.at(-1).content, /Tokyo/);

// Messages leave in LangChain's shape: type, and tool_calls[].args as an object.
step("LangChain messages");
const msgs = lastValues.messages;
assert.equal(msgs[0].type, "human");
assert.equal(msgs[0].content, "What time is it in Tokyo?");
assert.equal(msgs[0].role, undefined, "no trellis role field");
const caller = msgs.find((m) => m.type === "ai" && m.tool_calls.length > 0);
assert.ok(caller, "an ai message with tool calls");
const call = caller.tool_calls[0];
assert.equal(call.type, "tool_call");
assert.equal(typeof call.args, "object");
assert.ok(!Array.isArray(call.args) && call.args !== null);
assert.equal(call.arguments, undefined);
const answer = msgs.find((m) => m.type === "tool");
assert.equal(answer.tool_call_id, call.id);
assert.equal(answer.name, call.name);
assert.equal(msgs.at(-1).type, "ai");
const tuple = events.find((e) => e.event === "messages");
assert.equal(tuple.data[0].type, "AIMessageChunk");
assert.ok(Array.isArray(tuple.data[0].tool_call_chunks));
assert.equal(typeof tuple.data[1].langgraph_node, "string");
assert.equal(typeof tuple.data[1].langgraph_step, "number");
// The tuple's metadata is LangGraph's: the run's IDs and where in the graph the chunk was written.
assert.equal(tuple.data[1].run_id, created.run_id);
assert.equal(tuple.data[1].thread_id, thread.thread_id);
assert.equal(tuple.data[1].graph_id, "example");
assert.equal(tuple.data[1].assistant_id, (await client.assistants.get("example")).assistant_id);
assert.deepEqual(tuple.data[1].langgraph_triggers, ["branch:to:" + tuple.data[1].langgraph_node]);
assert.deepEqual(tuple.data[1].langgraph_path, ["__pregel_pull", tuple.data[1].langgraph_node]);
assert.match(tuple.data[1].langgraph_checkpoint_ns, new RegExp("^" + tuple.data[1].langgraph_node + ":"));
const upd = events.find((e) => e.event === "updates" && e.data.tools);
assert.equal(upd.data.tools.messages[0].type, "tool");
const st = await client.threads.getState(thread.thread_id);
assert.deepEqual(st.values.messages.map((m) => m.type), msgs.map((m) => m.type));
const hist = await client.threads.getHistory(thread.thread_id, { limit: 1 });
assert.equal(hist[0].values.messages.at(-1).type, "ai");
// Input in LangChain's shape (and a [type, content] pair) on the same thread.
const second = await client.runs.wait(thread.thread_id, "example", {
  input: { messages: [{ type: "human", content: "Convert 42 km to miles" }, ["user", "thanks"]] },
});
const tail = second.messages.slice(msgs.length);
assert.equal(tail[0].type, "human");
assert.equal(tail[0].content, "Convert 42 km to miles");
assert.equal(tail[1].type, "human");
assert.equal(tail[1].content, "thanks");
assert.equal(tail.at(-1).type, "ai");

// The events mode: LangChain callback events, a tool's start before its end.
step("runs.stream events");
const cb = [];
for await (const chunk of client.runs.stream(null, "example", {
  input: { messages: [{ role: "user", content: "What time is it in Tokyo?" }] },
  streamMode: "events", metadata: { via: "sdk" },
})) {
  if (chunk.event === "events") cb.push(chunk.data);
}
const toolStart = cb.findIndex((e) => e.event === "on_tool_start");
const toolEnd = cb.findIndex((e) => e.event === "on_tool_end");
assert.ok(toolStart >= 0 && toolEnd > toolStart, "on_tool_start comes before on_tool_end");
assert.equal(cb[toolStart].run_id, cb[toolEnd].run_id);
assert.equal(cb[toolEnd].data.output.type, "tool");
assert.equal(cb[toolStart].metadata.via, "sdk");
assert.equal(cb[0].event, "on_chain_start");
assert.equal(cb.at(-1).event, "on_chain_end");
const modelStart = cb.find((e) => e.event === "on_chat_model_start");
assert.ok(modelStart.data.input.messages[0].some((m) => m.type === "human" && String(m.content).includes("Tokyo")),
  "on_chat_model_start carries the prompt");

// Stateless wait.
step("runs.wait (stateless)");
const stateless = await client.runs.wait(null, "flow", { input: { topic: "tea" }, interruptBefore: ["approve"] });
assert.deepEqual(stateless.steps, ["plan"]);

// Background run, join, interrupt and resume.
step("background run, join, interrupt, resume");
const t2 = await client.threads.create();
const run = await client.runs.create(t2.thread_id, "flow", { input: { topic: "launch" }, streamResumable: true });
assert.equal(run.status, "pending");
const joined = await client.runs.join(t2.thread_id, run.run_id);
assert.equal(joined.__interrupt__.length, 1);
assert.equal(joined.__interrupt__[0].value.question, "approve launch?");
const state = await client.threads.getState(t2.thread_id);
assert.deepEqual(state.next, ["approve"]);
assert.equal(state.tasks[0].interrupts.length, 1);
assert.equal((await client.threads.get(t2.thread_id)).status, "interrupted");
const replay = [];
for await (const chunk of client.runs.joinStream(t2.thread_id, run.run_id, { lastEventId: "2" })) {
  replay.push(chunk);
}
assert.equal(replay[0].id, "3", "joinStream resumes after Last-Event-ID");
const resumed = await client.runs.wait(t2.thread_id, "flow", { command: { resume: "approved" } });
assert.equal(resumed.approved, "approved");
assert.deepEqual(resumed.steps, ["plan", "approve", "act"]);
const runs = await client.runs.list(t2.thread_id);
assert.equal(runs.length, 2);
assert.ok(runs.every((r) => r.status === "success"));
assert.equal((await client.runs.get(t2.thread_id, run.run_id)).run_id, run.run_id);
const history = await client.threads.getHistory(t2.thread_id, { limit: 2 });
assert.equal(history.length, 2);

// Update state as a node, then continue.
step("updateState");
const t3 = await client.threads.create({ graphId: "flow" });
await client.threads.updateState(t3.thread_id, { values: { topic: "manual", steps: ["plan"] }, asNode: "plan" });
assert.deepEqual((await client.threads.getState(t3.thread_id)).next, ["approve"]);
const steered = await client.runs.wait(t3.thread_id, "flow", { command: { goto: "act", update: { approved: "skipped" } } });
assert.deepEqual(steered.steps, ["plan", "act"], "Command({goto}) runs act in place of approve");
const copy = await client.threads.copy(t3.thread_id);
assert.equal((await client.threads.getState(copy.thread_id)).values.topic, "manual");

// Command({goto}) sent to a thread paused at an interrupt: act runs in place of the waiting task.
step("Command({goto}) to a paused thread");
const tg = await client.threads.create();
const pausedOut = await client.runs.wait(tg.thread_id, "flow", { input: { topic: "goto" } });
assert.equal(pausedOut.__interrupt__.length, 1);
const gone = await client.runs.wait(tg.thread_id, "flow", { command: { goto: "act", update: { approved: "by goto" } } });
assert.deepEqual(gone.steps, ["plan", "act"], "goto from an interrupt");
assert.equal(gone.approved, "by goto");
assert.equal((await client.threads.getState(tg.thread_id)).next.length, 0);

// The tasks, checkpoints and debug payloads as LangGraph's server sends them.
step("tasks, checkpoints and debug payloads");
const starts = [], results = [], cps = [], debugTypes = new Set();
for await (const chunk of client.runs.stream(null, "flow", { input: { topic: "payloads" }, streamMode: ["tasks", "checkpoints", "debug"] })) {
  if (chunk.event === "tasks") ("result" in chunk.data ? results : starts).push(chunk.data);
  if (chunk.event === "checkpoints") cps.push(chunk.data);
  if (chunk.event === "debug") debugTypes.add(chunk.data.type);
}
assert.ok(starts.length >= 2 && starts.every((t) => Array.isArray(t.interrupts) && Array.isArray(t.triggers)), "task starts " + JSON.stringify(starts));
const planResult = results.find((t) => t.name === "plan");
assert.deepEqual(planResult.result, [["steps", ["plan"]]], "a task's result is its [channel, value] writes");
assert.equal(planResult.error, null);
const approveResult = results.find((t) => t.name === "approve");
assert.deepEqual(approveResult.result, []);
assert.equal(approveResult.interrupts[0].value.question, "approve payloads?");
assert.ok(cps.length >= 3, "checkpoints " + cps.length);
for (const cp of cps) {
  assert.equal(cp.checkpoint.checkpoint_id, cp.config.configurable.checkpoint_id, "a checkpoint event names its checkpoint");
  assert.ok("parent_checkpoint" in cp);
  for (const task of cp.tasks) assert.ok("error" in task && "state" in task && Array.isArray(task.interrupts), "checkpoint task " + JSON.stringify(task));
}
assert.equal(cps.at(-1).tasks[0].interrupts[0].value.question, "approve payloads?", "the paused task's interrupts in the last checkpoint");
assert.deepEqual([...debugTypes].sort(), ["checkpoint", "task", "task_result"]);

// A busy thread: reject, then cancel.
step("multitask and cancel");
const t4 = await client.threads.create();
const slow = await client.runs.create(t4.thread_id, "slow", { input: { topic: "s" } });
await assert.rejects(client.runs.create(t4.thread_id, "slow", { input: { topic: "x" } }), /409/);
await client.runs.cancel(t4.thread_id, slow.run_id, true);
assert.equal((await client.runs.get(t4.thread_id, slow.run_id)).status, "interrupted");

// LangGraph's thread and run API beyond the basics (issue 18, items 9 and 10).
step("thread shape, patchState, __start__, select, batch, cancel many, joinStream, prune");
const fresh = await client.threads.create({ graphId: "flow" });
assert.deepEqual(fresh.values, {});
assert.deepEqual(fresh.interrupts, {});
assert.equal(fresh.state_updated_at, fresh.created_at);
await client.threads.updateState(fresh.thread_id, { values: { topic: "begun" }, asNode: "__start__" });
assert.deepEqual((await client.threads.getState(fresh.thread_id)).next, ["plan"]);
const byState = await client.threads.search({ sortBy: "state_updated_at", sortOrder: "desc", limit: 1 });
assert.equal(byState[0].thread_id, fresh.thread_id, "the thread whose state changed last sorts first by state_updated_at");
await client.threads.patchState(fresh.thread_id, { reviewed: "yes" });
assert.equal((await client.threads.getState(fresh.thread_id)).metadata.reviewed, "yes");
const selected = await client.runs.list(t2.thread_id, { select: ["run_id", "status"] });
assert.deepEqual(Object.keys(selected[0]).sort(), ["run_id", "status"]);
const recursion = await client.runs.wait(null, "flow", { input: { topic: "r" }, config: { recursion_limit: 1 }, raiseError: false });
assert.equal(recursion.__error__.error, "GraphRecursionError");
const batch = await client.runs.createBatch([
  { assistantId: "flow", input: { topic: "b1" }, onCompletion: "keep" },
  { assistantId: "flow", input: { topic: "b2" }, onCompletion: "keep" },
]);
assert.equal(batch.length, 2);
const t5 = await client.threads.create();
const held = await client.runs.create(t5.thread_id, "slow", { input: { topic: "held" }, streamMode: ["updates"] });
const joinedThread = [];
// The thread's stream stays open across runs: a client leaves it by aborting it.
const leaveT5 = new AbortController();
for await (const chunk of client.threads.joinStream(t5.thread_id, { streamMode: "run_modes", signal: leaveT5.signal })) {
  joinedThread.push(chunk);
  if (joinedThread.length === 1) {
    // Joined (the run's metadata event came): cancel the thread's runs. SDK 2.0.0 has no
    // runs.cancelMany or threads.prune: they are sent as the Python SDK's cancel_many and prune
    // send them.
    await client.runs.fetch("/runs/cancel", { method: "POST", json: { thread_id: t5.thread_id }, params: { action: "interrupt" } });
  }
  if (chunk.data?.status === "run_done") break;
}
leaveT5.abort();
assert.equal(joinedThread[0].event, "metadata");
assert.equal(joinedThread[0].data.run_id, held.run_id);
assert.deepEqual(joinedThread.at(-1).data, { status: "run_done", run_id: held.run_id });
assert.equal((await client.runs.get(t5.thread_id, held.run_id)).status, "interrupted");
// The thread's stream follows the thread's runs: lifecycle gives their starts and ends,
// state_update the state updates made through the API. Last-Event-ID "-" replays the runs kept.
{
  const t6 = await client.threads.create({ graphId: "flow" });
  await client.runs.wait(t6.thread_id, "flow", { input: { topic: "joined" } });
  const r2 = await client.runs.wait(t6.thread_id, "flow", { command: { resume: "ok" } });
  assert.deepEqual(r2.steps, ["plan", "approve", "act"]);
  const seen = [];
  const leave = new AbortController();
  for await (const chunk of client.threads.joinStream(t6.thread_id, { streamMode: ["lifecycle", "state_update"], lastEventId: "-", signal: leave.signal })) {
    seen.push(chunk);
    if (seen.length === 4) await client.threads.updateState(t6.thread_id, { values: { topic: "edited" } });
    if (chunk.event === "state_update") break;
  }
  leave.abort();
  const kinds = seen.map((c) => (c.event === "metadata" ? (c.data.status === "run_done" ? "done" : "start") : c.event));
  assert.deepEqual(kinds, ["start", "done", "start", "done", "state_update"]);
  assert.equal(seen[0].data.run_id, seen[1].data.run_id);
  assert.ok(seen[1].id.startsWith(seen[1].data.run_id + ":"), "event IDs name their run");
  assert.equal(seen[4].data.thread_id, t6.thread_id);
  assert.equal(seen[4].data.state.values.topic, "edited");
}
const pruned = await client.threads.fetch("/threads/prune", { method: "POST", json: { thread_ids: [t5.thread_id] } });
assert.equal(pruned.pruned_count, 1);
await assert.rejects(client.threads.get(t5.thread_id), /404/);

// Store.
step("store");
await client.store.putItem(["notes", "sdk"], "n1", { text: "remember the milk" });
const item = await client.store.getItem(["notes", "sdk"], "n1");
assert.equal(item.value.text, "remember the milk");
const hits = await client.store.searchItems(["notes"], { query: "milk" });
assert.equal(hits.items.length, 1);
const spaces = await client.store.listNamespaces({ prefix: ["notes"] });
assert.deepEqual(spaces.namespaces, [["notes", "sdk"]]);
await client.store.deleteItem(["notes", "sdk"], "n1");
// A missing item is null, as the SDK's getItem types it (Promise<Item | null>).
assert.equal(await client.store.getItem(["notes", "sdk"], "n1"), null);

// Crons: made, listed, counted, changed and deleted through client.crons.
step("crons");
const cron = await client.crons.create("flow", { schedule: "*/5 * * * *", input: { topic: "cron" }, metadata: { purpose: "sdk" } });
assert.equal(cron.schedule, "*/5 * * * *");
assert.equal(cron.thread_id, null);
assert.equal(cron.assistant_id, flow.assistant_id);
assert.equal(cron.metadata.purpose, "sdk");
assert.ok(cron.next_run_date && cron.enabled);
const threadCron = await client.crons.createForThread(thread.thread_id, "flow", { schedule: "0 9 * * 1" });
assert.equal(threadCron.thread_id, thread.thread_id);
const onThread = await client.crons.search({ threadId: thread.thread_id });
assert.deepEqual(onThread.map((c) => c.cron_id), [threadCron.cron_id]);
assert.equal(await client.crons.count({ assistantId: flow.assistant_id }), 2);
const paused = await client.crons.update(cron.cron_id, { schedule: "0 * * * *", enabled: false });
assert.equal(paused.schedule, "0 * * * *");
assert.equal(paused.enabled, false);
assert.equal(paused.next_run_date, null);
await assert.rejects(client.crons.create("flow", { schedule: "every day" }), /400/);
await client.crons.delete(cron.cron_id);
await client.crons.delete(threadCron.cron_id);
assert.equal(await client.crons.count(), 0);

// Delete.
// Human in the loop in LangChain v1's format: the interrupt lists the calls to review, and
// Command({resume: {decisions}}) approves, edits or rejects each, in order.
step("human in the loop: approve and edit");
const t9 = await client.threads.create();
const asked = await client.runs.wait(t9.thread_id, "reviewed", { input: { messages: [{ role: "user", content: "email everyone" }] } });
assert.equal(asked.__interrupt__.length, 1);
const review = asked.__interrupt__[0].value;
assert.deepEqual(review.action_requests.map((a) => [a.name, a.args.to, a.description.split("\n")[0]]),
  [["send_email", "team@example.com", "Email about to be sent"], ["send_email", "all@example.com", "Email about to be sent"]]);
assert.deepEqual(review.review_configs, [{ action_name: "send_email", allowed_decisions: ["approve", "edit", "reject"] }]);
assert.equal((await client.threads.get(t9.thread_id)).status, "interrupted");
const reviewed = await client.runs.wait(t9.thread_id, "reviewed", {
  command: { resume: { decisions: [{ type: "approve" }, { type: "edit", edited_action: { name: "send_email", args: { to: "boss@example.com", body: "edited" } } }] } },
});
assert.equal(reviewed.messages.at(-1).content, "sent to team@example.com: hello; sent to boss@example.com: edited");
assert.equal((await client.threads.get(t9.thread_id)).status, "idle");

step("human in the loop: reject over a stream");
const t10 = await client.threads.create();
await client.runs.wait(t10.thread_id, "reviewed", { input: { messages: [{ role: "user", content: "email everyone" }] } });
const rejected = [];
for await (const chunk of client.runs.stream(t10.thread_id, "reviewed", {
  command: { resume: { decisions: [{ type: "reject", message: "Not the team." }, { type: "approve" }] } },
  streamMode: "values",
})) {
  rejected.push(chunk);
}
const finalValues = rejected.filter((c) => c.event === "values").at(-1).data;
const toolTexts = finalValues.messages.filter((m) => m.type === "tool").map((m) => m.content);
assert.deepEqual(toolTexts, ["Not the team.", "sent to all@example.com: hello"]);
await assert.rejects(
  client.runs.wait(t10.thread_id, "reviewed", { command: { resume: { decisions: [{ type: "approve" }] } } }),
  /nothing to resume/, "a resume on a thread with no review pending is refused");

step("human in the loop: a bad answer keeps the review open");
const t11 = await client.threads.create();
await client.runs.wait(t11.thread_id, "reviewed", { input: { messages: [{ role: "user", content: "email everyone" }] } });
await assert.rejects(
  client.runs.wait(t11.thread_id, "reviewed", { command: { resume: { decisions: [{ type: "maybe" }, { type: "approve" }] } } }),
  (err) => err.status === 400 && /decision 0 .*maybe.* is not allowed/.test(err.message), "an answer the review does not take is refused before a run starts");
await assert.rejects(
  client.runs.wait(t11.thread_id, "reviewed", { command: { resume: { decisions: [{ type: "approve" }] } } }),
  (err) => err.status === 400 && /1 decisions for 2 tool calls/.test(err.message), "one decision per action request");
const after = await client.threads.getState(t11.thread_id);
assert.equal(after.tasks[0]?.interrupts.length, 1, "the review is still pending after a bad answer");
const good = await client.runs.wait(t11.thread_id, "reviewed", { command: { resume: { decisions: [{ type: "approve" }, { type: "approve" }] } } });
assert.equal(good.messages.at(-1).content, "sent to team@example.com: hello; sent to all@example.com: hello");

step("thread state with subgraphs");
const t12 = await client.threads.create();
await client.runs.wait(t12.thread_id, "asking", { input: { topic: "owls" } });
const flat = await client.threads.getState(t12.thread_id);
assert.equal(flat.tasks[0].name, "ask");
assert.equal(flat.tasks[0].state, null, "no subgraph state without subgraphs");
assert.equal(flat.tasks[0].checkpoint.checkpoint_ns, "ask:" + flat.tasks[0].id);
const deep = await client.threads.getState(t12.thread_id, undefined, { subgraphs: true });
const sub = deep.tasks[0].state;
assert.deepEqual(sub.values, { draft: "outline of owls" });
assert.deepEqual(sub.next, ["write"]);
assert.equal(sub.tasks[0].interrupts[0].value, "tone?");
const deepAt = await client.threads.getState(t12.thread_id, flat.checkpoint, { subgraphs: true });
assert.deepEqual(deepAt.tasks[0].state.next, ["write"], "state/checkpoint with subgraphs");
const answered = await client.runs.wait(t12.thread_id, "asking", { command: { resume: "calm" } });
assert.equal(answered.topic, "outline of owls in a calm tone");

step("run context");
const personal = await client.assistants.getSchemas("personal");
assert.ok(personal.context_schema.properties.user_id, "context_schema lists user_id");
const greeted = await client.runs.wait(null, "personal", { input: {}, context: { user_id: "ann", locale: "fr" } });
assert.equal(greeted.greeting, "hello ann (fr)");
const localized = await client.assistants.create({ graphId: "personal", context: { locale: "de" } });
const merged = await client.runs.wait(null, localized.assistant_id, { input: {}, context: { user_id: "bob" } });
assert.equal(merged.greeting, "hello bob (de)", "the assistant's context under the run's");
await assert.rejects(
  client.runs.wait(null, "personal", { input: {}, context: { user_id: 5 } }),
  (err) => err.status === 422 && /context\.user_id: expected a string/.test(err.message), "a context that does not match context_schema");

step("delete thread");
await client.threads.delete(thread.thread_id);
await assert.rejects(client.threads.get(thread.thread_id), /404/);

console.log("sdk e2e: ok");
