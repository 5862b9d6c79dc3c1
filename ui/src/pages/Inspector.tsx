// The thread inspector: the thread's state, its checkpoint history drawn as a fork tree and
// listed as a timeline (select one to
// see its values, re-run from it, or fork from it by editing its state), the state edited as a
// node, and the thread's runs with their status, duration and a cancel button.
import { useCallback, useEffect, useState } from "react";
import { api, interruptsOf, short, textOf, when, type GraphJSON, type Message, type Run, type Thread, type ThreadState } from "../api";
import { Link, navigate, ui } from "../router";
import { ErrorBox, Json } from "../components/Json";
import { LineChart } from "../components/LineChart";
import { StateEditor } from "../components/StateEditor";
import { Table } from "../components/Table";
import { ForkTree } from "../components/ForkTree";

export const runModes = ["messages-tuple", "updates", "tasks", "values"];

function prefill(values: unknown): unknown {
  const ms = (values as { messages?: Message[] } | null)?.messages;
  if (Array.isArray(ms) && ms.length) return { messages: [ms[ms.length - 1]] };
  return values ?? {};
}

export function ThreadInspector({ tid }: { tid: string }) {
  const [thread, setThread] = useState<Thread | null>(null);
  const [history, setHistory] = useState<ThreadState[]>([]);
  const [runs, setRuns] = useState<Run[]>([]);
  const [sel, setSel] = useState<string>("");
  const [editing, setEditing] = useState<"" | "fork" | "edit">("");
  const [nodes, setNodes] = useState<string[]>([]);
  const [err, setErr] = useState<unknown>(null);
  const [note, setNote] = useState("");
  const [branch, setBranch] = useState("");

  const load = useCallback(async () => {
    try {
      const [t, h, r] = await Promise.all([
        api<Thread>("GET", `/threads/${tid}`),
        api<ThreadState[]>("POST", `/threads/${tid}/history`, { limit: 100 }),
        api<Run[]>("GET", `/threads/${tid}/runs?limit=100`),
      ]);
      setThread(t);
      setHistory(h);
      setRuns(r);
      return { t, h, r };
    } catch (x) {
      setErr(x);
      return null;
    }
  }, [tid]);
  useEffect(() => { void load(); }, [load]);

  const assistantId = String(thread?.metadata?.assistant_id ?? thread?.metadata?.graph_id ?? runs[0]?.assistant_id ?? "");
  useEffect(() => {
    if (!assistantId) return;
    api<GraphJSON>("GET", "/assistants/" + encodeURIComponent(assistantId) + "/graph")
      .then((g) => setNodes(g.nodes.map((n) => n.id).filter((n) => !n.startsWith("__"))), () => {});
  }, [assistantId]);

  const head = history[0];
  const chosen = history.find((h) => h.checkpoint.checkpoint_id === sel) ?? head;
  const tree = branchesOf(history);
  const onBranch = tree.find((b) => b.leaf === branch);
  const shown = onBranch ? history.filter((h) => onBranch.ids.has(h.checkpoint.checkpoint_id)) : history;

  const rerun = async (checkpointId?: string) => {
    setErr(null);
    if (!assistantId) { setErr(new Error("This thread names no assistant in its metadata and has no run: start it from an assistant's chat.")); return; }
    try {
      // An empty command continues from the checkpoint (past a breakpoint it stopped at).
      const body: Record<string, unknown> = { assistant_id: assistantId, command: {}, stream_mode: runModes };
      if (checkpointId) body.checkpoint_id = checkpointId;
      const run = await api<Run>("POST", `/threads/${tid}/runs`, body);
      navigate(ui(`/threads/${tid}/runs/${run.run_id}`));
    } catch (x) {
      setErr(x);
    }
  };
  const cancel = async (r: Run) => {
    try {
      await api("POST", `/threads/${tid}/runs/${r.run_id}/cancel?wait=1`);
    } catch (x) {
      setErr(x);
    }
    void load();
  };

  // A run's seconds from its creation to its last update; never below zero (clocks of the rows may differ).
  const dur = (r: Run) => Math.max(0, (new Date(r.updated_at).getTime() - new Date(r.created_at).getTime()) / 1000);
  const finished = runs.filter((r) => !["pending", "running"].includes(r.status));
  const interrupts = interruptsOf(head);

  return (
    <div className="flex flex-col gap-4">
      <header className="flex flex-wrap items-baseline gap-3">
        <h1 className="text-xl font-semibold">Thread <span className="font-mono">{short(tid)}</span></h1>
        {thread && <span className="rounded-full bg-zinc-100 px-2 py-0.5 text-xs dark:bg-zinc-800" data-thread-status={thread.status}>{thread.status}</span>}
        {assistantId && <Link className="btn" to={ui("/assistants/" + encodeURIComponent(assistantId) + "?thread=" + tid)}>Open in chat</Link>}
        <button className="btn" onClick={() => void load()}>Refresh</button>
      </header>
      <ErrorBox error={err} />
      {note && <p role="status" className="rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-900 dark:bg-emerald-950 dark:text-emerald-100">{note}</p>}
      <div className="grid gap-4 xl:grid-cols-[22rem_1fr]">
        <section aria-label="history">
          <h2 className="mb-2 font-semibold">History <span className="muted text-sm">({history.length} checkpoints)</span></h2>
          {tree.length > 1 && (
            <div role="group" aria-label="branches" className="mb-2 flex flex-col gap-1 text-sm">
              <p className="muted text-xs">{tree.length} branches: each fork starts one. Choose one to see only its checkpoints.</p>
              <div className="flex flex-wrap gap-1">
                <button className="btn !py-0.5 text-xs" aria-pressed={!onBranch} onClick={() => setBranch("")}>All</button>
                {tree.map((b, i) => (
                  <button key={b.leaf} className={"btn !py-0.5 text-xs " + (onBranch?.leaf === b.leaf ? "!border-emerald-600 !bg-emerald-50 dark:!bg-emerald-950" : "")}
                    aria-pressed={onBranch?.leaf === b.leaf} data-branch={i + 1} title={b.preview}
                    onClick={() => { setBranch(b.leaf); setSel(b.leaf); setEditing(""); }}>
                    Branch {i + 1}{i === 0 ? " (newest)" : ""} · {b.ids.size} steps
                  </button>
                ))}
              </div>
              {onBranch && <p className="muted truncate text-xs" data-branch-preview="">{onBranch.preview}</p>}
            </div>
          )}
          <ForkTree history={history} branches={tree} selected={chosen?.checkpoint.checkpoint_id} branch={onBranch?.leaf}
            onSelect={(id) => { setSel(id); setEditing(""); if (onBranch && !onBranch.ids.has(id)) setBranch(""); }}
            onBranch={(leaf) => setBranch(tree.length > 1 ? leaf : "")} />
          <ol className="relative ml-2 border-l border-zinc-300 dark:border-zinc-700">
            {shown.map((h) => {
              const i = history.indexOf(h);
              const id = h.checkpoint.checkpoint_id;
              const active = chosen?.checkpoint.checkpoint_id === id;
              const msgs = (h.values as { messages?: unknown[] } | null)?.messages;
              return (
                <li key={id} className="mb-2 ml-4" data-checkpoint={id} data-step={h.metadata?.step}>
                  <span className={"absolute -left-1.5 mt-2 h-3 w-3 rounded-full border " + (active ? "border-emerald-600 bg-emerald-500" : "border-zinc-400 bg-white dark:bg-zinc-900")} />
                  <button onClick={() => { setSel(id); setEditing(""); }} aria-pressed={active}
                    className={"w-full rounded-md px-2 py-1 text-left text-sm " + (active ? "bg-emerald-50 dark:bg-emerald-950" : "hover:bg-zinc-100 dark:hover:bg-zinc-900")}>
                    <span className="font-medium">step {h.metadata?.step ?? "?"}</span> · {h.metadata?.source ?? ""}{i === 0 ? " · newest" : ""}
                    <span className="muted block text-xs">
                      {h.next.length ? "next: " + h.next.join(", ") : "done"}{Array.isArray(msgs) ? ` · ${msgs.length} message${msgs.length === 1 ? "" : "s"}` : ""} · <span className="font-mono">{short(id, 12)}</span>
                    </span>
                    <span className="muted block text-xs">{when(h.created_at)}</span>
                    {h.parent_checkpoint && history[i + 1] && h.parent_checkpoint.checkpoint_id !== history[i + 1].checkpoint.checkpoint_id && (
                      <span className="block text-xs text-amber-700 dark:text-amber-400" data-fork-of={h.parent_checkpoint.checkpoint_id}>
                        branches from <span className="font-mono">{short(h.parent_checkpoint.checkpoint_id, 12)}</span>
                      </span>
                    )}
                  </button>
                </li>
              );
            })}
          </ol>
        </section>
        <section aria-label="checkpoint" className="flex min-w-0 flex-col gap-3">
          {chosen && (
            <div className="card flex flex-col gap-2">
              <h2 className="font-semibold">
                {chosen === head ? "Current state" : "Checkpoint at step " + chosen.metadata?.step}
                <span className="muted ml-2 font-mono text-xs">{chosen.checkpoint.checkpoint_id}</span>
              </h2>
              <p className="text-sm">Next: {chosen.next.length ? chosen.next.join(", ") : "nothing (the run ended here)"}</p>
              {chosen === head && interrupts.length > 0 && <Json label={`Waiting on ${interrupts.length} interrupt(s)`} value={interrupts} open />}
              <Json label="Values" value={chosen.values} open />
              <Json label="Metadata" value={chosen.metadata} />
              <div className="flex flex-wrap gap-2">
                {chosen === head ? (
                  <>
                    <button className="btn" onClick={() => setEditing("edit")}>Edit state</button>
                    {head.next.length > 0 && <button className="btn-primary" onClick={() => void rerun()}>Continue</button>}
                  </>
                ) : (
                  <>
                    <button className="btn" onClick={() => setEditing("fork")}>Fork from here</button>
                    <button className="btn-primary" onClick={() => void rerun(chosen.checkpoint.checkpoint_id)}>Re-run from here</button>
                  </>
                )}
              </div>
            </div>
          )}
          {editing && chosen && (
            <StateEditor key={chosen.checkpoint.checkpoint_id + editing} tid={tid}
              title={editing === "fork" ? "Fork from step " + chosen.metadata?.step : "Edit the current state"}
              checkpointId={editing === "fork" ? chosen.checkpoint.checkpoint_id : undefined}
              initial={prefill(chosen.values)} nodes={nodes} onClose={() => setEditing("")}
              onSaved={async (cid) => {
                setEditing("");
                await load();
                setSel(cid);
                setNote(`Saved checkpoint ${short(cid, 12)}: it is now the thread's newest. Continue to run from it.`);
              }} />
          )}
        </section>
      </div>
      <section aria-label="runs" className="flex flex-col gap-2">
        <h2 className="font-semibold">Runs</h2>
        <Table label="runs" rows={runs} rowKey={(r) => r.run_id} initialSort={{ key: "created_at", desc: true }} empty="No run on this thread."
          columns={[
            { key: "run_id", header: "Run", render: (r) => <Link className="font-mono underline" to={ui(`/threads/${tid}/runs/${r.run_id}`)}>{short(r.run_id)}</Link> },
            { key: "status", header: "Status", render: (r) => <span data-run-status={r.status}>{r.status}</span> },
            { key: "created_at", header: "Created", render: (r) => when(r.created_at) },
            { key: "duration", header: "Seconds", align: "right", value: dur, render: (r) => dur(r).toFixed(2) },
            { key: "cancel", header: "", render: (r) => ["pending", "running"].includes(r.status) ? <button className="btn" onClick={() => void cancel(r)}>Cancel</button> : null },
          ]} />
        {finished.length >= 2 && (
          <LineChart title="Run durations" yLabel="seconds" xLabel="run, oldest first" bars
            xLabels={[...finished].reverse().map((r) => short(r.run_id, 6))}
            series={[{ name: "seconds", points: [...finished].reverse().map((r, i) => ({ x: i, y: Number(dur(r).toFixed(3)) })) }]} />
        )}
      </section>
    </div>
  );
}

// branchesOf finds the branches of a thread's history: every checkpoint that is no other's parent
// ends one, which runs from it back to the first checkpoint. The newest branch comes first; each
// is previewed by its last message.
export function branchesOf(history: ThreadState[]): { leaf: string; ids: Set<string>; preview: string }[] {
  const byId = new Map(history.map((h) => [h.checkpoint.checkpoint_id, h]));
  const parents = new Set(history.map((h) => h.parent_checkpoint?.checkpoint_id).filter(Boolean) as string[]);
  return history.filter((h) => !parents.has(h.checkpoint.checkpoint_id)).map((leaf) => {
    const ids = new Set<string>();
    for (let h: ThreadState | undefined = leaf; h && !ids.has(h.checkpoint.checkpoint_id); h = h.parent_checkpoint ? byId.get(h.parent_checkpoint.checkpoint_id) : undefined)
      ids.add(h.checkpoint.checkpoint_id);
    const msgs = (leaf.values as { messages?: Message[] } | null)?.messages;
    const last = Array.isArray(msgs) && msgs.length ? textOf(msgs[msgs.length - 1].content) : "";
    return { leaf: leaf.checkpoint.checkpoint_id, ids, preview: last.replace(/\s+/g, " ").slice(0, 140) };
  });
}
