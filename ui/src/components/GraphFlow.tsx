// GraphFlow (loaded as its own chunk through GraphView) draws an assistant's graph (GET /assistants/{id}/graph) with React Flow, laid out
// in layers by dagre: __start__ at the top, __end__ at the bottom, every edge routed by dagre
// around the nodes (cycles included), conditional edges dashed and labelled with their route's
// key. Nodes can be coloured by a status (the running one pulses), the path a run took drawn
// bold, and the next nodes of a thread highlighted. Subgraphs drawn with xray ("parent:child"
// nodes) sit in a box named after the parent node; the box's button folds the subgraph into one
// node (its edges go to and from that node) and the folded node's button unfolds it.
import { createContext, useCallback, useContext, useEffect, useMemo, useState } from "react";
import dagre from "@dagrejs/dagre";
import {
  BaseEdge, Controls, EdgeLabelRenderer, Handle, Position, ReactFlow,
  type Edge, type EdgeProps, type Node, type NodeProps,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import type { GraphJSON } from "../api";

import type { GraphViewProps, NodeStatus } from "./GraphView";

const fill: Record<NodeStatus, string> = {
  pending: "bg-white dark:bg-zinc-900",
  running: "bg-amber-100 dark:bg-amber-900 ring-4 ring-amber-400/60 animate-pulse",
  done: "bg-emerald-100 dark:bg-emerald-900",
  error: "bg-red-100 dark:bg-red-900",
  interrupted: "bg-sky-100 dark:bg-sky-900",
};
const mark: Record<NodeStatus, string> = { pending: "", running: " …", done: " ✓", error: " ✗", interrupted: " ‖" };

type NodeData = { label: string; id: string; special: boolean; folded?: boolean };

// Statuses reach the nodes through a context, so that the nodes React Flow has measured stay the
// same objects while a run changes their colours (new node objects would lose their measurements,
// and with them their edges).
type Marks = { status?: Record<string, NodeStatus>; highlight?: string[]; clickable: boolean; toggle?: (subgraph: string) => void };
const MarksContext = createContext<Marks>({ clickable: false });
type GroupData = { label: string; id: string };
type EdgeData = { points: { x: number; y: number }[]; label?: string; conditional: boolean; taken: boolean };

const NODE_H = 38;
const nodeWidth = (label: string) => Math.max(90, Math.min(260, 16 + label.length * 8));

function GraphNode({ data }: NodeProps<Node<NodeData>>) {
  const marks = useContext(MarksContext);
  const st = marks.status?.[data.id];
  const highlight = !!marks.highlight?.includes(data.id);
  return (
    <div data-node={data.id} data-status={st ?? ""} title={data.id}
      className={"flex h-full w-full items-center justify-center truncate border px-2 font-mono text-[13px] text-zinc-800 dark:text-zinc-100 " +
        (data.special ? "rounded-full " : data.folded ? "rounded-md border-dashed !border-violet-500 " : "rounded-md ") +
        (st ? fill[st] : data.special ? "bg-zinc-100 dark:bg-zinc-800" : "bg-white dark:bg-zinc-900") +
        (highlight ? " border-sky-500 border-[3px]" : " border-zinc-400 dark:border-zinc-600") +
        (marks.clickable ? " cursor-pointer" : "")}>
      <Handle type="target" position={Position.Top} className="!opacity-0" isConnectable={false} />
      {data.label}{st ? mark[st] : ""}
      {data.folded && marks.toggle && (
        <button type="button" className="nodrag nopan pointer-events-auto ml-1 rounded border border-violet-400 px-1 text-[11px] leading-4 text-violet-700 dark:text-violet-300"
          aria-label={"unfold " + data.id} title="show the subgraph's nodes" onClick={(e) => { e.stopPropagation(); marks.toggle!(data.id); }}>+</button>
      )}
      <Handle type="source" position={Position.Bottom} className="!opacity-0" isConnectable={false} />
    </div>
  );
}

function GroupNode({ data }: NodeProps<Node<GroupData>>) {
  return (
    <div data-subgraph-box={data.id} className="h-full w-full rounded-xl border border-dashed border-violet-400 bg-violet-50/40 dark:border-violet-700 dark:bg-violet-950/30">
      <span className="ml-2 font-mono text-[11px] text-violet-700 dark:text-violet-300">subgraph · {data.label}</span>
    </div>
  );
}

// FoldNode is a box's fold button: a node of its own above the box, which sits under the pane
// (zIndex -1, so that the edges inside it show) and gets no clicks.
function FoldNode({ data }: NodeProps<Node<GroupData>>) {
  const marks = useContext(MarksContext);
  if (!marks.toggle) return null;
  return (
    <button type="button" className="nodrag nopan pointer-events-auto rounded border border-violet-400 bg-white px-1 font-mono text-[11px] leading-4 text-violet-700 dark:bg-zinc-900 dark:text-violet-300"
      aria-label={"fold " + data.id} title="fold the subgraph into one node" onClick={(e) => { e.stopPropagation(); marks.toggle!(data.id); }}>−</button>
  );
}

// fold draws each subgraph named in folded (an xray prefix such as "research" or
// "research:writer") as one node of that name: its nodes leave, and edges to or from them go to
// or from it (edges inside it are dropped, duplicates merged).
export function fold(g: GraphJSON, folded: string[]): GraphJSON {
  if (!folded.length) return g;
  const outer = [...folded].sort((a, b) => a.length - b.length);
  const to = (id: string) => outer.find((p) => id.startsWith(p + ":")) ?? id;
  const nodes: GraphJSON["nodes"] = [];
  const seen = new Set<string>();
  for (const n of g.nodes) {
    const id = to(n.id);
    if (seen.has(id)) continue;
    seen.add(id);
    nodes.push(id === n.id ? n : { ...n, id, name: id, data: { folded: true } } as GraphJSON["nodes"][number]);
  }
  const edges: GraphJSON["edges"] = [];
  for (const e of g.edges) {
    const s = to(e.source), t = to(e.target);
    if (s === t && s !== e.source) continue;
    if (edges.some((x) => x.source === s && x.target === t && x.data === e.data)) continue;
    edges.push({ ...e, source: s, target: t });
  }
  return { ...g, nodes, edges };
}

// pathThrough draws a smooth line through dagre's points: straight to the first midpoint, then
// quadratic curves with each point as the control point.
function pathThrough(pts: { x: number; y: number }[]): string {
  if (pts.length < 2) return "";
  let d = `M ${pts[0].x} ${pts[0].y}`;
  if (pts.length === 2) return d + ` L ${pts[1].x} ${pts[1].y}`;
  for (let i = 1; i < pts.length - 1; i++) {
    const m = { x: (pts[i].x + pts[i + 1].x) / 2, y: (pts[i].y + pts[i + 1].y) / 2 };
    const end = i === pts.length - 2 ? pts[i + 1] : m;
    d += ` Q ${pts[i].x} ${pts[i].y} ${end.x} ${end.y}`;
  }
  return d;
}

function RoutedEdge({ id, source, target, data, markerEnd }: EdgeProps<Edge<EdgeData>>) {
  const pts = data?.points ?? [];
  const mid = pts[Math.floor(pts.length / 2)] ?? { x: 0, y: 0 };
  return (
    <>
      <BaseEdge id={id} path={pathThrough(pts)} markerEnd={markerEnd}
        style={{ strokeDasharray: data?.conditional ? "6 4" : undefined, strokeWidth: data?.taken ? 3 : 1.5, stroke: data?.taken ? "#059669" : undefined }} />
      <path d={pathThrough(pts)} fill="none" stroke="none" data-edge={`${source}->${target}`} data-conditional={data?.conditional ? "true" : undefined} data-taken={data?.taken ? "true" : undefined} />
      {data?.label && (
        <EdgeLabelRenderer>
          <div data-edge-label={data.label} style={{ transform: `translate(-50%, -50%) translate(${mid.x}px, ${mid.y}px)` }}
            className="nodrag nopan pointer-events-none absolute rounded border border-zinc-300 bg-white px-1 font-mono text-[11px] text-zinc-700 dark:border-zinc-600 dark:bg-zinc-900 dark:text-zinc-200">
            {data.label}
          </div>
        </EdgeLabelRenderer>
      )}
    </>
  );
}

const nodeTypes = { graph: GraphNode, group: GroupNode, fold: FoldNode };
const edgeTypes = { routed: RoutedEdge };

// resolveEnds gives the edges of an xray graph real endpoints: the server draws an edge into a
// subgraph to "parent:__start__" and out of it from "parent:__end__", which are not nodes; they
// become edges to the subgraph's first nodes and from its last ones.
export function resolveEnds(g: GraphJSON): GraphJSON["edges"] {
  const ids = new Set(g.nodes.map((n) => n.id));
  const inside = (prefix: string) => g.nodes.map((n) => n.id).filter((id) => id.startsWith(prefix + ":"));
  const out: GraphJSON["edges"] = [];
  const firsts = (p: string) => {
    const ns = inside(p);
    const f = ns.filter((n) => !g.edges.some((e) => e.target === n && e.source.startsWith(p + ":")));
    return f.length ? f : ns.slice(0, 1);
  };
  const lasts = (p: string) => {
    const ns = inside(p);
    const l = ns.filter((n) => !g.edges.some((e) => e.source === n && e.target.startsWith(p + ":")));
    return l.length ? l : ns.slice(-1);
  };
  for (const e of g.edges) {
    let srcs = [e.source], dsts = [e.target];
    if (!ids.has(e.source) && e.source.endsWith(":__end__")) srcs = lasts(e.source.slice(0, -":__end__".length));
    if (!ids.has(e.target) && e.target.endsWith(":__start__")) dsts = firsts(e.target.slice(0, -":__start__".length));
    for (const s of srcs) for (const t of dsts) if (ids.has(s) && ids.has(t) && !out.some((x) => x.source === s && x.target === t)) out.push({ ...e, source: s, target: t });
  }
  return out;
}

export type Layout = { nodes: Node[]; edges: Edge[]; width: number; height: number };

// layout places the graph with dagre (top to bottom). Subgraph nodes ("parent:child") are
// children of a compound node for the parent, so dagre keeps them together in one box.
export function layout(g: GraphJSON, opts: { path?: string[] } = {}): Layout {
  const d = new dagre.graphlib.Graph({ compound: true, multigraph: true });
  d.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 46, edgesep: 14, marginx: 12, marginy: 12 });
  d.setDefaultEdgeLabel(() => ({}));
  const groups = new Set<string>();
  for (const n of g.nodes) {
    const name = n.id.includes(":") ? n.id.slice(n.id.lastIndexOf(":") + 1) : n.id;
    const folded = !!(n as { data?: { folded?: boolean } }).data?.folded;
    d.setNode(n.id, { width: nodeWidth(name) + (folded ? 24 : 0), height: NODE_H, label: name });
    if (n.id.includes(":")) {
      const parent = n.id.slice(0, n.id.lastIndexOf(":"));
      let p = parent;
      while (p) {
        if (!groups.has(p)) {
          groups.add(p);
          d.setNode("group:" + p, { label: p, paddingTop: 20 });
        }
        const up = p.includes(":") ? p.slice(0, p.lastIndexOf(":")) : "";
        if (up) d.setParent("group:" + p, "group:" + up);
        p = up;
      }
      d.setParent(n.id, "group:" + parent);
    }
  }
  const edges = resolveEnds(g);
  const taken = new Set<string>();
  const path = opts.path ?? [];
  for (let i = 0; i + 1 < path.length; i++) taken.add(path[i] + "->" + path[i + 1]);
  edges.forEach((e, i) => {
    const label = typeof e.data === "string" ? e.data : undefined;
    d.setEdge(e.source, e.target, label ? { label, width: label.length * 7 + 8, height: 16, labelpos: "c" } : {}, "e" + i);
  });
  dagre.layout(d);
  const nodes: Node[] = [];
  // Groups first (React Flow draws later nodes on top), outer before inner.
  for (const p of [...groups].sort((a, b) => a.split(":").length - b.split(":").length)) {
    const n = d.node("group:" + p);
    nodes.push({ id: "group:" + p, type: "group", position: { x: n.x - n.width / 2, y: n.y - n.height / 2 - 10 }, width: n.width, height: n.height + 10,
      data: { label: p.split(":").pop(), id: p } as GroupData, selectable: false, draggable: false, zIndex: -1 });
    const label = p.split(":").pop() ?? p;
    nodes.push({ id: "fold:" + p, type: "fold", position: { x: n.x - n.width / 2 + 14 + (11 + label.length) * 6.7, y: n.y - n.height / 2 - 9 },
      width: 18, height: 16, data: { label, id: p } as GroupData, selectable: false, draggable: false, connectable: false });
  }
  for (const gn of g.nodes) {
    const n = d.node(gn.id);
    const label = String(n.label ?? gn.id);
    nodes.push({
      id: gn.id, type: "graph", position: { x: n.x - n.width / 2, y: n.y - n.height / 2 }, width: n.width, height: n.height,
      data: { label, id: gn.id, special: gn.id === "__start__" || gn.id === "__end__", folded: !!(gn as { data?: { folded?: boolean } }).data?.folded } as NodeData,
      draggable: false, connectable: false, measured: { width: n.width, height: n.height },
      handles: [
        { type: "target", position: Position.Top, x: n.width / 2 - 1, y: 0, width: 2, height: 2 },
        { type: "source", position: Position.Bottom, x: n.width / 2 - 1, y: n.height - 2, width: 2, height: 2 },
      ],
    });
  }
  const out: Edge[] = edges.map((e, i) => {
    const de = d.edge({ v: e.source, w: e.target, name: "e" + i });
    const label = typeof e.data === "string" ? e.data : undefined;
    return {
      id: "e" + i, source: e.source, target: e.target, type: "routed",
      markerEnd: { type: "arrowclosed" as const, width: 16, height: 16, color: taken.has(e.source + "->" + e.target) ? "#059669" : "#71717a" },
      data: { points: de?.points ?? [], label, conditional: !!e.conditional, taken: taken.has(e.source + "->" + e.target) } as EdgeData,
    } as Edge;
  });
  const gg = d.graph();
  return { nodes, edges: out, width: gg.width ?? 400, height: gg.height ?? 200 };
}

// useDark follows the dark class on <html> (the theme switch), for React Flow's colours.
function useDark() {
  const [dark, setDark] = useState(() => document.documentElement.classList.contains("dark"));
  useEffect(() => {
    const o = new MutationObserver(() => setDark(document.documentElement.classList.contains("dark")));
    o.observe(document.documentElement, { attributes: true, attributeFilter: ["class"] });
    return () => o.disconnect();
  }, []);
  return dark;
}

export default function GraphFlow({ graph: whole, status, highlight, path, onNode, maxHeight = 720 }: GraphViewProps) {
  const dark = useDark();
  const [folded, setFolded] = useState<string[]>([]);
  const graph = useMemo(() => fold(whole, folded), [whole, folded]);
  const hasSubgraphs = whole.nodes.some((n) => n.id.includes(":"));
  const toggle = useCallback((p: string) => setFolded((f) => (f.includes(p) ? f.filter((x) => x !== p) : [...f, p])), []);
  const l = useMemo(() => layout(graph), [graph]);
  const pathKey = (path ?? []).join(">");
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const edges = useMemo(() => (pathKey ? layout(graph, { path }).edges : l.edges), [graph, pathKey, l]);
  const marks = useMemo(() => ({ status, highlight, clickable: !!onNode, toggle: hasSubgraphs ? toggle : undefined }), [status, highlight, onNode, hasSubgraphs, toggle]);
  // Tall enough to read the whole graph at full size when it fits, scrolled and zoomed inside otherwise.
  const height = Math.max(200, Math.min(maxHeight, l.height + 24));
  return (
    <div role="figure" aria-label="graph" data-graph-nodes={graph.nodes.length} data-folded={folded.join(" ") || undefined} style={{ height }} className="w-full">
      <MarksContext.Provider value={marks}>
      <ReactFlow nodes={l.nodes} edges={edges} nodeTypes={nodeTypes} edgeTypes={edgeTypes} colorMode={dark ? "dark" : "light"}
        fitView fitViewOptions={{ padding: 0.06, maxZoom: 1, minZoom: 0.45 }} minZoom={0.2} maxZoom={2}
        nodesDraggable={false} nodesConnectable={false} elementsSelectable={!!onNode} zoomOnScroll={false} preventScrolling={false}
        proOptions={{ hideAttribution: true }} onNodeClick={onNode ? (_, n) => n.type === "graph" && onNode(n.id) : undefined}>
        <Controls showInteractive={false} position="top-right" />
      </ReactFlow>
      </MarksContext.Provider>
    </div>
  );
}
