// The Rehabify page (/ui/apps/rehab): the app's pt-PT chat over its own SSE endpoint
// (POST /apps/rehab/api/v1/chat: thinking, tool_call, action, message token by token,
// todo_update, error), the consent prompt of a removal answered from the page, the
// conversation's todo list, the portfolio as cards (compare 2-3, the PDF report), the action
// log and the summaries of past conversations. See docs/apps/rehab.md for the endpoints.
import { useCallback, useEffect, useRef, useState } from "react";
import { api, currentAuth, sse, when } from "../../api";
import { Link, navigate, ui, useLocation } from "../../router";
import { ErrorBox } from "../../components/Json";
import { Markdown } from "../../components/Markdown";

const base = "/apps/rehab/api/v1";

type Property = { id: string; idealista_id: string; url: string; title: string; typology: string; price: number; area_m2: number; location: string };
type Item = {
  id: string; property_id: string; nickname: string; status: string; is_active: boolean; index_summary: string;
  created_at: string; property: Property; chat_summary?: string; detail_summary?: string;
};
type Action = {
  id: string; conversation_id?: string; action_type: string; entity_type: string; entity_id?: string; field_changed?: string;
  old_value?: string; new_value?: string; trigger_message?: string; confidence: number; created_at: string;
};
type Conversation = { id: string; started_at: string; last_message_at: string; ended_at?: string; summary?: string; message_count: number };
type Todo = { id: string; task: string; status: string };
type Consent = { type: string; action: string; property_id: string; question: string };
type StateView = { conversation_id: string; todos: Todo[]; current_focus?: { property_id?: string; topic?: string; level: number }; pending_consent?: { id: string; value: Consent } };
type StoredMessage = { id: string; role: string; content: string; tool_calls?: { id?: string; name: string; arguments?: unknown }[] | null; created_at: string };
type Profile = { name: string; location: string; summary: string; exists: boolean };

// A turn of the chat as the page shows it: the user's words, or the assistant's answer with the
// tools it called and the actions it took.
type Turn = {
  key: string;
  role: "user" | "assistant";
  text: string;
  tools: { name: string; args?: unknown }[];
  actions: { action_type: string; summary: string }[];
  streaming?: boolean;
};

// The pt-PT formats of the specification: 180.000€, 2.769€/m².
const euros = (n: number) => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ".") + "€";

function turnsOf(ms: StoredMessage[]): Turn[] {
  const out: Turn[] = [];
  for (const m of ms) {
    if (m.role === "user") out.push({ key: m.id, role: "user", text: m.content, tools: [], actions: [] });
    else if (m.role === "assistant") {
      const calls = (m.tool_calls ?? []).map((c) => ({ name: c.name, args: c.arguments }));
      const last = out[out.length - 1];
      // The tool calls and the answer of one turn are one bubble.
      if (last && last.role === "assistant") {
        last.tools.push(...calls);
        if (m.content) last.text = m.content;
      } else out.push({ key: m.id, role: "assistant", text: m.content, tools: calls, actions: [] });
    }
  }
  return out;
}

export function Rehab() {
  const { query } = useLocation();
  const conv = query.get("conversation") ?? "";
  const [turns, setTurns] = useState<Turn[]>([]);
  const [todos, setTodos] = useState<Todo[]>([]);
  const [consent, setConsent] = useState<Consent | null>(null);
  const [items, setItems] = useState<Item[]>([]);
  const [actions, setActions] = useState<Action[]>([]);
  const [convs, setConvs] = useState<Conversation[]>([]);
  const [profile, setProfile] = useState<Profile | null>(null);
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState("");
  const [tokens, setTokens] = useState(0);
  const [err, setErr] = useState<unknown>(null);
  const own = useRef("");
  const bottom = useRef<HTMLDivElement>(null);

  const refresh = useCallback(async () => {
    const [p, a, c, pr] = await Promise.all([
      api<Item[]>("GET", base + "/portfolio"),
      api<Action[]>("GET", base + "/actions?limit=20"),
      api<Conversation[]>("GET", base + "/conversations?limit=10"),
      api<Profile>("GET", base + "/profile"),
    ]);
    setItems(p);
    setActions(a);
    setConvs(c);
    setProfile(pr);
  }, []);

  const loadConversation = useCallback(async (id: string) => {
    const [ms, st] = await Promise.all([
      api<StoredMessage[]>("GET", `${base}/conversations/${encodeURIComponent(id)}/messages`),
      api<StateView>("GET", `${base}/conversations/${encodeURIComponent(id)}/state`),
    ]);
    const t = turnsOf(ms);
    const pending = st.pending_consent?.value ?? null;
    // The question of a pending consent is the end of the conversation.
    if (pending && !(t.length && t[t.length - 1].text === pending.question)) t.push({ key: "consent", role: "assistant", text: pending.question, tools: [], actions: [] });
    setTurns(t);
    setTodos(st.todos ?? []);
    setConsent(pending);
  }, []);

  useEffect(() => { refresh().catch(setErr); }, [refresh]);
  // The page is in pt-PT: its dates, numbers and the browser's own controls follow.
  useEffect(() => {
    const prev = document.documentElement.lang;
    document.documentElement.lang = "pt-PT";
    return () => { document.documentElement.lang = prev; };
  }, []);
  useEffect(() => {
    if (conv && conv === own.current) return;
    setTurns([]);
    setTodos([]);
    setConsent(null);
    setErr(null);
    if (conv) loadConversation(conv).catch(setErr);
  }, [conv, loadConversation]);
  useEffect(() => { bottom.current?.scrollIntoView?.({ block: "end" }); }, [turns]);

  // update changes the assistant's turn being streamed (the last one).
  const update = (f: (t: Turn) => Turn) => setTurns((ts) => {
    const i = ts.length - 1;
    if (i < 0 || ts[i].role !== "assistant" || !ts[i].streaming) return ts;
    const next = [...ts];
    next[i] = f(ts[i]);
    return next;
  });

  const send = async (message: string) => {
    const m = message.trim();
    if (!m || busy) return;
    setErr(null);
    setBusy(true);
    setConsent(null);
    setTokens(0);
    setStatus("");
    const stamp = String(Date.now());
    setTurns((ts) => [...ts, { key: "u" + stamp, role: "user", text: m, tools: [], actions: [] },
      { key: "a" + stamp, role: "assistant", text: "", tools: [], actions: [], streaming: true }]);
    let convID = conv;
    try {
      for await (const ev of sse("POST", base + "/chat", conv ? { message: m, conversation_id: conv } : { message: m })) {
        const d = (ev.data ?? {}) as Record<string, unknown>;
        switch (ev.event) {
          case "thinking":
            setStatus(String(d.message ?? "A processar..."));
            if (typeof d.conversation_id === "string" && d.conversation_id !== convID) {
              convID = d.conversation_id;
              own.current = convID;
              navigate(ui("/apps/rehab?conversation=" + convID), true);
            }
            break;
          case "tool_call":
            setStatus("A usar " + String(d.tool) + "…");
            update((t) => ({ ...t, tools: [...t.tools, { name: String(d.tool), args: d.args }] }));
            break;
          case "action":
            update((t) => ({ ...t, actions: [...t.actions, { action_type: String(d.action_type ?? ""), summary: String(d.summary ?? "") }] }));
            refresh().catch(() => {});
            break;
          case "message": {
            const c = typeof d.content === "string" ? d.content : "";
            if (!d.done) {
              setTokens((n) => n + 1);
              update((t) => ({ ...t, text: t.text + c }));
            } else {
              update((t) => ({ ...t, text: c && !t.text.endsWith(c) ? t.text + c : t.text, streaming: false }));
              if (d.consent) setConsent(d.consent as Consent);
            }
            break;
          }
          case "todo_update":
            setTodos((d.todos as Todo[]) ?? []);
            break;
          case "error":
            setErr(new Error(String(d.message ?? "erro")));
            break;
        }
      }
    } catch (x) {
      setErr(x);
    } finally {
      update((t) => ({ ...t, streaming: false }));
      setStatus("");
      setBusy(false);
      await refresh().catch(() => {});
      if (convID) {
        const st = await api<StateView>("GET", `${base}/conversations/${encodeURIComponent(convID)}/state`).catch(() => null);
        if (st) {
          setTodos(st.todos ?? []);
          setConsent(st.pending_consent?.value ?? null);
        }
      }
    }
  };

  const submit = () => {
    const t = text;
    setText("");
    void send(t);
  };

  return (
    <div className="flex flex-col gap-4">
      <header className="flex flex-wrap items-baseline gap-x-3 gap-y-1">
        <h1 className="text-xl font-semibold">Rehabify</h1>
        <span className="muted text-sm">compra e remodelação de imóveis, por conversa</span>
        <Link className="text-sm underline" to={ui("/assistants/rehab")}>Studio</Link>
        {profile?.exists && <span className="ml-auto rounded-full bg-emerald-50 px-2 py-0.5 text-xs text-emerald-800 dark:bg-emerald-950 dark:text-emerald-200" aria-label="perfil">{profile.summary}</span>}
      </header>
      <ErrorBox error={err} />
      <div className="grid gap-4 lg:grid-cols-[minmax(0,1fr)_22rem]">
        <section aria-label="conversa" lang="pt-PT" data-busy={busy} data-tokens={tokens} className="flex min-h-[50vh] flex-col gap-3">
          <div className="flex flex-wrap items-center gap-2 text-sm">
            <h2 className="font-medium">Conversa</h2>
            {conv ? <span className="muted font-mono text-xs">{conv.slice(-8)}</span> : <span className="muted">nova</span>}
            <button className="btn ml-auto" disabled={busy} onClick={() => { own.current = ""; navigate(ui("/apps/rehab")); }}>Nova conversa</button>
          </div>
          {turns.length === 0 && !busy && (
            <p className="muted text-sm">Escreve uma mensagem: por exemplo «Analisa este imóvel: https://www.idealista.pt/imovel/50112233/», «Compara o de Alfama com o da Graça» ou «Adiciona a tarefa visitar o imóvel da Graça».</p>
          )}
          <ol aria-label="mensagens" className="flex flex-col gap-3">
            {turns.map((t) => <TurnView key={t.key} turn={t} />)}
          </ol>
          {busy && <p className="muted text-sm" aria-live="polite">{status || "A processar..."}</p>}
          {consent && !busy && (
            <section aria-label="consentimento" className="card border-amber-300 dark:border-amber-800">
              <p className="muted text-xs uppercase tracking-wide">Confirmação necessária</p>
              <p className="mt-1 text-sm">{consent.question}</p>
              <div className="mt-2 flex flex-wrap gap-2">
                <button className="btn-primary" onClick={() => void send("sim")}>Sim, remover</button>
                <button className="btn" onClick={() => void send("não")}>Não, manter</button>
              </div>
            </section>
          )}
          <div ref={bottom} />
          <form className="sticky bottom-0 flex gap-2 bg-white/90 py-2 dark:bg-zinc-950/90" onSubmit={(e) => { e.preventDefault(); submit(); }}>
            <label className="sr-only" htmlFor="rehab-input">Mensagem</label>
            <textarea id="rehab-input" className="input min-h-10 flex-1" rows={1} placeholder="Mensagem (Enter envia, Shift+Enter muda de linha)" value={text}
              onChange={(e) => setText(e.target.value)}
              onKeyDown={(e) => { if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) { e.preventDefault(); submit(); } }} />
            <button className="btn-primary" disabled={busy || !text.trim()}>Enviar</button>
          </form>
        </section>
        <aside className="flex min-w-0 flex-col gap-4 text-sm">
          <Todos todos={todos} />
          <Portfolio items={items} onError={setErr} />
          <Actions actions={actions} />
          <Conversations convs={convs} current={conv} />
        </aside>
      </div>
    </div>
  );
}

function TurnView({ turn }: { turn: Turn }) {
  const user = turn.role === "user";
  return (
    <li data-role={turn.role} data-streaming={turn.streaming ? "true" : undefined} className={"flex " + (user ? "justify-end" : "justify-start")}>
      <div className={"max-w-[90%] rounded-lg px-3 py-2 text-sm sm:max-w-[80%] " + (user ? "bg-emerald-600 text-white" : "bg-zinc-100 dark:bg-zinc-800")}>
        {turn.tools.map((c, i) => (
          <details key={i} data-tool-call={c.name} className="mb-1 rounded border border-zinc-300 bg-white/60 px-2 py-1 dark:border-zinc-700 dark:bg-zinc-900/60">
            <summary className="cursor-pointer select-none font-mono text-xs">ferramenta: {c.name}</summary>
            <pre className="code mt-1">{JSON.stringify(c.args ?? {}, null, 2)}</pre>
          </details>
        ))}
        {turn.actions.length > 0 && (
          <ul aria-label="ações do turno" className="mb-1 flex flex-col gap-0.5 text-xs">
            {turn.actions.map((a, i) => <li key={i} className="text-emerald-800 dark:text-emerald-300">✓ {a.action_type}: {a.summary}</li>)}
          </ul>
        )}
        {user ? <p className="whitespace-pre-wrap break-words">{turn.text}</p>
          : turn.text ? <Markdown text={turn.text} /> : turn.streaming ? <p className="muted">…</p> : null}
      </div>
    </li>
  );
}

function Todos({ todos }: { todos: Todo[] }) {
  return (
    <section aria-label="tarefas" className="card">
      <h2 className="mb-1 font-medium">Tarefas</h2>
      {todos.length === 0 ? <p className="muted">Nenhuma tarefa nesta conversa.</p> : (
        <ul className="flex flex-col gap-1">
          {todos.map((t) => (
            <li key={t.id} data-todo-status={t.status} className="flex items-start gap-2">
              <span aria-hidden className={t.status === "done" ? "text-emerald-600" : "muted"}>{t.status === "done" ? "☑" : "☐"}</span>
              <span className={t.status === "done" ? "muted line-through" : ""}>{t.task}</span>
              <span className="sr-only">{t.status === "done" ? "(concluída)" : "(pendente)"}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

// pdf opens the report; with a credential the link cannot carry it, so the file is fetched.
async function openPDF(href: string) {
  const auth = currentAuth();
  const h: Record<string, string> = {};
  if (auth.kind === "key") h["x-api-key"] = auth.value;
  if (auth.kind === "token") h["authorization"] = "Bearer " + auth.value;
  const res = await fetch(href, { headers: h });
  if (!res.ok) throw new Error("O relatório não está disponível (" + res.status + ").");
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement("a");
  a.href = url;
  a.download = href.split("/").slice(-2, -1)[0] + ".pdf";
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

function Portfolio({ items, onError }: { items: Item[]; onError: (e: unknown) => void }) {
  const [picked, setPicked] = useState<string[]>([]);
  const [table, setTable] = useState("");
  useEffect(() => setPicked((p) => p.filter((id) => items.some((i) => i.property_id === id))), [items]);
  const compare = async () => {
    try {
      const r = await api<{ table: string }>("GET", base + "/portfolio/compare?ids=" + picked.map(encodeURIComponent).join(","));
      setTable(r.table);
    } catch (x) { onError(x); }
  };
  return (
    <section aria-label="portfólio" className="flex flex-col gap-2">
      <div className="flex items-center gap-2">
        <h2 className="font-medium">Portfólio</h2>
        <span className="muted text-xs">{items.length} imóve{items.length === 1 ? "l" : "is"}</span>
        <button className="btn ml-auto" disabled={picked.length < 2 || picked.length > 3} onClick={() => void compare()}
          title="Escolhe 2 ou 3 imóveis">Comparar{picked.length ? ` (${picked.length})` : ""}</button>
      </div>
      {items.length === 0 && <p className="muted">O portfólio está vazio.</p>}
      <ul className="flex flex-col gap-2" aria-label="imóveis">
        {items.map((it) => {
          const p = it.property;
          const pdf = `${base}/properties/${encodeURIComponent(it.property_id)}/report.pdf`;
          return (
            <li key={it.id} data-property={it.property_id} data-active={it.is_active} className={"card p-3 " + (it.is_active ? "border-emerald-400 dark:border-emerald-700" : "")}>
              <div className="flex items-start gap-2">
                <input type="checkbox" className="mt-1" aria-label={"comparar " + it.index_summary} checked={picked.includes(it.property_id)}
                  onChange={(e) => setPicked((x) => (e.target.checked ? [...x, it.property_id] : x.filter((y) => y !== it.property_id)))} />
                <div className="min-w-0 flex-1">
                  <p className="font-medium">{it.nickname || it.index_summary}</p>
                  <p className="muted truncate text-xs" title={p.title}>{p.title} · {p.location}</p>
                  <p className="mt-1 text-xs">{p.typology} · {euros(p.price)} · {p.area_m2}m²{p.area_m2 ? " · " + euros(p.price / p.area_m2) + "/m²" : ""}</p>
                  {it.chat_summary && <p className="mt-1 whitespace-pre-wrap text-xs">{it.chat_summary.split("\n").filter((l) => l.startsWith("Obras")).join("\n")}</p>}
                  <p className="mt-1 flex flex-wrap gap-2 text-xs">
                    <span className="rounded-full bg-zinc-100 px-2 dark:bg-zinc-800">{it.status}</span>
                    {it.is_active && <span className="rounded-full bg-emerald-100 px-2 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100">em foco</span>}
                    {it.chat_summary && (
                      <a className="underline" href={pdf} onClick={(e) => {
                        if (currentAuth().kind === "none") return;
                        e.preventDefault();
                        openPDF(pdf).catch(onError);
                      }} target="_blank" rel="noreferrer">Relatório PDF</a>
                    )}
                  </p>
                </div>
              </div>
            </li>
          );
        })}
      </ul>
      {table && (
        <section aria-label="comparação" className="card overflow-x-auto p-3">
          <div className="mb-1 flex items-center"><h3 className="font-medium">Comparação</h3><button className="btn ml-auto" onClick={() => setTable("")}>Fechar</button></div>
          <Markdown text={table} />
        </section>
      )}
    </section>
  );
}

// The action log's words in pt-PT: what was done and which field changed. A name the page
// does not know is shown with its underscores as spaces.
const actionNames: Record<string, string> = {
  save_to_portfolio: "Guardado na carteira", remove_from_portfolio: "Removido da carteira", switch_active_property: "Imóvel em foco mudado",
  update_memory: "Memória atualizada", update_portfolio: "Carteira atualizada", update_profile: "Perfil atualizado", update_property: "Imóvel atualizado",
  analysis_renovation: "Análise de obras", analysis_dry: "Análise de obras (seco)", analysis_wet: "Análise de obras (húmido)",
};
const fieldNames: Record<string, string> = {
  name: "Nome", location: "Localização", memory: "Memória", status: "Estado", price: "Preço", nickname: "Alcunha",
  fiscal: "Fiscal", budget: "Orçamento", renovation: "Obras", preferences: "Preferências", goals: "Objetivos",
};
const words = (k: string) => { const w = k.replace(/[_-]+/g, " ").trim(); return w.charAt(0).toUpperCase() + w.slice(1); };
export const actionName = (k: string) => actionNames[k] ?? words(k);
export const fieldName = (k: string) => k.split(".").map((p) => fieldNames[p] ?? words(p)).join(" · ");
const ptDate = (t?: string) => when(t, "pt-PT");

function Actions({ actions }: { actions: Action[] }) {
  return (
    <section aria-label="ações recentes" className="card">
      <h2 className="mb-1 font-medium">Ações recentes</h2>
      {actions.length === 0 ? <p className="muted">Nenhuma ação ainda.</p> : (
        <ol className="flex max-h-80 flex-col gap-2 overflow-auto">
          {actions.map((a) => (
            <li key={a.id} data-action={a.action_type} className="border-b border-zinc-100 pb-1 last:border-0 dark:border-zinc-800">
              <p className="flex gap-2"><span className="text-xs font-medium" title={a.action_type}>{actionName(a.action_type)}</span><span className="muted ml-auto text-xs">{ptDate(a.created_at)}</span></p>
              {a.field_changed && (
                <p className="break-words text-xs" data-field={a.field_changed}><span className="font-medium">{fieldName(a.field_changed)}</span>: {a.old_value ? <><s className="muted">{a.old_value.split("\n")[0]}</s> → </> : ""}{(a.new_value ?? "").split("\n")[0]}</p>
              )}
              {a.trigger_message && <p className="muted truncate text-xs" title={a.trigger_message}>«{a.trigger_message}» · confiança {typeof a.confidence === "number" ? new Intl.NumberFormat("pt-PT", { style: "percent" }).format(a.confidence) : a.confidence}</p>}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function Conversations({ convs, current }: { convs: Conversation[]; current: string }) {
  return (
    <section aria-label="conversas" className="card">
      <h2 className="mb-1 font-medium">Conversas</h2>
      {convs.length === 0 ? <p className="muted">Nenhuma conversa ainda.</p> : (
        <ul className="flex flex-col gap-2">
          {convs.map((c) => (
            <li key={c.id}>
              <button className={"w-full rounded px-1 text-left hover:bg-zinc-100 dark:hover:bg-zinc-800 " + (c.id === current ? "bg-emerald-50 dark:bg-emerald-950" : "")}
                aria-current={c.id === current ? "true" : undefined}
                onClick={() => navigate(ui("/apps/rehab?conversation=" + c.id))}>
                <span className="muted text-xs">{ptDate(c.started_at)} · {c.message_count} mensagens{c.ended_at ? " · terminada" : ""}</span>
                <span className="block text-xs">{c.summary || "(sem resumo ainda)"}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
