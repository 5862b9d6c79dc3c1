// The realty app's page (/ui/apps/realty): the property search agent's own chat over its routes
// under /apps/realty (docs/apps/realty.md). Sessions in a sidebar (titles, delete on hover), the
// answer streamed from POST /chat/stream (token, data, hints, done), listings as cards in a grid
// or a list (the choice kept in localStorage), a listing's detail card, a map of every listing of
// the session that has coordinates, and the follow-up hints as buttons.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { api, sse } from "../../api";
import { navigate, useLocation } from "../../router";
import { ErrorBox } from "../../components/Json";
import { Markdown } from "../../components/Markdown";
import { MapView, type MapPoint } from "../../components/Map";

const base = "/apps/realty";

export type Listing = {
  zpid: string;
  address: string;
  price?: number;
  beds?: number;
  baths?: number;
  sqft?: number;
  property_type?: string;
  photo_url?: string;
  lat?: number;
  lng?: number;
  year_built?: number;
  lot_size?: number;
  hoa_fee?: number;
  zestimate?: number;
  url?: string;
};
type Data = { type: "listings" | "detail"; items: Listing[] };
type Session = { id: string; title?: string; turns?: number; updated_at?: string };
type Msg = { role: "user" | "assistant"; text: string; data?: Data; error?: string; streaming?: boolean; tokens?: number };
type WireMessage = { role: string; content: string; data?: Data };

const viewKey = "trellis.realty.view";

const money = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumFractionDigits: 0 });
const num = new Intl.NumberFormat("en-US");

// clean drops what the agent's text carries for the model rather than the reader: the offline
// model's marker and the label tool results get as external data.
function clean(text: string): string {
  return text
    .replace(/\[offline model\]/g, "\n\n")
    .replace(/^\[EXTERNAL DATA[^\]\n]*\]\s*$/gm, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

// intro is the text shown above listing cards: the cards already show the listings, so the
// lines listing them are left out.
function intro(text: string): string {
  return clean(text).split("\n").filter((l) => !/^\s*([-*]|\d+\.)\s/.test(l)).join("\n").replace(/\n{3,}/g, "\n\n").trim();
}

function stats(l: Listing): string {
  const parts: string[] = [];
  if (l.beds != null) parts.push(l.beds + " bd");
  if (l.baths != null) parts.push(l.baths + " ba");
  if (l.sqft != null) parts.push(num.format(l.sqft) + " sqft");
  return parts.join(" · ");
}

const pressed = "aria-pressed:bg-emerald-50 aria-pressed:text-emerald-800 dark:aria-pressed:bg-emerald-950 dark:aria-pressed:text-emerald-200";

const kind = (t?: string) => (t ? t.replace(/_/g, " ").toLowerCase() : "");

// Photos from the server itself are shown; others (RealtyAPI's own, on Zillow's hosts) would be
// a request leaving the machine, which the page's policy refuses, so a drawn placeholder stands in.
function Photo({ l, className }: { l: Listing; className: string }) {
  const [broken, setBroken] = useState(false);
  if (!l.photo_url || !l.photo_url.startsWith("/") || l.photo_url.startsWith("//") || broken) {
    return <div aria-hidden className={"flex items-center justify-center bg-zinc-100 text-3xl text-zinc-400 dark:bg-zinc-800 " + className}>⌂</div>;
  }
  return <img src={l.photo_url} alt="" loading="lazy" className={"bg-zinc-100 object-cover dark:bg-zinc-800 " + className} onError={() => setBroken(true)} />;
}

function ZillowLink({ l }: { l: Listing }) {
  if (!l.url || !/^https?:\/\//.test(l.url)) return null;
  return (
    <a href={l.url} target="_blank" rel="noopener noreferrer" className="text-xs text-emerald-700 underline dark:text-emerald-400"
      onClick={(e) => e.stopPropagation()} aria-label={"on Zillow: " + l.address}>Zillow ↗</a>
  );
}

function Card({ l, layout, onSelect, disabled }: { l: Listing; layout: "grid" | "list"; onSelect: (l: Listing) => void; disabled: boolean }) {
  const open = () => { if (!disabled) onSelect(l); };
  const common = {
    role: "button" as const, tabIndex: 0, "aria-disabled": disabled || undefined,
    "aria-label": "details of " + l.address, "data-zpid": l.zpid,
    onClick: open,
    onKeyDown: (e: React.KeyboardEvent) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(); } },
  };
  if (layout === "list") {
    return (
      <li className="flex min-w-0 cursor-pointer items-center gap-3 rounded-md border border-zinc-200 bg-white p-2 hover:border-emerald-400 dark:border-zinc-800 dark:bg-zinc-900" {...common}>
        <Photo l={l} className="h-14 w-20 shrink-0 rounded" />
        <div className="min-w-0 flex-1">
          <p className="truncate text-sm font-medium">{l.address}</p>
          <p className="muted truncate text-xs">{l.price != null && <span className="font-semibold text-zinc-900 dark:text-zinc-100">{money.format(l.price)}</span>} {stats(l)} {kind(l.property_type) && "· " + kind(l.property_type)}</p>
        </div>
        <ZillowLink l={l} />
      </li>
    );
  }
  return (
    <li className="flex min-w-0 cursor-pointer flex-col overflow-hidden rounded-lg border border-zinc-200 bg-white hover:border-emerald-400 dark:border-zinc-800 dark:bg-zinc-900" {...common}>
      <Photo l={l} className="h-32 w-full" />
      <div className="flex flex-1 flex-col gap-0.5 p-2">
        {l.price != null && <p className="font-semibold">{money.format(l.price)}</p>}
        <p className="text-sm leading-tight">{l.address}</p>
        <p className="muted text-xs">{stats(l)}</p>
        <div className="mt-auto flex items-center justify-between pt-1">
          <span className="muted text-xs">{kind(l.property_type)}</span>
          <ZillowLink l={l} />
        </div>
      </div>
    </li>
  );
}

function Detail({ l, narrow }: { l: Listing; narrow?: boolean }) {
  const rows: [string, string][] = [];
  if (l.property_type) rows.push(["Type", kind(l.property_type)]);
  if (l.year_built != null) rows.push(["Year built", String(l.year_built)]);
  if (l.lot_size != null) rows.push(["Lot", num.format(l.lot_size) + " sqft"]);
  if (l.hoa_fee != null) rows.push(["HOA", money.format(l.hoa_fee) + "/mo"]);
  if (l.zestimate != null) rows.push(["Zestimate", money.format(l.zestimate)]);
  if (l.lat != null && l.lng != null) rows.push(["Location", l.lat.toFixed(4) + ", " + l.lng.toFixed(4)]);
  return (
    <article aria-label={"detail of " + l.address} className={"flex flex-col overflow-hidden rounded-lg border border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900" + (narrow ? "" : " sm:flex-row")}>
      <Photo l={l} className={"h-40 w-full" + (narrow ? "" : " sm:h-auto sm:w-48 sm:shrink-0")} />
      <div className="min-w-0 flex-1 p-3">
        <h3 className="font-semibold">{l.address}</h3>
        <p className="text-sm">{l.price != null && <span className="font-semibold">{money.format(l.price)}</span>} <span className="muted">{stats(l)}</span></p>
        <dl className="mt-2 grid grid-cols-[auto_1fr] gap-x-3 gap-y-0.5 text-sm">
          {rows.map(([k, v]) => (<div key={k} className="contents"><dt className="muted">{k}</dt><dd>{v}</dd></div>))}
        </dl>
        <p className="mt-2"><ZillowLink l={l} /></p>
      </div>
    </article>
  );
}

function Bubble({ m, layout, setLayout, onSelect, busy }: { m: Msg; layout: "grid" | "list"; setLayout: (l: "grid" | "list") => void; onSelect: (l: Listing) => void; busy: boolean }) {
  if (m.role === "user") {
    return <div className="ml-auto max-w-[85%] whitespace-pre-wrap rounded-lg bg-emerald-600 px-3 py-2 text-sm text-white" data-role="user">{m.text}</div>;
  }
  const listings = m.data?.type === "listings" ? m.data.items : null;
  const detail = m.data?.type === "detail" ? m.data.items : null;
  const text = listings ? intro(m.text) : clean(m.text);
  return (
    <div className="flex min-w-0 flex-col gap-2" data-role="assistant" data-tokens={m.tokens} aria-busy={m.streaming || undefined}>
      {text ? <div className="max-w-none rounded-lg bg-zinc-100 px-3 py-2 text-sm dark:bg-zinc-800"><Markdown text={text} /></div>
        : m.streaming && <p className="muted text-sm" aria-live="polite">Searching…</p>}
      {m.error && <ErrorBox error={new Error(m.error)} />}
      {listings && (
        <section aria-label="listings" className="flex flex-col gap-2">
          <div className="flex items-center gap-2">
            <p className="muted flex-1 text-xs">{listings.length} listing{listings.length === 1 ? "" : "s"} · choose one for its details</p>
            <div role="group" aria-label="layout" className="flex">
              <button type="button" className={"btn rounded-r-none " + pressed} aria-pressed={layout === "grid"} onClick={() => setLayout("grid")}>Grid</button>
              <button type="button" className={"btn -ml-px rounded-l-none " + pressed} aria-pressed={layout === "list"} onClick={() => setLayout("list")}>List</button>
            </div>
          </div>
          {listings.length === 0 ? <p className="muted text-sm">No listing matched.</p> : (
            <ul aria-label="listing cards" data-layout={layout}
              className={layout === "grid" ? "grid grid-cols-1 gap-2 min-[480px]:grid-cols-2 xl:grid-cols-3" : "flex flex-col gap-2"}>
              {listings.map((l) => <Card key={l.zpid} l={l} layout={layout} onSelect={onSelect} disabled={busy} />)}
            </ul>
          )}
        </section>
      )}
      {detail && detail.map((l) => <Detail key={l.zpid} l={l} />)}
    </div>
  );
}

// history turns a session's messages into the page's: a user message, then one answer per turn
// holding the turn's texts and the last structured result of its tools.
function history(wire: WireMessage[]): Msg[] {
  const out: Msg[] = [];
  let cur: Msg | null = null;
  for (const w of wire) {
    if (w.role === "user") {
      out.push({ role: "user", text: w.content });
      cur = null;
      continue;
    }
    if (w.role !== "assistant" && w.role !== "tool") continue;
    if (!cur) {
      cur = { role: "assistant", text: "" };
      out.push(cur);
    }
    if (w.role === "assistant" && w.content) cur.text += (cur.text ? "\n\n" : "") + w.content;
    if (w.role === "tool" && w.data) cur.data = w.data;
  }
  return out;
}

export function Realty() {
  const { query } = useLocation();
  const sessionID = query.get("session") ?? "";
  const [sessions, setSessions] = useState<Session[] | null>(null);
  const [listErr, setListErr] = useState<unknown>(null);
  const [msgs, setMsgs] = useState<Msg[]>([]);
  const [loading, setLoading] = useState(false);
  const [loadErr, setLoadErr] = useState<unknown>(null);
  const [hints, setHints] = useState<string[]>([]);
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [showSessions, setShowSessions] = useState(false);
  const [layout, setLayoutState] = useState<"grid" | "list">(() => (localStorage.getItem(viewKey) === "list" ? "list" : "grid"));
  const setLayout = (l: "grid" | "list") => { setLayoutState(l); localStorage.setItem(viewKey, l); };
  const input = useRef<HTMLTextAreaElement>(null);
  const end = useRef<HTMLDivElement>(null);
  const streamedInto = useRef<string>(""); // the session a stream just created, not to be reloaded

  const open = useCallback((id: string, replace = false) => {
    navigate("/ui/apps/realty" + (id ? "?session=" + encodeURIComponent(id) : ""), replace);
  }, []);

  const loadSessions = useCallback(async () => {
    try {
      setSessions(await api<Session[]>("GET", base + "/sessions?detail=1"));
      setListErr(null);
    } catch (x) {
      setListErr(x);
      setSessions((s) => s ?? []);
    }
  }, []);

  useEffect(() => { void loadSessions(); }, [loadSessions]);

  // With no session in the address, the most recent one opens (or a new one starts).
  useEffect(() => {
    if (!sessionID && sessions && sessions.length > 0 && msgs.length === 0 && !busy && !query.has("new")) open(sessions[0].id, true);
  }, [sessionID, sessions, msgs.length, busy, query, open]);

  useEffect(() => {
    if (sessionID && streamedInto.current === sessionID) return; // the page holds it already
    setHints([]);
    setLoadErr(null);
    if (!sessionID) { setMsgs([]); return; }
    let live = true;
    setLoading(true);
    api<WireMessage[]>("GET", base + "/sessions/" + encodeURIComponent(sessionID))
      .then((w) => { if (live) setMsgs(history(w)); })
      .catch((x) => { if (live) { setMsgs([]); setLoadErr(x); } })
      .finally(() => { if (live) setLoading(false); });
    return () => { live = false; };
  }, [sessionID]);

  useEffect(() => { end.current?.scrollIntoView({ block: "end" }); }, [msgs]);

  const send = async (message: string) => {
    message = message.trim();
    if (!message || busy) return;
    setBusy(true);
    setHints([]);
    setText("");
    setMsgs((m) => [...m, { role: "user", text: message }, { role: "assistant", text: "", streaming: true }]);
    const patch = (f: (m: Msg) => Msg) => setMsgs((all) => all.map((m, i) => (i === all.length - 1 ? f(m) : m)));
    let sid = sessionID;
    try {
      for await (const ev of sse("POST", base + "/chat/stream", { message, ...(sessionID ? { session_id: sessionID } : {}) })) {
        const d = (ev.data ?? {}) as { content?: string; data?: Data; hints?: string[]; session_id?: string; message?: string };
        if (ev.event === "token" && d.content) patch((m) => ({ ...m, text: m.text + d.content, tokens: (m.tokens ?? 0) + 1 }));
        else if (ev.event === "data" && d.data) patch((m) => ({ ...m, data: d.data }));
        else if (ev.event === "hints" && d.hints) setHints(d.hints);
        else if (ev.event === "done" && d.session_id) sid = d.session_id;
        else if (ev.event === "error") patch((m) => ({ ...m, error: d.message || "the agent failed" }));
      }
    } catch (x) {
      patch((m) => ({ ...m, error: x instanceof Error ? x.message : String(x) }));
    } finally {
      patch((m) => ({ ...m, streaming: false }));
      setBusy(false);
    }
    if (sid && sid !== sessionID) {
      streamedInto.current = sid;
      open(sid, !sessionID);
    }
    if (sid) {
      try { await api("GET", base + "/sessions/" + encodeURIComponent(sid) + "/title"); } catch { /* the list shows the ID */ }
    }
    await loadSessions();
    input.current?.focus();
  };

  const remove = async (id: string) => {
    try {
      await api("DELETE", base + "/sessions/" + encodeURIComponent(id));
    } catch (x) {
      setListErr(x);
      return;
    }
    const rest = (sessions ?? []).filter((s) => s.id !== id);
    setSessions(rest);
    if (id === sessionID) {
      streamedInto.current = "";
      setMsgs([]);
      open(rest[0]?.id ?? "", true);
    }
  };

  const newSession = () => {
    streamedInto.current = "";
    setMsgs([]);
    navigate("/ui/apps/realty?new=1");
    setShowSessions(false);
    input.current?.focus();
  };

  const points = useMemo<MapPoint[]>(() => {
    const seen = new Map<string, Listing>();
    for (const m of msgs) for (const l of m.data?.items ?? []) if (l.lat != null && l.lng != null) seen.set(l.zpid, l);
    return [...seen.values()].map((l) => ({
      id: l.zpid, lat: l.lat!, lng: l.lng!, label: l.address,
      popup: (<div><strong>{l.address}</strong><br />{l.price != null && money.format(l.price)}{l.price != null && " · "}{stats(l)}</div>),
    }));
  }, [msgs]);
  const lastDetail = useMemo(() => {
    for (let i = msgs.length - 1; i >= 0; i--) if (msgs[i].data?.type === "detail" && msgs[i].data!.items.length) return msgs[i].data!.items[0];
    return null;
  }, [msgs]);

  const current = sessions?.find((s) => s.id === sessionID);

  const sidebar = (
    <nav aria-label="sessions" className={(showSessions ? "flex" : "hidden") + " flex-col gap-2 md:flex"}>
      <button type="button" className="btn-primary justify-center" onClick={newSession} disabled={busy}>New search</button>
      <ErrorBox error={listErr} />
      {sessions === null ? <p className="muted text-sm">Loading sessions…</p>
        : sessions.length === 0 ? <p className="muted text-sm">No sessions yet.</p> : (
          <ul className="flex flex-col gap-0.5" aria-label="session list">
            {sessions.map((s) => (
              <li key={s.id} className="group flex items-center rounded hover:bg-zinc-100 dark:hover:bg-zinc-900">
                <a href={"/ui/apps/realty?session=" + encodeURIComponent(s.id)} aria-current={s.id === sessionID ? "page" : undefined}
                  onClick={(e) => { if (e.button === 0 && !e.metaKey && !e.ctrlKey) { e.preventDefault(); setShowSessions(false); if (s.id !== sessionID) { streamedInto.current = ""; open(s.id); } } }}
                  className={"min-w-0 flex-1 truncate px-2 py-1 text-sm " + (s.id === sessionID ? "font-medium text-emerald-800 dark:text-emerald-300" : "")}
                  title={s.title || s.id}>
                  {s.title || s.id.slice(0, 8)}
                </a>
                <button type="button" aria-label={"delete session " + (s.title || s.id.slice(0, 8))} disabled={busy && s.id === sessionID}
                  className="shrink-0 rounded px-2 py-1 text-sm text-zinc-500 hover:text-red-600 focus:opacity-100 md:opacity-0 md:group-hover:opacity-100"
                  onClick={() => void remove(s.id)}>
                  <svg aria-hidden viewBox="0 0 24 24" width="16" height="16" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round">
                    <path d="M3 6h18M8 6V4h8v2M19 6l-1 14H6L5 6M10 11v6M14 11v6" />
                  </svg>
                </button>
              </li>
            ))}
          </ul>
        )}
    </nav>
  );

  return (
    <div className="flex flex-col gap-3">
      <header className="flex flex-wrap items-center gap-2">
        <h1 className="text-xl font-semibold">Realty</h1>
        <span className="muted min-w-0 flex-1 truncate text-sm">{current?.title ?? "Find homes for sale: ask in plain words"}</span>
        <button type="button" className="btn md:hidden" aria-expanded={showSessions} onClick={() => setShowSessions((x) => !x)}>Sessions ({sessions?.length ?? 0})</button>
      </header>
      <div className="grid grid-cols-1 gap-4 md:grid-cols-[13rem_minmax(0,1fr)] xl:grid-cols-[13rem_minmax(0,1fr)_20rem]">
        <aside className="min-w-0">{sidebar}</aside>
        <section aria-label="conversation" className="flex min-w-0 flex-col gap-3">
          <ErrorBox error={loadErr} />
          {loading && <p className="muted text-sm">Loading the session…</p>}
          {!loading && msgs.length === 0 && !loadErr && (
            <div className="card text-sm">
              <p className="font-medium">Ask about homes for sale.</p>
              <p className="muted mt-1">For instance:</p>
              <div className="mt-2 flex flex-wrap gap-2">
                {["3 bedroom homes in Austin under 600k", "Condos in Miami under $500k", "Houses in Denver with 2 baths"].map((h) => (
                  <button key={h} type="button" className="btn" onClick={() => void send(h)} disabled={busy}>{h}</button>
                ))}
              </div>
            </div>
          )}
          <div className="flex flex-col gap-3" aria-live="polite">
            {msgs.map((m, i) => <Bubble key={i} m={m} layout={layout} setLayout={setLayout} busy={busy} onSelect={(l) => void send("Show me the details of zpid " + l.zpid)} />)}
          </div>
          {hints.length > 0 && !busy && (
            <div role="group" aria-label="suggestions" className="flex flex-wrap gap-2">
              {hints.map((h) => <button key={h} type="button" className="btn text-left" onClick={() => void send(h)}>{h}</button>)}
            </div>
          )}
          <div ref={end} />
          <form className="sticky bottom-0 flex gap-2 bg-white pb-1 pt-1 dark:bg-zinc-950" onSubmit={(e) => { e.preventDefault(); void send(text); }}>
            <label htmlFor="realty-input" className="sr-only">Message</label>
            <textarea id="realty-input" ref={input} className="input min-h-10 flex-1" rows={2} value={text} disabled={busy}
              placeholder={busy ? "Answering…" : "Ask about homes (Enter sends, Shift+Enter for a new line)"}
              onChange={(e) => setText(e.target.value)}
              onKeyDown={(e) => { if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) { e.preventDefault(); void send(text); } }} />
            <button className="btn-primary self-end" disabled={busy || !text.trim()}>{busy ? "…" : "Send"}</button>
          </form>
        </section>
        <aside aria-label="map and detail" className="flex min-w-0 flex-col gap-3 md:col-start-2 xl:sticky xl:top-16 xl:col-start-auto xl:self-start">
          <h2 className="font-semibold">Map <span className="muted text-sm font-normal">({points.length} located)</span></h2>
          <MapView points={points} label="listings map" className="h-72"
            empty="No listing located yet: search results carry no coordinates, so choose a listing to see its details and its place here." />
          {lastDetail && (<><h2 className="font-semibold">Last opened</h2><Detail l={lastDetail} narrow /></>)}
        </aside>
      </div>
    </div>
  );
}

export default Realty;
