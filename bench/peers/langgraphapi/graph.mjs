// The graph of the runs-per-second measurement, as bench/serverbench/graphs.go defines it for
// trellis: "plan" appends "plan:" + topic to steps, then "act" appends "act".
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({
  topic: Annotation({ reducer: (_, b) => b, default: () => "" }),
  steps: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

export const graph = new StateGraph(State)
  .addNode("plan", (s) => ({ steps: ["plan:" + s.topic] }))
  .addNode("act", () => ({ steps: ["act"] }))
  .addEdge(START, "plan")
  .addEdge("plan", "act")
  .addEdge("act", END)
  .compile();
