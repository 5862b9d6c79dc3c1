// LangGraph.js twins of the graphs in TestLangGraphJSChannels (graph/langgraphjs_test.go):
// EphemeralValue, UntrackedValue and NamedBarrierValue (add_edge with several sources), run by
// twin.mjs. Nodes log what they read, so the streams show what each superstep saw.
import { END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { BinaryOperatorAggregate, EphemeralValue, UntrackedValueChannel } from "@langchain/langgraph/channels";
import { runTwins } from "./twin.mjs";

const state = () => ({
  log: new BinaryOperatorAggregate((a, b) => a.concat(b), () => []),
  hint: new EphemeralValue(),
  api_key: new UntrackedValueChannel(),
});
const seen = (who, s) => `${who} hint=${s.hint ?? ""} key=${s.api_key ?? ""}`;

const graphs = {
  // plan writes an ephemeral hint and an untracked key; think reads both, check reads the key only
  ephemeral: () =>
    new StateGraph(state())
      .addNode("plan", () => ({ log: ["plan"], hint: "brief", api_key: "k1" }))
      .addNode("think", (s) => ({ log: [seen("think", s)] }))
      .addNode("check", (s) => ({ log: [seen("check", s)] }))
      .addEdge(START, "plan")
      .addEdge("plan", "think")
      .addEdge("think", "check")
      .addEdge("check", END),
  // an ephemeral hint given as input is read by the nodes after START only
  ephemeral_input: () =>
    new StateGraph(state())
      .addNode("first", (s) => ({ log: [seen("first", s)] }))
      .addNode("second", (s) => ({ log: [seen("second", s)] }))
      .addEdge(START, "first")
      .addEdge("first", "second")
      .addEdge("second", END),
  // a node reading the hint pauses: resumed, it reads the hint again; the key is gone
  ephemeral_interrupt: () =>
    new StateGraph(state())
      .addNode("plan", () => ({ log: ["plan"], hint: "brief", api_key: "k1" }))
      .addNode("ask", (s) => {
        const answer = interrupt("ok?");
        return { log: [seen("ask:" + answer, s)] };
      })
      .addNode("done", (s) => ({ log: [seen("done", s)] }))
      .addEdge(START, "plan")
      .addEdge("plan", "ask")
      .addEdge("ask", "done")
      .addEdge("done", END),
  // a named barrier: c runs once a and b2 have both finished, b2 a superstep after a
  barrier: () =>
    new StateGraph(state())
      .addNode("a", () => ({ log: ["a"] }))
      .addNode("b", () => ({ log: ["b"] }))
      .addNode("b2", () => ({ log: ["b2"] }))
      .addNode("c", () => ({ log: ["c"] }))
      .addEdge(START, "a")
      .addEdge(START, "b")
      .addEdge("b", "b2")
      .addEdge(["a", "b2"], "c")
      .addEdge("c", END),
  // the barrier holds across an interrupt in one of its sources
  barrier_interrupt: () =>
    new StateGraph(state())
      .addNode("a", () => ({ log: ["a"] }))
      .addNode("b", () => ({ log: ["b:" + interrupt("go?")] }))
      .addNode("c", () => ({ log: ["c"] }))
      .addEdge(START, "a")
      .addEdge(START, "b")
      .addEdge(["a", "b"], "c")
      .addEdge("c", END),
};

await runTwins(
  graphs,
  { ephemeral_input: { hint: "from input", api_key: "k0" } },
  { ephemeral_interrupt: "yes", barrier_interrupt: "go" },
);
