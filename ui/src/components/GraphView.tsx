// GraphView draws an assistant's graph: React Flow laid out by dagre (GraphFlow.tsx), loaded as
// a chunk of its own the first time a page shows a graph.
import { lazy, Suspense } from "react";
import type { GraphJSON } from "../api";

export type NodeStatus = "pending" | "running" | "done" | "error" | "interrupted";

export type GraphViewProps = {
  graph: GraphJSON;
  status?: Record<string, NodeStatus>;
  highlight?: string[];
  // path: the nodes a run went through, in order (with __start__ and __end__ when it ended)
  path?: string[];
  onNode?: (id: string) => void;
  maxHeight?: number;
};

const Flow = lazy(() => import("./GraphFlow"));

export function GraphView(props: GraphViewProps) {
  return (
    <Suspense fallback={<p className="muted p-2 text-sm">Drawing the graph…</p>}>
      <Flow {...props} />
    </Suspense>
  );
}
