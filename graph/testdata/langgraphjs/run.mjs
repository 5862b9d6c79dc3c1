// LangGraph.js twins of the graphs in graph/langgraphjs_test.go. Prints, as one JSON object,
// each graph's values stream and its thread's history (oldest first: step, source, next,
// values), for the Go test to compare with trellis's.
import {
  Annotation,
  Command,
  END,
  MemorySaver,
  START,
  Send,
  StateGraph,
  interrupt,
} from "@langchain/langgraph";

const State = Annotation.Root({
  items: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  n: Annotation({ reducer: (_, b) => b, default: () => 0 }),
});

const graphs = {
  // routing and reducers: a adds, then routes on n to b or c
  routing: () =>
    new StateGraph(State)
      .addNode("a", (s) => ({ items: ["a"], n: s.n + 1 }))
      .addNode("b", () => ({ items: ["b"] }))
      .addNode("c", () => ({ items: ["c"] }))
      .addEdge(START, "a")
      .addConditionalEdges("a", (s) => (s.n > 1 ? "b" : "c"), ["b", "c"])
      .addEdge("b", END)
      .addEdge("c", END),
  // Send: fan out to three workers with their own payloads
  send: () =>
    new StateGraph(State)
      .addNode("plan", () => ({ items: ["plan"] }))
      .addNode("worker", (p) => ({ items: ["w" + p.n] }))
      .addEdge(START, "plan")
      .addConditionalEdges("plan", () => [1, 2, 3].map((i) => new Send("worker", { n: i, items: [] })), ["worker"])
      .addEdge("worker", END),
  // Command: a node that updates and goes to another
  command: () =>
    new StateGraph(State)
      .addNode("a", () => new Command({ update: { items: ["a"], n: 7 }, goto: "b" }), { ends: ["b"] })
      .addNode("b", () => ({ items: ["b"] }))
      .addEdge(START, "a")
      .addEdge("b", END),
  // interrupts and resume
  interrupt: () =>
    new StateGraph(State)
      .addNode("ask", () => ({ items: ["ask:" + interrupt("ok?")] }))
      .addNode("done", () => ({ items: ["done"] }))
      .addEdge(START, "ask")
      .addEdge("ask", "done")
      .addEdge("done", END),
};

const inputs = { routing: { n: 1 }, send: {}, command: {}, interrupt: {} };

const out = {};
for (const [name, build] of Object.entries(graphs)) {
  const g = build().compile({ checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: name } };
  const values = [];
  for await (const v of await g.stream(inputs[name], { ...config, streamMode: "values" })) values.push(v);
  if (name === "interrupt") {
    for await (const v of await g.stream(new Command({ resume: "yes" }), { ...config, streamMode: "values" })) values.push(v);
  }
  const history = [];
  for await (const s of g.getStateHistory(config)) {
    history.push({ step: s.metadata.step, source: s.metadata.source, next: s.next, values: s.values });
  }
  history.reverse();
  out[name] = { values, history };
}
process.stdout.write(JSON.stringify(out));
