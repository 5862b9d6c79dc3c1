// The organisation's items, most recently updated first, paged, with a form to create one.
import { useCallback, useEffect, useState } from "react";
import { Link, navigate, ui } from "../../../router";
import { ErrorBox } from "../../../components/Json";
import { Table } from "../../../components/Table";
import { lf, money, ago, type Item, type Page } from "./lf";

const limit = 20;

export function ItemList({ page }: { page: number }) {
  const [data, setData] = useState<Page<Item> | null>(null);
  const [err, setErr] = useState<unknown>(null);
  const [creating, setCreating] = useState(false);

  const load = useCallback(async () => {
    setErr(null);
    try {
      setData(await lf<Page<Item>>("GET", `/items?page=${page}&limit=${limit}`));
    } catch (x) {
      setErr(x);
    }
  }, [page]);
  useEffect(() => { void load(); }, [load]);

  const pages = data ? Math.max(1, Math.ceil(data.total / limit)) : 1;
  return (
    <div className="flex flex-col gap-4">
      <header className="flex flex-wrap items-center gap-2">
        <div className="flex-1">
          <h1 className="text-xl font-semibold">ListForge items</h1>
          <p className="muted text-sm">Second-hand items to price: research finds comparable sales and recommends price bands; chat answers from the research.</p>
        </div>
        <button className="btn-primary" onClick={() => setCreating((c) => !c)} aria-expanded={creating}>New item</button>
      </header>
      {creating && <CreateItem onCancel={() => setCreating(false)} />}
      <ErrorBox error={err} />
      {err !== null && <button className="btn self-start" onClick={() => void load()}>Try again</button>}
      {!data && !err && <p className="muted" role="status">Loading items…</p>}
      {data && data.total === 0 && (
        <div className="card text-center">
          <h2 className="font-semibold">No items yet</h2>
          <p className="muted text-sm">Create an item with a title, a description or a photo, then run research on it.</p>
          <button className="btn-primary mt-3" onClick={() => setCreating(true)}>Create your first item</button>
        </div>
      )}
      {data && data.total > 0 && (
        <>
          <Table<Item>
            label="items"
            rows={data.items}
            rowKey={(r) => r.id}
            columns={[
              { key: "title", header: "Title", render: (r) => <Link className="font-medium text-emerald-700 hover:underline dark:text-emerald-400" to={ui("/apps/listforge/items/" + r.id)}>{r.title || <em className="muted">untitled draft</em>}</Link>, value: (r) => r.title },
              { key: "condition", header: "Condition" },
              { key: "defaultPrice", header: "Price", align: "right", render: (r) => money(r.defaultPrice, r.currency), value: (r) => r.defaultPrice ?? -1 },
              { key: "lifecycleStatus", header: "Status", render: (r) => <span className="rounded bg-zinc-100 px-1.5 py-0.5 text-xs dark:bg-zinc-800">{r.lifecycleStatus}</span> },
              { key: "updatedAt", header: "Updated", render: (r) => ago(r.updatedAt), value: (r) => r.updatedAt },
            ]}
          />
          {pages > 1 && (
            <nav aria-label="pages" className="flex items-center gap-2 text-sm">
              <button className="btn" disabled={page <= 1} onClick={() => navigate(ui("/apps/listforge?page=" + (page - 1)))}>Previous</button>
              <span>page {page} of {pages} · {data.total} items</span>
              <button className="btn" disabled={page >= pages} onClick={() => navigate(ui("/apps/listforge?page=" + (page + 1)))}>Next</button>
            </nav>
          )}
        </>
      )}
    </div>
  );
}

function CreateItem({ onCancel }: { onCancel: () => void }) {
  const [title, setTitle] = useState("");
  const [description, setDescription] = useState("");
  const [condition, setCondition] = useState("Used");
  const [price, setPrice] = useState("");
  const [ready, setReady] = useState(true);
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<unknown>(null);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setErr(null);
    try {
      const p = price.trim() === "" ? null : Number(price);
      if (p !== null && (Number.isNaN(p) || p < 0)) throw new Error("The price must be a number of 0 or more, or left empty.");
      const it = await lf<Item>("POST", "/items", { title, description, condition, defaultPrice: p, lifecycleStatus: ready ? "ready" : "draft" });
      navigate(ui("/apps/listforge/items/" + it.id));
    } catch (x) {
      setErr(x);
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} className="card grid gap-3 sm:grid-cols-2" aria-label="new item">
      <label className="text-sm sm:col-span-2">Title<input className="input mt-1" required maxLength={300} value={title} onChange={(e) => setTitle(e.target.value)} placeholder="e.g. Sony WH-1000XM4 headphones, black" /></label>
      <label className="text-sm sm:col-span-2">Description<textarea className="input mt-1" rows={3} value={description} onChange={(e) => setDescription(e.target.value)} /></label>
      <label className="text-sm">Condition
        <select className="input mt-1" value={condition} onChange={(e) => setCondition(e.target.value)}>
          {["New", "Open box", "Refurbished", "Used", "For parts"].map((c) => <option key={c}>{c}</option>)}
        </select>
      </label>
      <label className="text-sm">Asking price (USD)<input className="input mt-1" inputMode="decimal" value={price} onChange={(e) => setPrice(e.target.value)} placeholder="optional" /></label>
      <label className="flex items-center gap-2 text-sm sm:col-span-2"><input type="checkbox" checked={ready} onChange={(e) => setReady(e.target.checked)} /> Ready for research</label>
      <div className="sm:col-span-2"><ErrorBox error={err} /></div>
      <div className="flex gap-2 sm:col-span-2">
        <button className="btn-primary" disabled={busy || !title.trim()}>Create item</button>
        <button type="button" className="btn" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
