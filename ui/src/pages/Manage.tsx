// Pages that manage the server's objects across assistants: assistants (create, edit, whose
// edits make versions, and pick the version in use), crons (create, list, delete) and the
// inbox of every interrupted thread, answered in place.
import { useCallback, useEffect, useState } from "react";
import { api, interruptsOf, short, sse, when, type Assistant, type Thread, type ThreadState } from "../api";
import { Link, ui } from "../router";
import type { Catalog } from "../App";
import { ErrorBox } from "../components/Json";
import { InboxCard } from "../components/InboxCard";
import { Table } from "../components/Table";

type Versioned = Assistant & { config?: { configurable?: Record<string, unknown> }; context?: Record<string, unknown> };

// parseObject reads a JSON object from a field; it throws saying which field is wrong.
function parseObject(label: string, text: string): Record<string, unknown> | undefined {
  if (!text.trim()) return undefined;
  let v: unknown;
  try { v = JSON.parse(text); } catch { throw new Error(`${label}: write a JSON object, such as {"approvals": true}`); }
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error(`${label}: give an object ({…}), not ${Array.isArray(v) ? "an array" : typeof v}`);
  return v as Record<string, unknown>;
}

const graphsOf = (catalog: Catalog | null) => [...new Set((catalog?.assistants ?? []).map((a) => a.graph_id))].sort();

export function Assistants({ catalog, onChanged }: { catalog: Catalog | null; onChanged: () => void }) {
  const [rows, setRows] = useState<Versioned[] | null>(null);
  const [sel, setSel] = useState<Versioned | null>(null);
  const [err, setErr] = useState<unknown>(null);
  const load = useCallback(async () => {
    try {
      setRows(await api<Versioned[]>("POST", "/assistants/search", { limit: 100, sort_by: "created_at", sort_order: "desc" }));
    } catch (x) { setErr(x); }
  }, []);
  useEffect(() => { void load(); }, [load]);
  return (
    <div className="flex flex-col gap-4">
      <h1 className="text-xl font-semibold">Assistants</h1>
      <p className="muted -mt-3 text-sm">An assistant is a graph with its configuration. Editing one makes a new version; any version can be made the one in use.</p>
      <ErrorBox error={err} />
      <div className="grid gap-4 lg:grid-cols-[1fr_22rem]">
        <Table label="assistants" rows={rows ?? []} rowKey={(a) => a.assistant_id} empty={rows ? "No assistant." : "Loading…"} initialSort={{ key: "name", desc: false }}
          columns={[
            { key: "name", header: "Name", render: (a) => <button className="underline" onClick={() => setSel(a)}>{a.name}</button> },
            { key: "graph_id", header: "Graph", render: (a) => <span className="font-mono text-xs">{a.graph_id}</span> },
            { key: "version", header: "Version", align: "right", render: (a) => <span data-version={a.version}>{a.version ?? 1}</span> },
            { key: "updated_at", header: "Updated", render: (a) => when(a.updated_at) },
            { key: "open", header: "", render: (a) => <Link className="underline" to={ui("/assistants/" + a.assistant_id)}>Open in Studio</Link> },
          ]} />
        <div className="flex flex-col gap-4">
          {sel ? <AssistantEditor key={sel.assistant_id + ":" + sel.version} a={sel} onSaved={async (a) => { setSel(a); await load(); onChanged(); }} onClose={() => setSel(null)} />
            : <AssistantForm graphs={graphsOf(catalog)} onSaved={async (a) => { setSel(a); await load(); onChanged(); }} />}
        </div>
      </div>
    </div>
  );
}

function AssistantForm({ graphs, onSaved }: { graphs: string[]; onSaved: (a: Versioned) => void }) {
  const [graph, setGraph] = useState("");
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [configurable, setConfigurable] = useState("");
  const [err, setErr] = useState<unknown>(null);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setErr(null);
    try {
      if (!graph) throw new Error("Choose the graph the assistant runs.");
      const c = parseObject("Configurable", configurable);
      onSaved(await api<Versioned>("POST", "/assistants", { graph_id: graph, name: name.trim() || undefined, description: description.trim() || undefined, ...(c ? { config: { configurable: c } } : {}) }));
      setName(""); setDescription(""); setConfigurable("");
    } catch (x) { setErr(x); }
  };
  return (
    <form aria-label="new assistant" className="card flex flex-col gap-2" onSubmit={submit}>
      <h2 className="font-medium">New assistant</h2>
      <label className="text-sm">Graph
        <select className="input mt-0.5" value={graph} onChange={(e) => setGraph(e.target.value)}>
          <option value="">—</option>
          {graphs.map((g) => <option key={g} value={g}>{g}</option>)}
        </select>
      </label>
      <label className="text-sm">Name<input className="input mt-0.5" value={name} onChange={(e) => setName(e.target.value)} /></label>
      <label className="text-sm">Description<input className="input mt-0.5" value={description} onChange={(e) => setDescription(e.target.value)} /></label>
      <label className="text-sm">Configurable (JSON)<textarea className="input mt-0.5 font-mono text-xs" rows={3} placeholder='{"greeting": "Hi"}' value={configurable} onChange={(e) => setConfigurable(e.target.value)} /></label>
      <ErrorBox error={err} />
      <div><button className="btn-primary">Create</button></div>
    </form>
  );
}

function AssistantEditor({ a, onSaved, onClose }: { a: Versioned; onSaved: (a: Versioned) => void; onClose: () => void }) {
  const [name, setName] = useState(a.name);
  const [description, setDescription] = useState(a.description ?? "");
  const [configurable, setConfigurable] = useState(JSON.stringify(a.config?.configurable ?? {}, null, 2));
  const [versions, setVersions] = useState<Versioned[]>([]);
  const [err, setErr] = useState<unknown>(null);
  const loadVersions = useCallback(async () => {
    try { setVersions(await api<Versioned[]>("POST", `/assistants/${a.assistant_id}/versions`, { limit: 50 })); } catch (x) { setErr(x); }
  }, [a.assistant_id]);
  useEffect(() => { void loadVersions(); }, [loadVersions]);
  const save = async (e: React.FormEvent) => {
    e.preventDefault();
    setErr(null);
    try {
      const c = parseObject("Configurable", configurable) ?? {};
      onSaved(await api<Versioned>("PATCH", `/assistants/${a.assistant_id}`, { name, description, config: { configurable: c } }));
    } catch (x) { setErr(x); }
  };
  const use = async (v: number) => {
    setErr(null);
    try { onSaved(await api<Versioned>("POST", `/assistants/${a.assistant_id}/latest`, { version: v })); } catch (x) { setErr(x); }
  };
  return (
    <>
      <form aria-label="edit assistant" className="card flex flex-col gap-2" onSubmit={save}>
        <div className="flex items-baseline gap-2">
          <h2 className="font-medium">{a.name}</h2>
          <span className="muted font-mono text-xs">{a.graph_id} · v{a.version ?? 1}</span>
          <span className="flex-1" />
          <button type="button" className="btn !py-0.5 text-xs" onClick={onClose}>New assistant</button>
        </div>
        <label className="text-sm">Name<input className="input mt-0.5" value={name} onChange={(e) => setName(e.target.value)} /></label>
        <label className="text-sm">Description<input className="input mt-0.5" value={description} onChange={(e) => setDescription(e.target.value)} /></label>
        <label className="text-sm">Configurable (JSON)<textarea className="input mt-0.5 font-mono text-xs" rows={4} value={configurable} onChange={(e) => setConfigurable(e.target.value)} /></label>
        <ErrorBox error={err} />
        <div className="flex gap-2"><button className="btn-primary">Save as a new version</button>
          <Link className="btn" to={ui("/assistants/" + a.assistant_id)}>Open in Studio</Link></div>
      </form>
      <section aria-label="versions" className="card">
        <h2 className="mb-1 font-medium">Versions</h2>
        <ol className="flex flex-col gap-1 text-sm">
          {versions.map((v) => (
            <li key={v.version} data-version={v.version} className="flex items-center gap-2">
              <span className="font-mono">v{v.version}</span>
              <span className="muted truncate text-xs">{when(v.created_at)} · {JSON.stringify(v.config?.configurable ?? {})}</span>
              <span className="flex-1" />
              {v.version === a.version ? <span className="text-xs font-medium text-emerald-700 dark:text-emerald-300">in use</span>
                : <button className="btn whitespace-nowrap !py-0.5 text-xs" onClick={() => void use(v.version!)}>Use v{v.version}</button>}
            </li>
          ))}
        </ol>
      </section>
    </>
  );
}

type Cron = { cron_id: string; assistant_id: string; thread_id: string | null; schedule: string; next_run_date?: string | null; enabled: boolean; payload?: Record<string, unknown>; created_at: string };

export function Crons({ catalog }: { catalog: Catalog | null }) {
  const [rows, setRows] = useState<Cron[] | null>(null);
  const [aid, setAid] = useState("");
  const [schedule, setSchedule] = useState("*/15 * * * *");
  const [message, setMessage] = useState("");
  const [err, setErr] = useState<unknown>(null);
  const load = useCallback(async () => {
    try { setRows(await api<Cron[]>("POST", "/runs/crons/search", { limit: 100 })); } catch (x) { setErr(x); }
  }, []);
  useEffect(() => { void load(); }, [load]);
  const create = async (e: React.FormEvent) => {
    e.preventDefault();
    setErr(null);
    try {
      if (!aid) throw new Error("Choose the assistant the cron runs.");
      await api("POST", "/runs/crons", { assistant_id: aid, schedule: schedule.trim(), ...(message.trim() ? { input: { messages: [{ role: "user", content: message.trim() }] } } : {}) });
      setMessage("");
      await load();
    } catch (x) { setErr(x); }
  };
  const remove = async (c: Cron) => {
    try { await api("DELETE", "/runs/crons/" + c.cron_id); await load(); } catch (x) { setErr(x); }
  };
  const name = (id: string) => catalog?.assistants.find((a) => a.assistant_id === id)?.name ?? short(id);
  return (
    <div className="flex flex-col gap-4">
      <h1 className="text-xl font-semibold">Crons</h1>
      <p className="muted -mt-3 text-sm">Runs started on a schedule (cron syntax, in UTC), each on a new thread.</p>
      <ErrorBox error={err} />
      <form aria-label="new cron" className="card grid gap-2 sm:grid-cols-[1fr_12rem_2fr_auto] sm:items-end" onSubmit={create}>
        <label className="text-sm">Assistant
          <select className="input mt-0.5" value={aid} onChange={(e) => setAid(e.target.value)}>
            <option value="">—</option>
            {catalog?.assistants.map((a) => <option key={a.assistant_id} value={a.assistant_id}>{a.name}</option>)}
          </select>
        </label>
        <label className="text-sm">Schedule<input className="input mt-0.5 font-mono" value={schedule} onChange={(e) => setSchedule(e.target.value)} /></label>
        <label className="text-sm">Message<input className="input mt-0.5" placeholder="the input's message (optional)" value={message} onChange={(e) => setMessage(e.target.value)} /></label>
        <button className="btn-primary">Create</button>
      </form>
      <Table label="crons" rows={rows ?? []} rowKey={(c) => c.cron_id} empty={rows ? "No cron yet." : "Loading…"} initialSort={{ key: "created_at", desc: true }}
        columns={[
          { key: "assistant_id", header: "Assistant", render: (c) => name(c.assistant_id) },
          { key: "schedule", header: "Schedule", render: (c) => <span className="font-mono" data-schedule={c.schedule}>{c.schedule}</span> },
          { key: "next_run_date", header: "Next run", render: (c) => (c.enabled ? when(c.next_run_date ?? undefined) : "disabled") },
          { key: "created_at", header: "Created", render: (c) => when(c.created_at) },
          { key: "delete", header: "", render: (c) => <button className="btn !py-0.5 text-xs" onClick={() => void remove(c)}>Delete</button> },
        ]} />
    </div>
  );
}

type Waiting = { thread: Thread; state: ThreadState };

// Inbox lists every interrupted thread the caller may see, across assistants, with its cards;
// an answer resumes the thread's run in place (streamed until it ends) and the list is read again.
export function Inbox() {
  const [items, setItems] = useState<Waiting[] | null>(null);
  const [busy, setBusy] = useState("");
  const [err, setErr] = useState<unknown>(null);
  const load = useCallback(async () => {
    try {
      const ts = await api<Thread[]>("POST", "/threads/search", { status: "interrupted", limit: 50, sort_by: "updated_at", sort_order: "desc" });
      const out: Waiting[] = [];
      for (const t of ts) out.push({ thread: t, state: await api<ThreadState>("GET", `/threads/${t.thread_id}/state`) });
      setItems(out.filter((w) => interruptsOf(w.state).length > 0));
    } catch (x) { setErr(x); }
  }, []);
  useEffect(() => { void load(); }, [load]);
  const answer = async (w: Waiting, value: unknown, id?: string) => {
    const tid = w.thread.thread_id;
    const meta = (w.thread.metadata ?? {}) as { assistant_id?: string; graph_id?: string };
    const its = interruptsOf(w.state);
    setBusy(tid);
    setErr(null);
    try {
      const body = { assistant_id: meta.assistant_id ?? meta.graph_id, command: { resume: its.length > 1 && id ? { [id]: value } : value }, stream_mode: ["values"] };
      for await (const ev of sse("POST", `/threads/${tid}/runs/stream`, body)) if (ev.event === "error") throw new Error(JSON.stringify(ev.data));
      await load();
    } catch (x) { setErr(x); } finally { setBusy(""); }
  };
  return (
    <div className="flex flex-col gap-4">
      <h1 className="text-xl font-semibold">Inbox</h1>
      <p className="muted -mt-3 text-sm">Every thread waiting for a person, across assistants. Answer here, or open the thread.</p>
      <ErrorBox error={err} />
      {items === null ? <p className="muted">Loading…</p> : items.length === 0 ? <p className="muted" data-inbox-empty="">Nothing waits for you.</p> : (
        <ol className="flex flex-col gap-4">
          {items.map((w) => {
            const meta = (w.thread.metadata ?? {}) as { assistant_id?: string; graph_id?: string };
            const aid = meta.assistant_id ?? meta.graph_id ?? "";
            return (
              <li key={w.thread.thread_id} data-inbox-thread={w.thread.thread_id} className="flex flex-col gap-1">
                <p className="flex flex-wrap items-baseline gap-2 text-sm">
                  <span className="font-medium">{meta.graph_id ?? "thread"}</span>
                  <Link className="font-mono text-xs underline" to={ui("/assistants/" + encodeURIComponent(aid) + "?thread=" + w.thread.thread_id)}>{short(w.thread.thread_id)}</Link>
                  <span className="muted text-xs">{when(w.thread.updated_at)}</span>
                  {busy === w.thread.thread_id && <span className="muted text-xs" aria-live="polite">answering…</span>}
                </p>
                {interruptsOf(w.state).map((it, i) => (
                  <InboxCard key={it.id ?? i} interrupt={it} busy={busy === w.thread.thread_id} onResume={(v) => void answer(w, v, it.id)} />
                ))}
              </li>
            );
          })}
        </ol>
      )}
    </div>
  );
}
