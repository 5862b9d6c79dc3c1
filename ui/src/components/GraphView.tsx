// GraphView draws an assistant's graph (GET /assistants/{id}/graph) as layers from __start__
// down to __end__; conditional edges are dashed, edges back up curve to the side. Nodes can be
// coloured by a status (the progress view) or highlighted (the next nodes of a thread).
import type { GraphJSON } from "../api";

export type NodeStatus = "pending" | "running" | "done" | "error" | "interrupted";

const fill: Record<NodeStatus, string> = {
  pending: "fill-white dark:fill-zinc-900",
  running: "fill-amber-100 dark:fill-amber-900",
  done: "fill-emerald-100 dark:fill-emerald-900",
  error: "fill-red-100 dark:fill-red-900",
  interrupted: "fill-sky-100 dark:fill-sky-900",
};

export function layout(g: GraphJSON) {
  const ids = g.nodes.map((n) => n.id);
  const rank = new Map<string, number>();
  const start = ids.includes("__start__") ? "__start__" : ids[0];
  rank.set(start, 0);
  const queue = [start];
  while (queue.length) {
    const u = queue.shift()!;
    for (const e of g.edges) {
      if (e.source === u && !rank.has(e.target) && e.target !== "__end__") {
        rank.set(e.target, rank.get(u)! + 1);
        queue.push(e.target);
      }
    }
  }
  let max = 0;
  for (const v of rank.values()) max = Math.max(max, v);
  for (const id of ids) if (!rank.has(id) && id !== "__end__") rank.set(id, ++max);
  if (ids.includes("__end__")) rank.set("__end__", max + 1);
  const rows: string[][] = [];
  for (const id of ids) {
    const r = rank.get(id)!;
    (rows[r] ??= []).push(id);
  }
  const W = 150, H = 40, gapX = 40, gapY = 60;
  const widest = Math.max(...rows.map((r) => r?.length ?? 0));
  const width = Math.max(widest * (W + gapX), W + gapX) + 80;
  const pos = new Map<string, { x: number; y: number }>();
  rows.forEach((row, r) => {
    if (!row) return;
    const total = row.length * W + (row.length - 1) * gapX;
    row.forEach((id, i) => pos.set(id, { x: (width - total) / 2 + i * (W + gapX), y: 20 + r * (H + gapY) }));
  });
  const height = 20 + rows.length * (H + gapY);
  return { pos, rank, W, H, width, height };
}

export function GraphView({ graph, status, highlight, onNode }: {
  graph: GraphJSON;
  status?: Record<string, NodeStatus>;
  highlight?: string[];
  onNode?: (id: string) => void;
}) {
  const { pos, rank, W, H, width, height } = layout(graph);
  return (
    <svg viewBox={`0 0 ${width} ${height}`} width="100%" style={{ maxWidth: width }} role="img" aria-label="graph" className="text-zinc-600 dark:text-zinc-300">
      <defs>
        <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
          <path d="M 0 0 L 10 5 L 0 10 z" fill="currentColor" />
        </marker>
      </defs>
      {graph.edges.map((e, i) => {
        const a = pos.get(e.source), b = pos.get(e.target);
        if (!a || !b) return null;
        const back = (rank.get(e.target) ?? 0) <= (rank.get(e.source) ?? 0);
        let d: string;
        if (back) {
          const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x + W, y2 = b.y + H / 2;
          const bend = Math.max(x1, x2) + 50 + (i % 3) * 12;
          d = `M ${x1} ${y1} C ${bend} ${y1}, ${bend} ${y2}, ${x2} ${y2}`;
        } else {
          d = `M ${a.x + W / 2} ${a.y + H} L ${b.x + W / 2} ${b.y}`;
        }
        return (
          <path key={i} d={d} fill="none" stroke="currentColor" strokeOpacity={0.7} strokeWidth={1.5}
            strokeDasharray={e.conditional ? "5 4" : undefined} markerEnd="url(#arrow)" data-edge={`${e.source}->${e.target}`} />
        );
      })}
      {graph.nodes.map((n) => {
        const p = pos.get(n.id)!;
        const special = n.id === "__start__" || n.id === "__end__";
        const st = status?.[n.id];
        const hl = highlight?.includes(n.id);
        return (
          <g key={n.id} data-node={n.id} data-status={st ?? ""} transform={`translate(${p.x},${p.y})`}
            onClick={onNode ? () => onNode(n.id) : undefined} className={onNode ? "cursor-pointer" : undefined}>
            <rect width={W} height={H} rx={special ? 20 : 8}
              className={(st ? fill[st] : special ? "fill-zinc-100 dark:fill-zinc-800" : "fill-white dark:fill-zinc-900") +
                (hl ? " stroke-sky-500" : " stroke-zinc-400 dark:stroke-zinc-600")}
              strokeWidth={hl ? 3 : 1.5} />
            <text x={W / 2} y={H / 2 + 5} textAnchor="middle" fontSize={13} fill="currentColor" className="font-mono">
              {n.id}{st ? (st === "done" ? " ✓" : st === "running" ? " …" : st === "error" ? " ✗" : st === "interrupted" ? " ⏸" : "") : ""}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
