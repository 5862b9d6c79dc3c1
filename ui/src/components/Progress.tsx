// Progress follows a run's node statuses as its stream's events arrive: tasks events (a task
// started, finished, failed or was interrupted), updates (a node's write) and debug events
// (task and task_result). It is fed events one by one by the chat and the run page.
import { useState } from "react";
import type { NodeStatus } from "./GraphView";

export type ProgressState = { order: string[]; status: Record<string, NodeStatus>; steps: { node: string; status: NodeStatus; at: number }[] };

export const emptyProgress = (): ProgressState => ({ order: [], status: {}, steps: [] });

function set(p: ProgressState, node: string, st: NodeStatus): ProgressState {
  if (node.startsWith("__") && node !== "__interrupt__") return p;
  if (node === "__interrupt__") {
    const status = { ...p.status };
    for (const [k, v] of Object.entries(status)) if (v === "running" || v === "pending") status[k] = "interrupted";
    // Not a node of the graph: the nodes it stopped are marked, and no step is added.
    return { ...p, status };
  }
  const order = p.order.includes(node) ? p.order : [...p.order, node];
  return { order, status: { ...p.status, [node]: st }, steps: [...p.steps, { node, status: st, at: Date.now() }] };
}

// feed folds one stream event into the progress. The event name may carry a subgraph suffix.
export function feed(p: ProgressState, event: string, data: unknown): ProgressState {
  const mode = event.split("|")[0];
  const d = data as Record<string, unknown> | null;
  if (!d || typeof d !== "object") return p;
  if (mode === "tasks" && typeof d.name === "string") {
    // A task's start is {id, name, input, triggers}; its end has result or error (LangGraph's shapes).
    if (!("result" in d) && !("error" in d)) return set(p, d.name, "running");
    if (d.error) return set(p, d.name, "error");
    if (Array.isArray(d.interrupts) && d.interrupts.length) return set(p, d.name, "interrupted");
    return set(p, d.name, "done");
  }
  if (mode === "updates") {
    let q = p;
    for (const k of Object.keys(d)) q = set(q, k, k === "__interrupt__" ? "interrupted" : "done");
    return q;
  }
  if (mode === "debug") {
    const payload = d.payload as Record<string, unknown> | undefined;
    const name = payload?.name;
    if (typeof name !== "string") return p;
    if (d.type === "task") return set(p, name, "running");
    if (d.type === "task_result") {
      if (payload?.error) return set(p, name, "error");
      if (Array.isArray(payload?.interrupts) && (payload.interrupts as unknown[]).length) return set(p, name, "interrupted");
      return set(p, name, "done");
    }
  }
  return p;
}

const badge: Record<NodeStatus, string> = {
  pending: "bg-zinc-100 text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300",
  running: "bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100",
  done: "bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100",
  error: "bg-red-100 text-red-900 dark:bg-red-900 dark:text-red-100",
  interrupted: "bg-sky-100 text-sky-900 dark:bg-sky-900 dark:text-sky-100",
};

export function ProgressSteps({ progress }: { progress: ProgressState }) {
  if (progress.steps.length === 0) return null;
  // One chip per node execution: a running step is replaced by its outcome.
  const chips: { node: string; status: NodeStatus }[] = [];
  for (const s of progress.steps) {
    const last = chips.findLastIndex((c) => c.node === s.node && c.status === "running");
    if (s.status !== "running" && last >= 0) chips[last] = { node: s.node, status: s.status };
    else if (!(s.status === "done" && chips.length && chips[chips.length - 1].node === s.node && chips[chips.length - 1].status === "done")) chips.push({ node: s.node, status: s.status });
  }
  return (
    <ol aria-label="progress" className="flex flex-wrap items-center gap-1 text-xs">
      {chips.map((c, i) => (
        <li key={i} data-progress-node={c.node} data-status={c.status} className={"rounded-full px-2 py-0.5 font-mono " + badge[c.status]}>
          {c.node} · {c.status}
        </li>
      ))}
    </ol>
  );
}

// pathOf is the path a run took through the graph, for GraphView: __start__, the nodes in the
// order they first finished, and __end__ when the run ended well.
export function pathOf(p: ProgressState, ended: boolean): string[] {
  const out = ["__start__"];
  for (const s of p.steps) if (s.status === "done" && out[out.length - 1] !== s.node) out.push(s.node);
  if (ended) out.push("__end__");
  return out;
}

// timeline pairs each node's start with its end: one row per execution, with the times the
// page saw them (a step seen only when it ended starts where the previous one ended).
export function timeline(p: ProgressState): { node: string; status: NodeStatus; start: number; end?: number }[] {
  const rows: { node: string; status: NodeStatus; start: number; end?: number }[] = [];
  for (const s of p.steps) {
    if (s.node === "interrupt") continue;
    const open = rows.findLastIndex((r) => r.node === s.node && r.end === undefined);
    if (s.status === "running") {
      if (open < 0) rows.push({ node: s.node, status: "running", start: s.at });
    } else if (open >= 0) rows[open] = { ...rows[open], status: s.status, end: s.at };
    else if (rows.findLast((r) => r.node === s.node)?.status !== s.status) {
      // An outcome with no start seen (a step reported only by its updates); the same outcome
      // reported again (tasks, then updates) is one step.
      const prev = rows.length ? (rows[rows.length - 1].end ?? rows[rows.length - 1].start) : s.at;
      rows.push({ node: s.node, status: s.status, start: Math.min(prev, s.at), end: s.at });
    }
  }
  return rows;
}

// StepTimeline lists a run's steps with their start (from the first), end and duration, as bars
// on one time scale; a fast run can be replayed afterwards, one step at a time.
export function StepTimeline({ progress }: { progress: ProgressState }) {
  const rows = timeline(progress);
  const [at, setAt] = useState<number | null>(null);
  if (!rows.length) return null;
  const t0 = rows[0].start;
  const t1 = Math.max(...rows.map((r) => r.end ?? Date.now()), t0 + 1);
  const ms = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
  const shown = at === null ? rows.length : at + 1;
  return (
    <section aria-label="step timeline" className="mt-3">
      <div className="mb-1 flex flex-wrap items-center gap-2 text-xs">
        <h3 className="font-medium">Steps</h3>
        <button className="btn !px-2 !py-0.5 text-xs" onClick={() => setAt((a) => (a === null || a >= rows.length - 1 ? 0 : a + 1))}>
          {at === null ? "Replay step by step" : at >= rows.length - 1 ? "Start again" : "Next step"}
        </button>
        {at !== null && <button className="btn !px-2 !py-0.5 text-xs" onClick={() => setAt(null)}>Show all</button>}
        {at !== null && <span className="muted" data-replay-step={at + 1}>step {at + 1} of {rows.length}</span>}
      </div>
      <ol className="flex flex-col gap-0.5 text-xs">
        {rows.slice(0, shown).map((r, i) => {
          const end = r.end ?? Date.now();
          return (
            <li key={i} data-step-node={r.node} data-status={r.status} className="grid grid-cols-[7rem_1fr_4.5rem] items-center gap-2">
              <span className="truncate font-mono" title={r.node}>{r.node}</span>
              <span className="relative h-3 rounded bg-zinc-100 dark:bg-zinc-800">
                <span className={"absolute inset-y-0 rounded " + (r.status === "running" ? "animate-pulse bg-amber-400" : r.status === "error" ? "bg-red-500" : "bg-emerald-500")}
                  style={{ left: ((r.start - t0) / (t1 - t0)) * 100 + "%", width: Math.max(1.5, ((end - r.start) / (t1 - t0)) * 100) + "%" }} />
              </span>
              <span className="muted text-right tabular-nums">{r.end === undefined ? "running" : ms.format(Math.max(0, r.end - r.start)) + " ms"}</span>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
