// ForkTree draws a thread's checkpoints as a tree: one row per checkpoint (newest at the top, as
// the history lists them), one lane per branch, a line from each checkpoint to its parent, so a
// fork shows as a line leaving its lane. The newest branch keeps the first lane; a checkpoint
// shared by several branches sits in the lane of the newest one holding it. Choosing a
// checkpoint calls onSelect; choosing a branch's end (or its name) switches to that branch.
import type { KeyboardEvent } from "react";
import type { ThreadState } from "../api";

export type Branch = { leaf: string; ids: Set<string>; preview: string };

const ROW = 26, LANE = 22, R = 6, PAD = 12;

export function ForkTree({ history, branches, selected, branch, onSelect, onBranch }: {
  history: ThreadState[]; branches: Branch[]; selected?: string; branch?: string;
  onSelect: (checkpointId: string) => void; onBranch: (leaf: string) => void;
}) {
  if (history.length < 2) return null;
  const lane = new Map<string, number>();
  branches.forEach((b, i) => { for (const id of b.ids) if (!lane.has(id)) lane.set(id, i); });
  const row = new Map(history.map((h, i) => [h.checkpoint.checkpoint_id, i]));
  const lanes = Math.max(1, branches.length);
  const x = (id: string) => PAD + (lane.get(id) ?? 0) * LANE;
  const y = (id: string) => PAD + (row.get(id) ?? 0) * ROW;
  const textX = PAD + lanes * LANE + 4;
  const onBranchOf = branch ? branches.find((b) => b.leaf === branch) : undefined;
  const key = (f: () => void) => (e: KeyboardEvent) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); f(); } };
  return (
    <div className="card mb-2 max-h-80 overflow-auto p-1">
      <svg role="group" aria-label="fork tree" width={textX + 190} height={PAD * 2 + (history.length - 1) * ROW} className="block text-xs">
        {history.map((h) => {
          const p = h.parent_checkpoint?.checkpoint_id;
          if (!p || !row.has(p)) return null;
          const id = h.checkpoint.checkpoint_id;
          const x1 = x(id), y1 = y(id), x2 = x(p), y2 = y(p);
          const on = !onBranchOf || (onBranchOf.ids.has(id) && onBranchOf.ids.has(p));
          const d = x1 === x2 ? `M ${x1} ${y1} L ${x2} ${y2}` : `M ${x1} ${y1} L ${x1} ${y2 - ROW / 2} Q ${x1} ${y2} ${x2} ${y2}`;
          return <path key={"l" + id} d={d} fill="none" strokeWidth={on ? 2 : 1.5} data-tree-edge={p + "->" + id}
            className={on ? "stroke-emerald-600" : "stroke-zinc-300 dark:stroke-zinc-700"} />;
        })}
        {history.map((h, i) => {
          const id = h.checkpoint.checkpoint_id;
          const b = branches.findIndex((br) => br.leaf === id);
          const active = id === selected;
          const on = !onBranchOf || onBranchOf.ids.has(id);
          const label = `step ${h.metadata?.step ?? "?"} · ${h.metadata?.source ?? ""}${i === 0 ? " · newest" : ""}`;
          const choose = () => { onSelect(id); if (b >= 0) onBranch(id); };
          return (
            <g key={id} role="button" tabIndex={0} aria-pressed={active} data-tree-node={id} data-tree-lane={lane.get(id) ?? 0}
              aria-label={(b >= 0 ? `branch ${b + 1}, ` : "") + label} className="cursor-pointer focus:outline-none [&:focus>circle]:stroke-sky-500"
              onClick={choose} onKeyDown={key(choose)}>
              <circle cx={x(id)} cy={y(id)} r={active ? R + 1 : R} strokeWidth={2}
                className={active ? "fill-emerald-500 stroke-emerald-700" : on ? "fill-white stroke-emerald-600 dark:fill-zinc-900" : "fill-white stroke-zinc-400 dark:fill-zinc-900"} />
              <text x={textX} y={y(id) + 4} className={on ? "fill-zinc-800 dark:fill-zinc-100" : "fill-zinc-400"}>
                {label}{b >= 0 ? ` — branch ${b + 1}` : ""}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
