// Threads: search the caller's threads by ID, status and metadata; each opens the inspector.
import { useCallback, useEffect, useState } from "react";
import { api, APIError, short, when, type Thread } from "../api";
import { Link, navigate, ui } from "../router";
import { ErrorBox } from "../components/Json";
import { Table } from "../components/Table";

const statuses = ["", "idle", "busy", "interrupted", "error"];

export function Threads({ graphId }: { graphId?: string }) {
  const [rows, setRows] = useState<Thread[] | null>(null);
  const [id, setId] = useState("");
  const [status, setStatus] = useState("");
  const [meta, setMeta] = useState(graphId ? JSON.stringify({ graph_id: graphId }) : "");
  const [err, setErr] = useState<unknown>(null);
  const search = useCallback(async () => {
    setErr(null);
    try {
      if (id.trim()) {
        const t = await api<Thread>("GET", "/threads/" + encodeURIComponent(id.trim()));
        setRows([t]);
        return;
      }
      const body: Record<string, unknown> = { limit: 100, sort_by: "updated_at", sort_order: "desc" };
      if (status) body.status = status;
      if (meta.trim()) {
        try { body.metadata = JSON.parse(meta); } catch { throw new Error("Metadata must be a JSON object, such as {\"graph_id\": \"example\"}."); }
      }
      setRows(await api<Thread[]>("POST", "/threads/search", body));
    } catch (x) {
      if (x instanceof APIError && x.status === 404) setRows([]);
      else setErr(x);
    }
  }, [id, status, meta]);
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(() => { void search(); }, []);
  return (
    <section aria-label="threads" className="flex flex-col gap-3">
      {!graphId && <h1 className="text-xl font-semibold">Threads</h1>}
      <form className="grid gap-2 sm:grid-cols-[1fr_10rem_1fr_auto]" onSubmit={(e) => { e.preventDefault(); void search(); }}>
        <label className="text-sm">Thread ID<input data-search className="input mt-1 font-mono" value={id} onChange={(e) => setId(e.target.value)} placeholder="any thread's ID" /></label>
        <label className="text-sm">Status
          <select className="input mt-1" value={status} onChange={(e) => setStatus(e.target.value)}>
            {statuses.map((s) => <option key={s} value={s}>{s || "any"}</option>)}
          </select>
        </label>
        <label className="text-sm">Metadata (JSON)<input className="input mt-1 font-mono" value={meta} onChange={(e) => setMeta(e.target.value)} placeholder='{"graph_id": "example"}' /></label>
        <button className="btn-primary self-end">Search</button>
      </form>
      <ErrorBox error={err} />
      {rows && (
        <Table label="threads" rows={rows} rowKey={(t) => t.thread_id} empty="No thread matches."
          columns={[
            { key: "thread_id", header: "Thread", render: (t) => <Link className="font-mono underline" to={ui("/threads/" + t.thread_id)}>{short(t.thread_id)}</Link> },
            { key: "status", header: "Status" },
            { key: "graph", header: "Graph", value: (t) => String(t.metadata?.graph_id ?? ""), render: (t) => String(t.metadata?.graph_id ?? "") },
            { key: "updated_at", header: "Updated", render: (t) => when(t.updated_at) },
            { key: "open", header: "", render: (t) => t.metadata?.assistant_id ? (
              <button className="btn" onClick={() => navigate(ui("/assistants/" + encodeURIComponent(String(t.metadata!.assistant_id)) + "?thread=" + t.thread_id))}>Chat</button>) : null },
          ]} />
      )}
    </section>
  );
}
