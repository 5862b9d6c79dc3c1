// LangGraph.js's side of TestLangGraphJSEntrypointAsSubgraph (graph/langgraphjs_entrypoint_test.go):
// an entrypoint calling a task and pausing at an interrupt, used as a node of a graph. Prints the
// subgraph's events of a run and its resume (streamed with subgraphs: updates, values, tasks,
// checkpoints, as [run, mode, payload]) and the thread's state with subgraphs after each run
// (each task's name, and its subgraph's values and next).
import { Annotation, Command, END, MemorySaver, START, StateGraph, entrypoint, interrupt, task } from "@langchain/langgraph";

const State = Annotation.Root({
  items: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  n: Annotation({ reducer: (_, b) => b, default: () => 0 }),
});
const double = task("double", async (n) => n * 2);
const inner = entrypoint({ name: "inner", checkpointer: undefined }, async (s) => {
  const d = await double(s.n);
  const ok = interrupt("ok " + d + "?");
  return { items: ["inner:" + d + ":" + ok] };
});
const g = new StateGraph(State)
  .addNode("prep", () => ({ items: ["prep"], n: 3 }))
  .addNode("inner", inner)
  .addEdge(START, "prep")
  .addEdge("prep", "inner")
  .addEdge("inner", END)
  .compile({ checkpointer: new MemorySaver() });

const config = { configurable: { thread_id: "entrypoint" } };
const events = [];
const states = [];
const inputs = [{}, new Command({ resume: "yes" })];
for (let run = 0; run < inputs.length; run++) {
  const modes = ["updates", "values", "tasks", "checkpoints"];
  for await (const [ns, mode, data] of await g.stream(inputs[run], { ...config, streamMode: modes, subgraphs: true })) {
    if (ns.length > 0) events.push([run, mode, data]);
  }
  const st = await g.getState(config, { subgraphs: true });
  states.push(st.tasks.map((t) => ({ name: t.name, values: t.state?.values ?? null, next: t.state?.next ?? [] })));
}
process.stdout.write(JSON.stringify({ events, states }));
