// The store: its namespaces, the items under a namespace prefix searched by words (and by
// vectors, where the server's store has an index), and a form to put an item.
import { useCallback, useEffect, useState } from "react";
import { api, when, type StoreItem } from "../api";
import { ErrorBox, Json } from "../components/Json";
import { Table } from "../components/Table";

const split = (s: string) => s.split(/[/.]/).map((x) => x.trim()).filter(Boolean);

export function Store() {
  const [namespaces, setNamespaces] = useState<string[][]>([]);
  const [prefix, setPrefix] = useState("");
  const [query, setQuery] = useState("");
  const [items, setItems] = useState<StoreItem[] | null>(null);
  const [err, setErr] = useState<unknown>(null);
  const [put, setPut] = useState({ ns: "", key: "", value: '{\n  "text": ""\n}' });

  const loadNamespaces = useCallback(async () => {
    try {
      const out = await api<{ namespaces: string[][] }>("POST", "/store/namespaces", { limit: 200 });
      setNamespaces(out.namespaces ?? []);
    } catch (x) {
      setErr(x);
    }
  }, []);
  const search = useCallback(async (p: string, q: string) => {
    setErr(null);
    try {
      const out = await api<{ items: StoreItem[] }>("POST", "/store/items/search", { namespace_prefix: split(p), query: q || undefined, limit: 50 });
      setItems(out.items ?? []);
    } catch (x) {
      setErr(x);
    }
  }, []);
  useEffect(() => { void loadNamespaces(); }, [loadNamespaces]);

  const open = (ns: string[]) => {
    const p = ns.join("/");
    setPrefix(p);
    void search(p, query);
  };
  const save = async (e: React.FormEvent) => {
    e.preventDefault();
    setErr(null);
    let value: unknown;
    try {
      value = JSON.parse(put.value);
    } catch (x) {
      setErr(new Error("The value is not JSON: " + (x as Error).message));
      return;
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) { setErr(new Error("The value must be a JSON object.")); return; }
    try {
      await api("PUT", "/store/items", { namespace: split(put.ns), key: put.key, value });
      await loadNamespaces();
      open(split(put.ns));
    } catch (x) {
      setErr(x);
    }
  };
  const remove = async (it: StoreItem) => {
    try {
      await api("DELETE", "/store/items", { namespace: it.namespace, key: it.key });
      await search(prefix, query);
      await loadNamespaces();
    } catch (x) {
      setErr(x);
    }
  };
  return (
    <div className="flex flex-col gap-4">
      <h1 className="text-xl font-semibold">Store</h1>
      <ErrorBox error={err} />
      <div className="grid gap-4 lg:grid-cols-[16rem_1fr]">
        <section aria-label="namespaces">
          <h2 className="mb-2 font-semibold">Namespaces</h2>
          {namespaces.length === 0 && <p className="muted text-sm">The store is empty.</p>}
          <ul className="flex flex-col gap-0.5 text-sm">
            {namespaces.map((ns) => (
              <li key={ns.join("/")}>
                <button className={"w-full truncate rounded px-2 py-1 text-left font-mono hover:bg-zinc-100 dark:hover:bg-zinc-900 " + (prefix === ns.join("/") ? "bg-emerald-50 dark:bg-emerald-950" : "")}
                  onClick={() => open(ns)}>{ns.join(" / ")}</button>
              </li>
            ))}
          </ul>
        </section>
        <section aria-label="items" className="flex min-w-0 flex-col gap-3">
          <form className="grid gap-2 sm:grid-cols-[1fr_1fr_auto]" onSubmit={(e) => { e.preventDefault(); void search(prefix, query); }}>
            <label className="text-sm">Namespace prefix<input className="input mt-1 font-mono" value={prefix} onChange={(e) => setPrefix(e.target.value)} placeholder="users/alice" /></label>
            <label className="text-sm">Search<input data-search className="input mt-1" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="words to look for" /></label>
            <button className="btn-primary self-end">Search</button>
          </form>
          {items && (
            <Table label="items" rows={items} rowKey={(it) => it.namespace.join("/") + "#" + it.key} empty="No item under this prefix."
              columns={[
                { key: "namespace", header: "Namespace", value: (it) => it.namespace.join("/"), render: (it) => <span className="font-mono">{it.namespace.join(" / ")}</span> },
                { key: "key", header: "Key", render: (it) => <span className="font-mono">{it.key}</span> },
                { key: "value", header: "Value", value: (it) => JSON.stringify(it.value), render: (it) => <Json value={it.value} /> },
                { key: "score", header: "Score", align: "right", value: (it) => it.score ?? null, render: (it) => (it.score == null ? "" : it.score.toFixed(3)) },
                { key: "updated_at", header: "Updated", render: (it) => when(it.updated_at) },
                { key: "delete", header: "", render: (it) => <button className="btn" aria-label={"delete " + it.key} onClick={() => void remove(it)}>Delete</button> },
              ]} />
          )}
          <form aria-label="put item" className="card grid gap-2" onSubmit={save}>
            <h2 className="font-semibold">Put an item</h2>
            <div className="grid gap-2 sm:grid-cols-2">
              <label className="text-sm">Namespace<input className="input mt-1 font-mono" required value={put.ns} onChange={(e) => setPut({ ...put, ns: e.target.value })} placeholder="notes/alice" /></label>
              <label className="text-sm">Key<input className="input mt-1 font-mono" required value={put.key} onChange={(e) => setPut({ ...put, key: e.target.value })} placeholder="first" /></label>
            </div>
            <label className="text-sm">Value (a JSON object)<textarea className="input mt-1 font-mono text-xs" rows={4} value={put.value} onChange={(e) => setPut({ ...put, value: e.target.value })} /></label>
            <button className="btn-primary justify-self-start">Put</button>
          </form>
        </section>
      </div>
    </div>
  );
}
