// LangGraph.js twins of the graphs in graph/langgraphjs_test.go. Prints, as one JSON object,
// each graph's stream (values, updates, tasks and checkpoints modes, each mode's payloads in
// order) and its thread's history (oldest first: step, source, next, values), for the Go test
// to compare with trellis's (twin.mjs runs them).
import {
  Annotation,
  Command,
  END,
  START,
  Send,
  StateGraph,
  interrupt,
} from "@langchain/langgraph";
import { runTwins } from "./twin.mjs";

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
  // a subgraph as a node, sharing the state
  subgraph: () => {
    const child = new StateGraph(State)
      .addNode("x", () => ({ items: ["x"] }))
      .addNode("y", () => ({ items: ["y"] }))
      .addEdge(START, "x")
      .addEdge("x", "y")
      .addEdge("y", END)
      .compile();
    return new StateGraph(State).addNode("sub", child).addEdge(START, "sub").addEdge("sub", END);
  },
  // interrupts and resume
  interrupt: () =>
    new StateGraph(State)
      .addNode("ask", () => ({ items: ["ask:" + interrupt("ok?")] }))
      .addNode("done", () => ({ items: ["done"] }))
      .addEdge(START, "ask")
      .addEdge("ask", "done")
      .addEdge("done", END),
  // a deferred node waiting for the longer branch: next lists only the nodes due now
  deferred: () =>
    new StateGraph(State)
      .addNode("a", () => ({ items: ["a"] }))
      .addNode("b", () => ({ items: ["b"] }))
      .addNode("b2", () => ({ items: ["b2"] }))
      .addNode("c", () => ({ items: ["c"] }), { defer: true })
      .addEdge(START, "a")
      .addEdge(START, "b")
      .addEdge("a", "c")
      .addEdge("b", "b2")
      .addEdge("b2", "c")
      .addEdge("c", END),
};

await runTwins(graphs, { routing: { n: 1 } }, { interrupt: "yes" });
