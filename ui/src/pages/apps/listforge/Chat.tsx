// The Chat tab: the caller's sessions about the item, the messages of one, and a conversation
// over the /chat WebSocket (join_session, send_message, apply_action in; message, token,
// action_applied out). Answers stream token by token; a proposed change has an Apply button
// and is applied once.
import { useCallback, useEffect, useRef, useState } from "react";
import { ErrorBox } from "../../../components/Json";
import { Markdown } from "../../../components/Markdown";
import { lf, money, when, ago, useSocket, type Action, type ActionResult, type ChatMessage, type Item, type Page, type Session } from "./lf";

export function ChatTab({ item, onItem, onJob }: { item: Item; onItem: (it: Item) => void; onJob: (jobId: string) => void }) {
  const [sessions, setSessions] = useState<Session[] | null>(null);
  const [session, setSession] = useState<string | null>(null);
  const [err, setErr] = useState<unknown>(null);

  const newSession = useCallback(async () => {
    setErr(null);
    try {
      const r = await lf<{ sessionId: string; session: Session }>("POST", `/items/${item.id}/chat/sessions`);
      setSessions((s) => [r.session, ...(s ?? [])]);
      setSession(r.sessionId);
    } catch (x) {
      setErr(x);
    }
  }, [item.id]);

  // The most recent session is resumed; with none, one is opened.
  useEffect(() => {
    let live = true;
    lf<{ items: Session[] }>("GET", `/items/${item.id}/chat/sessions`).then(
      (r) => {
        if (!live) return;
        setSessions(r.items);
        if (r.items.length) setSession(r.items[0].id);
        else void newSession();
      },
      (x) => live && setErr(x),
    );
    return () => { live = false; };
  }, [item.id, newSession]);

  return (
    <div className="grid grid-cols-1 gap-4 lg:grid-cols-[14rem_1fr]">
      <aside className="card flex flex-col gap-2" aria-label="chat sessions">
        <div className="flex items-center justify-between">
          <h2 className="font-semibold">Sessions</h2>
          <button className="btn" onClick={() => void newSession()}>New</button>
        </div>
        {!sessions && !err && <p className="muted text-sm" role="status">Loading…</p>}
        <ul className="flex flex-col gap-0.5 text-sm">
          {sessions?.map((s, i) => (
            <li key={s.id}>
              <button onClick={() => setSession(s.id)} aria-current={s.id === session ? "true" : undefined}
                className={"w-full rounded px-2 py-1 text-left " + (s.id === session ? "bg-emerald-50 font-medium text-emerald-800 dark:bg-emerald-950 dark:text-emerald-200" : "hover:bg-zinc-100 dark:hover:bg-zinc-800")}>
                Session {sessions.length - i}
                <span className="muted block text-xs">{s.lastMessageAt ? "last message " + ago(s.lastMessageAt) : "started " + ago(s.createdAt)}</span>
              </button>
            </li>
          ))}
        </ul>
      </aside>
      <div className="min-w-0">
        <ErrorBox error={err} />
        {session && <Conversation key={session} item={item} session={session} onItem={onItem} onJob={onJob} />}
      </div>
    </div>
  );
}

function upsert(list: ChatMessage[], m: ChatMessage) {
  const i = list.findIndex((x) => x.id === m.id);
  if (i < 0) return [...list, m];
  const out = [...list];
  out[i] = m;
  return out;
}

function Conversation({ item, session, onItem, onJob }: { item: Item; session: string; onItem: (it: Item) => void; onJob: (jobId: string) => void }) {
  const [messages, setMessages] = useState<ChatMessage[] | null>(null);
  const [total, setTotal] = useState(0);
  const [streaming, setStreaming] = useState("");
  const [input, setInput] = useState("");
  const [busy, setBusy] = useState(false);
  const [joined, setJoined] = useState(false);
  const [err, setErr] = useState<unknown>(null);
  const [applying, setApplying] = useState<Record<string, boolean>>({});
  const [applyErr, setApplyErr] = useState<Record<string, string>>({});
  const [sock, state, reconnect] = useSocket("/ws/chat", session);
  const end = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let live = true;
    lf<Page<ChatMessage>>("GET", `/items/${item.id}/chat/sessions/${session}/messages?limit=100`).then(
      (p) => { if (live) { setMessages((cur) => (cur ?? []).reduce(upsert, p.items)); setTotal(p.total); } },
      (x) => live && setErr(x),
    );
    return () => { live = false; };
  }, [item.id, session]);

  useEffect(() => {
    if (!sock) return;
    setJoined(false);
    const offs = [
      sock.on("joined", () => setJoined(true)),
      sock.on("message", (m: ChatMessage) => {
        if (m.sessionId && m.sessionId !== session) return;
        setMessages((cur) => upsert(cur ?? [], m));
        if (m.role === "assistant") {
          setStreaming("");
          setBusy(false);
        }
      }),
      sock.on("token", (t: { token: string }) => setStreaming((s) => s + t.token)),
      sock.on("action_applied", (r: ActionResult) => {
        const k = r.messageId + ":" + r.actionIndex;
        setApplying((a) => ({ ...a, [k]: false }));
        if (r.success) {
          setMessages((cur) => (cur ?? []).map((m) => (m.id !== r.messageId ? m : { ...m, actions: m.actions?.map((a, i) => (i === r.actionIndex ? { ...a, applied: true } : a)) })));
          if (r.item) onItem(r.item);
          if (r.jobId) onJob(r.jobId);
        } else {
          setApplyErr((e) => ({ ...e, [k]: r.error ?? "The change was not applied." }));
        }
      }),
      sock.on("error", (e: { error?: string }) => {
        setErr(new Error(e.error ?? "The chat failed."));
        setBusy(false);
        setStreaming("");
      }),
    ];
    sock.send("join_session", { sessionId: session });
    return () => offs.forEach((f) => f());
  }, [sock, session, onItem, onJob]);

  useEffect(() => { end.current?.scrollIntoView?.({ block: "nearest" }); }, [messages, streaming]);

  const send = () => {
    const text = input.trim();
    if (!text || !sock || busy) return;
    setErr(null);
    setBusy(true);
    setStreaming("");
    sock.send("send_message", { sessionId: session, content: text });
    setInput("");
  };
  const apply = (m: ChatMessage, i: number) => {
    const k = m.id + ":" + i;
    if (applying[k] || m.actions?.[i]?.applied || !sock) return;
    setApplying((a) => ({ ...a, [k]: true }));
    setApplyErr((e) => ({ ...e, [k]: "" }));
    sock.send("apply_action", { messageId: m.id, actionIndex: i });
  };

  return (
    <div className="card flex min-h-[24rem] flex-col" aria-label="chat">
      <div className="flex-1 space-y-3 overflow-y-auto" aria-live="polite">
        {messages === null && !err && <p className="muted text-sm" role="status">Loading messages…</p>}
        {messages && messages.length === 0 && !streaming && (
          <div className="muted py-6 text-center text-sm">
            <p>Ask about this item: its price, similar sales, how fast it sells, what is missing.</p>
            <p className="mt-1">Or ask for a change, such as “set the price to $120”: it is applied only when you apply it.</p>
          </div>
        )}
        {total > (messages?.length ?? 0) && <p className="muted text-xs">The first 100 of {total} messages are shown.</p>}
        {messages?.map((m) => (
          <div key={m.id} className={"chat-message " + m.role + " flex flex-col gap-1 " + (m.role === "user" ? "items-end" : "items-start")} data-message-id={m.id}>
            <div className={"max-w-[85%] rounded-lg px-3 py-2 text-sm " + (m.role === "user" ? "bg-emerald-600 text-white" : "bg-zinc-100 dark:bg-zinc-800")}>
              {m.role === "assistant" ? <Markdown text={m.content} /> : <span className="whitespace-pre-wrap">{m.content}</span>}
            </div>
            {m.actions?.map((a, i) => (
              <ActionRow key={i} action={a} busy={!!applying[m.id + ":" + i]} error={applyErr[m.id + ":" + i]} currency={item.currency} onApply={() => apply(m, i)} />
            ))}
            {!!m.toolCalls?.length && (
              <details className="muted text-xs">
                <summary className="cursor-pointer">{m.toolCalls.length} tool call{m.toolCalls.length > 1 ? "s" : ""}: {m.toolCalls.map((t) => t.tool).join(", ")}</summary>
                <pre className="code mt-1 max-h-48 overflow-auto">{JSON.stringify(m.toolCalls, null, 2)}</pre>
              </details>
            )}
            <span className="muted text-[10px]">{when(m.createdAt)}</span>
          </div>
        ))}
        {streaming && (
          <div className="chat-streaming flex flex-col items-start" aria-label="answer being written">
            <div className="max-w-[85%] whitespace-pre-wrap rounded-lg bg-zinc-100 px-3 py-2 text-sm dark:bg-zinc-800">{streaming}<span className="animate-pulse">▍</span></div>
          </div>
        )}
        {busy && !streaming && <p className="muted text-sm" role="status">Thinking…</p>}
        <div ref={end} />
      </div>
      <ErrorBox error={err} />
      {state === "closed" && <p className="mt-2 text-sm">The connection closed. <button className="btn" onClick={reconnect}>Reconnect</button></p>}
      <form className="mt-3 flex gap-2 border-t border-zinc-200 pt-3 dark:border-zinc-800" onSubmit={(e) => { e.preventDefault(); send(); }}>
        <input className="input" value={input} onChange={(e) => setInput(e.target.value)} placeholder="Ask about this item..." aria-label="message" disabled={!joined} />
        <button className="btn-primary" disabled={!joined || busy || !input.trim()}>Send</button>
      </form>
      {!joined && state !== "closed" && <p className="muted mt-1 text-xs" role="status">Connecting…</p>}
    </div>
  );
}

function describe(a: Action, currency: string) {
  const p = a.payload;
  if (a.type === "update_field" || a.type === "suggest_price") {
    const field = a.type === "suggest_price" ? "defaultPrice" : String(p.field ?? "");
    const v = a.type === "suggest_price" ? p.amount : p.value;
    const label = field === "defaultPrice" ? "price" : field === "lifecycleStatus" ? "status" : field;
    return `Set the ${label} to ${field === "defaultPrice" && typeof v === "number" ? money(v, currency) : JSON.stringify(v)}`;
  }
  if (a.type === "start_research") return "Start new research";
  return a.type;
}

function ActionRow({ action, busy, error, currency, onApply }: { action: Action; busy: boolean; error?: string; currency: string; onApply: () => void }) {
  return (
    <div className="flex flex-wrap items-center gap-2 rounded-md border border-zinc-200 px-2 py-1 text-sm dark:border-zinc-700" data-action={action.type} data-applied={action.applied}>
      <span>{describe(action, currency)}</span>
      {action.applied ? (
        <span className="font-medium text-emerald-700 dark:text-emerald-400">✓ Applied</span>
      ) : (
        <button className="btn-primary" onClick={onApply} disabled={busy}>{busy ? "Applying…" : "Apply"}</button>
      )}
      {error && <span role="alert" className="text-red-700 dark:text-red-400">{error}</span>}
    </div>
  );
}
