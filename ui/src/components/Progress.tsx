// Progress follows a run's node statuses as its stream's events arrive: tasks events (a task
// started, finished, failed or was interrupted), updates (a node's write) and debug events
// (task and task_result). It is fed events one by one by the chat and the run page.
import type { NodeStatus } from "./GraphView";

export type ProgressState = { order: string[]; status: Record<string, NodeStatus>; steps: { node: string; status: NodeStatus; at: number }[] };

export const emptyProgress = (): ProgressState => ({ order: [], status: {}, steps: [] });

function set(p: ProgressState, node: string, st: NodeStatus): ProgressState {
  if (node.startsWith("__") && node !== "__interrupt__") return p;
  if (node === "__interrupt__") {
    const status = { ...p.status };
    for (const [k, v] of Object.entries(status)) if (v === "running" || v === "pending") status[k] = "interrupted";
    return { ...p, status, steps: [...p.steps, { node: "interrupt", status: "interrupted", at: Date.now() }] };
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
