// An item: its Details (each field edited on its own, as an audited single-field update, with
// the audit trail), its Research (start, live progress, pricing, evidence, history) and its
// Chat (sessions, streamed answers, proposed changes applied once).
import { useCallback, useEffect, useRef, useState } from "react";
import { Link, navigate, ui } from "../../../router";
import { ErrorBox } from "../../../components/Json";
import { APIError } from "../../../api";
import { lf, money, when, ago, type Audit, type Item, type Research } from "./lf";
import { ResearchTab } from "./Research";
import { ChatTab } from "./Chat";

const tabs = [["details", "Details"], ["research", "Research"], ["chat", "Chat"]] as const;

export function ItemPage({ id, tab }: { id: string; tab: string }) {
  const [item, setItem] = useState<Item | null>(null);
  const [err, setErr] = useState<unknown>(null);
  const [latest, setLatest] = useState<Research | null | undefined>(undefined);
  const [job, setJob] = useState<string | null>(null); // a research job started from here (or from the chat)
  const [auditKey, setAuditKey] = useState(0);

  const load = useCallback(async () => {
    setErr(null);
    try {
      setItem(await lf<Item>("GET", "/items/" + id));
      setLatest(await lf<Research | null>("GET", "/items/" + id + "/research/latest"));
    } catch (x) {
      setErr(x);
    }
  }, [id]);
  useEffect(() => { void load(); }, [load]);

  const itemChanged = useCallback((it: Item) => { setItem(it); setAuditKey((k) => k + 1); }, []);
  const jobStarted = useCallback((j: string) => setJob(j), []);

  const tabRefs = useRef<(HTMLButtonElement | null)[]>([]);
  const current = tabs.some(([t]) => t === tab) ? tab : "details";
  const go = (t: string) => navigate(ui("/apps/listforge/items/" + id + "?tab=" + t), true);
  const onKey = (e: React.KeyboardEvent, i: number) => {
    const n = e.key === "ArrowRight" ? (i + 1) % tabs.length : e.key === "ArrowLeft" ? (i + tabs.length - 1) % tabs.length : -1;
    if (n < 0) return;
    e.preventDefault();
    go(tabs[n][0]);
    tabRefs.current[n]?.focus();
  };

  if (err) {
    const missing = err instanceof APIError && err.status === 404;
    return (
      <div className="flex flex-col gap-3">
        <Link className="text-sm underline" to={ui("/apps/listforge")}>← Items</Link>
        {missing ? <div className="card"><h1 className="font-semibold">No such item</h1><p className="muted text-sm">It was deleted, or it belongs to another organisation.</p></div> : <ErrorBox error={err} />}
        {!missing && <button className="btn self-start" onClick={() => void load()}>Try again</button>}
      </div>
    );
  }
  if (!item) return <p className="muted" role="status">Loading the item…</p>;

  const target = latest?.data.priceBands?.find((b) => b.label === "target");
  return (
    <div className="flex flex-col gap-4">
      <Link className="text-sm underline" to={ui("/apps/listforge")}>← Items</Link>
      <header className="flex flex-wrap items-baseline gap-x-3 gap-y-1">
        <h1 className="text-xl font-semibold">{item.title || <em className="muted">Untitled draft</em>}</h1>
        <span className="rounded bg-zinc-100 px-1.5 py-0.5 text-xs dark:bg-zinc-800">{item.lifecycleStatus}</span>
        <span className="muted text-sm">asking {money(item.defaultPrice, item.currency)}</span>
        {target && <span className="text-sm">· research target <strong>{money(target.amount, target.currency)}</strong></span>}
      </header>
      <div role="tablist" aria-label="item" className="flex gap-1 border-b border-zinc-200 dark:border-zinc-800">
        {tabs.map(([t, label], i) => (
          <button key={t} role="tab" id={"tab-" + t} aria-selected={current === t} aria-controls={"panel-" + t} tabIndex={current === t ? 0 : -1}
            ref={(el) => { tabRefs.current[i] = el; }} onKeyDown={(e) => onKey(e, i)} onClick={() => go(t)}
            className={"-mb-px border-b-2 px-3 py-2 text-sm font-medium " + (current === t ? "border-emerald-600 text-emerald-800 dark:text-emerald-300" : "border-transparent hover:border-zinc-300")}>
            {label}
            {t === "research" && latest && <span className="ml-2 rounded bg-zinc-100 px-1.5 text-xs font-normal dark:bg-zinc-800">{ago(latest.createdAt)}</span>}
          </button>
        ))}
      </div>
      <section role="tabpanel" id={"panel-" + current} aria-labelledby={"tab-" + current}>
        {current === "details" && <Details item={item} onChange={itemChanged} auditKey={auditKey} />}
        {current === "research" && <ResearchTab item={item} latest={latest} onLatest={setLatest} job={job} onJob={jobStarted} />}
        {current === "chat" && <ChatTab item={item} onItem={itemChanged} onJob={jobStarted} />}
      </section>
    </div>
  );
}

type FieldDef = { key: keyof Item & string; label: string; kind: "text" | "long" | "price" | "select" | "json"; options?: string[] };
const fields: FieldDef[] = [
  { key: "title", label: "Title", kind: "text" },
  { key: "description", label: "Description", kind: "long" },
  { key: "condition", label: "Condition", kind: "text" },
  { key: "defaultPrice", label: "Asking price", kind: "price" },
  { key: "currency", label: "Currency", kind: "text" },
  { key: "lifecycleStatus", label: "Status", kind: "select", options: ["draft", "ready", "listed", "sold", "archived"] },
  { key: "aiReviewState", label: "AI review", kind: "select", options: ["none", "pending", "reviewed", "approved", "rejected"] },
  { key: "attributes", label: "Attributes", kind: "json" },
];

function show(f: FieldDef, it: Item) {
  const v = it[f.key];
  if (f.kind === "price") return money(it.defaultPrice, it.currency);
  if (f.kind === "json") {
    const e = Object.entries((v as Record<string, unknown>) ?? {});
    return e.length ? e.map(([k, x]) => k + ": " + (typeof x === "string" ? x : JSON.stringify(x))).join(" · ") : <span className="muted">none</span>;
  }
  return v === "" || v === null ? <span className="muted">empty</span> : String(v);
}

function Details({ item, onChange, auditKey }: { item: Item; onChange: (it: Item) => void; auditKey: number }) {
  const [editing, setEditing] = useState<string | null>(null);
  const [audit, setAudit] = useState<Audit[] | null>(null);
  const [auditErr, setAuditErr] = useState<unknown>(null);
  const [delErr, setDelErr] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    lf<Audit[]>("GET", "/items/" + item.id + "/audit").then((a) => live && setAudit(a), (x) => live && setAuditErr(x));
    return () => { live = false; };
  }, [item.id, auditKey]);
  const remove = async () => {
    if (!confirm("Delete this item with its research and chats?")) return;
    try {
      await lf("DELETE", "/items/" + item.id);
      navigate(ui("/apps/listforge"));
    } catch (x) {
      setDelErr(x);
    }
  };
  return (
    <div className="grid grid-cols-1 gap-4 lg:grid-cols-3">
      <div className="card min-w-0 lg:col-span-2">
        <h2 className="mb-2 font-semibold">Details</h2>
        <p className="muted mb-3 text-xs">Each field is saved on its own and recorded in the changes.</p>
        <dl className="flex flex-col divide-y divide-zinc-100 dark:divide-zinc-800" aria-label="item fields">
          {fields.map((f) => (
            <div key={f.key} className="grid grid-cols-1 gap-1 py-2 sm:grid-cols-[9rem_1fr_auto] sm:items-start" data-field={f.key}>
              <dt className="text-sm font-medium">{f.label}</dt>
              {editing === f.key ? (
                <dd className="sm:col-span-2"><FieldEditor f={f} item={item} onDone={(it) => { setEditing(null); if (it) onChange(it); }} /></dd>
              ) : (
                <>
                  <dd className="whitespace-pre-wrap break-words text-sm">{show(f, item)}</dd>
                  <dd><button className="btn" aria-label={"edit " + f.label} onClick={() => setEditing(f.key)}>Edit</button></dd>
                </>
              )}
            </div>
          ))}
        </dl>
        <div className="mt-3 flex items-center gap-2">
          <button className="btn text-red-700 dark:text-red-400" onClick={() => void remove()}>Delete item</button>
          <span className="muted text-xs">created {when(item.createdAt)} · updated {when(item.updatedAt)}</span>
        </div>
        <ErrorBox error={delErr} />
      </div>
      <div className="flex flex-col gap-4">
        <div className="card">
          <h2 className="mb-2 font-semibold">Photos</h2>
          {item.media.length === 0 ? <p className="muted text-sm">No photos. Research reads up to four.</p> : (
            <ul className="grid grid-cols-2 gap-2">
              {item.media.map((m, i) => (
                <li key={i} className="text-xs">
                  <img src={m.url} alt={m.caption || "photo " + (i + 1)} className="h-20 w-full rounded border border-zinc-200 bg-zinc-100 object-cover dark:border-zinc-700" />
                  <span className="muted">{m.caption || "photo " + (i + 1)}</span>
                </li>
              ))}
            </ul>
          )}
        </div>
        <div className="card">
          <h2 className="mb-2 font-semibold">Changes</h2>
          <ErrorBox error={auditErr} />
          {!audit && !auditErr && <p className="muted text-sm">Loading…</p>}
          {audit && audit.length === 0 && <p className="muted text-sm">No changes yet.</p>}
          {audit && audit.length > 0 && (
            <ol className="flex flex-col gap-2 text-sm" aria-label="changes">
              {[...audit].reverse().map((a) => (
                <li key={a.id} data-audit-field={a.field}>
                  <strong>{fields.find((f) => f.key === a.field)?.label ?? a.field}</strong>: {fmt(a.oldValue)} → {fmt(a.newValue)}
                  <div className="muted text-xs">{a.reason} · {a.userId} · {when(a.createdAt)}</div>
                </li>
              ))}
            </ol>
          )}
        </div>
      </div>
    </div>
  );
}

const fmt = (v: unknown) => (v === null || v === undefined || v === "" ? "∅" : typeof v === "string" ? v : JSON.stringify(v));

function FieldEditor({ f, item, onDone }: { f: FieldDef; item: Item; onDone: (it: Item | null) => void }) {
  const init = f.kind === "json" ? JSON.stringify(item[f.key] ?? {}, null, 2) : f.kind === "price" ? (item.defaultPrice ?? "").toString() : String(item[f.key] ?? "");
  const [v, setV] = useState(init);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<unknown>(null);
  const save = async (e: React.FormEvent) => {
    e.preventDefault();
    setErr(null);
    let value: unknown = v;
    try {
      if (f.kind === "price") {
        value = v.trim() === "" ? null : Number(v);
        if (value !== null && (Number.isNaN(value) || (value as number) < 0)) throw new Error("The price must be a number of 0 or more, or empty for none.");
      }
      if (f.kind === "json") {
        try { value = JSON.parse(v); } catch { throw new Error("Attributes must be a JSON object, e.g. {\"color\": \"black\"}."); }
      }
      setBusy(true);
      const body: Record<string, unknown> = { [f.key]: value };
      if (reason.trim()) body.reason = reason.trim();
      onDone(await lf<Item>("PATCH", "/items/" + item.id, body));
    } catch (x) {
      setErr(x);
      setBusy(false);
    }
  };
  const input = f.kind === "long" || f.kind === "json" ? (
    <textarea className={"input " + (f.kind === "json" ? "font-mono" : "")} rows={f.kind === "json" ? 5 : 4} value={v} onChange={(e) => setV(e.target.value)} aria-label={f.label} autoFocus />
  ) : f.kind === "select" ? (
    <select className="input" value={v} onChange={(e) => setV(e.target.value)} aria-label={f.label} autoFocus>{f.options!.map((o) => <option key={o}>{o}</option>)}</select>
  ) : (
    <input className="input" value={v} onChange={(e) => setV(e.target.value)} aria-label={f.label} inputMode={f.kind === "price" ? "decimal" : undefined} autoFocus />
  );
  return (
    <form onSubmit={save} className="flex flex-col gap-2" onKeyDown={(e) => { if (e.key === "Escape") onDone(null); }}>
      {input}
      <input className="input" value={reason} onChange={(e) => setReason(e.target.value)} placeholder="reason (optional, recorded with the change)" aria-label="reason" />
      <ErrorBox error={err} />
      <div className="flex gap-2">
        <button className="btn-primary" disabled={busy}>Save</button>
        <button type="button" className="btn" onClick={() => onDone(null)}>Cancel</button>
      </div>
    </form>
  );
}
