// Studio pages of one assistant: chat (streamed tokens, tool calls, interrupts as Agent Inbox
// cards, breakpoints, the run's progress), its graph, and its threads.
import { useCallback, useEffect, useRef, useState } from "react";
import type { Catalog } from "../App";
import { api, interruptsOf, sse, short, textOf, type Assistant, type GraphJSON, type Message, type ThreadState } from "../api";
import { Link, navigate, ui } from "../router";
import { ErrorBox, Json } from "../components/Json";
import { GraphView } from "../components/GraphView";
import { findCharts, SpecChart } from "../components/LineChart";
import { InboxCard } from "../components/InboxCard";
import { Markdown } from "../components/Markdown";
import { isSystem, Messages, mergeChunk, upsert } from "../components/Messages";
import { InputForm, isChatSchema, RunConfigPanel, type JSONSchema, type RunConfig } from "../components/SchemaForm";
import { emptyProgress, feed, pathOf, ProgressSteps, StepTimeline, type ProgressState } from "../components/Progress";
import { Threads } from "./Threads";
import { isUIEvent, reduceUI, uiFromState, UIComponent, UIComponents, type UIMessage } from "../components/GenerativeUI";

export function Studio({ catalog, aid, tab, thread }: { catalog: Catalog | null; aid: string; tab: string; thread: string | null }) {
  const [assistant, setAssistant] = useState<Assistant | null>(null);
  const [graph, setGraph] = useState<GraphJSON | null>(null);
  const [err, setErr] = useState<unknown>(null);
  useEffect(() => {
    // An assistant's ID, else a graph's ID: its default assistant (made by the server, named
    // after the graph) before any made from it on the Assistants page.
    const all = catalog?.assistants ?? [];
    const byGraph = all.filter((a) => a.graph_id === aid);
    const known = all.find((a) => a.assistant_id === aid) ??
      byGraph.find((a) => (a.metadata as { created_by?: string } | undefined)?.created_by === "system") ?? byGraph.find((a) => a.name === aid) ?? byGraph[0];
    if (known) setAssistant(known);
    else api<Assistant>("GET", "/assistants/" + encodeURIComponent(aid)).then(setAssistant, setErr);
    api<GraphJSON>("GET", "/assistants/" + encodeURIComponent(aid) + "/graph").then(setGraph, setErr);
  }, [aid, catalog]);
  const base = ui("/assistants/" + encodeURIComponent(aid));
  const tabs: [string, string, string][] = [["chat", "Chat", base + (thread ? "?thread=" + thread : "")], ["graph", "Graph", base + "/graph"], ["threads", "Threads", base + "/threads"]];
  return (
    <div className="flex flex-col gap-4">
      <header className="flex flex-wrap items-baseline gap-x-3 gap-y-1">
        <h1 className="text-xl font-semibold">{assistant?.name ?? aid}</h1>
        {assistant && <span className="muted font-mono text-xs">{assistant.graph_id} · {short(assistant.assistant_id)}</span>}
      </header>
      {assistant?.description && <p className="muted -mt-3 text-sm">{assistant.description}</p>}
      <nav aria-label="assistant" className="flex gap-1 border-b border-zinc-200 dark:border-zinc-800">
        {tabs.map(([k, label, to]) => (
          <Link key={k} to={to} aria-current={tab === k ? "page" : undefined}
            className={"-mb-px border-b-2 px-3 py-1.5 text-sm " + (tab === k ? "border-emerald-600 font-medium" : "border-transparent hover:border-zinc-300")}>{label}</Link>
        ))}
      </nav>
      <ErrorBox error={err} />
      {tab === "chat" && assistant && <Chat assistant={assistant} thread={thread} graph={graph} />}
      {tab === "graph" && <GraphTab aid={aid} graph={graph} />}
      {tab === "threads" && assistant && <Threads graphId={assistant.graph_id} />}
    </div>
  );
}

function GraphTab({ aid, graph }: { aid: string; graph: GraphJSON | null }) {
  const [mermaid, setMermaid] = useState("");
  const [xray, setXray] = useState(false);
  const [g, setG] = useState<GraphJSON | null>(graph);
  useEffect(() => setG(graph), [graph]);
  useEffect(() => {
    if (!xray) return;
    api<GraphJSON>("GET", "/assistants/" + encodeURIComponent(aid) + "/graph?xray=true").then(setG, () => {});
  }, [aid, xray]);
  const showMermaid = async () => {
    const res = await fetch("/assistants/" + encodeURIComponent(aid) + "/graph?format=mermaid", { headers: {} });
    setMermaid(await res.text());
  };
  if (!g) return <p className="muted">Loading the graph…</p>;
  return (
    <section aria-label="graph view" className="flex flex-col gap-3">
      <div className="flex flex-wrap gap-2">
        <label className="flex items-center gap-1 text-sm"><input type="checkbox" checked={xray} onChange={(e) => setXray(e.target.checked)} /> Show subgraphs (xray)</label>
        <button className="btn" onClick={() => void showMermaid()}>Mermaid</button>
      </div>
      <div className="card p-1"><GraphView graph={g} maxHeight={900} /></div>
      <p className="muted text-sm">{g.nodes.length} nodes, {g.edges.length} edges; dashed edges are conditional, labelled with their route's key. Laid out by dagre; drag to pan, the buttons zoom.</p>
      {mermaid && <pre className="code">{mermaid}</pre>}
    </section>
  );
}

const streamModes = ["messages-tuple", "updates", "tasks", "values", "custom"];

// SubgraphText is the text a subgraph's model streamed (messages|<ns> events with
// stream_subgraphs), labelled by where it was written: the subgraph's path and its node.
type SubgraphText = { key: string; id: string; label: string; text: string };

// subgraphLabel names a namespaced event's source: "messages|research:<task>|writer:<task>"
// with the chunk's langgraph_node "draft" is "research › writer › draft".
export function subgraphLabel(event: string, meta: unknown): string {
  const path = event.split("|").slice(1).map((p) => p.split(":")[0]);
  const node = (meta as { langgraph_node?: unknown } | null)?.langgraph_node;
  if (typeof node === "string" && node && path[path.length - 1] !== node) path.push(node);
  return path.join(" › ");
}

function addSubgraphChunk(list: SubgraphText[], event: string, data: unknown): SubgraphText[] {
  const [chunk, meta] = (Array.isArray(data) ? data : []) as [Message | undefined, unknown];
  const text = chunk ? textOf(chunk.content) : "";
  if (!chunk || !text) return list;
  const id = chunk.id ?? "";
  const key = event + "#" + id;
  const i = list.findIndex((x) => x.key === key);
  if (i < 0) return [...list, { key, id, label: subgraphLabel(event, meta), text }];
  const next = [...list];
  next[i] = { ...list[i], text: list[i].text + text };
  return next;
}

export function Chat({ assistant, thread, graph }: { assistant: Assistant; thread: string | null; graph: GraphJSON | null }) {
  const [messages, setMessages] = useState<Message[]>([]);
  const [state, setState] = useState<ThreadState | null>(null);
  const [progress, setProgress] = useState<ProgressState>(emptyProgress());
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<unknown>(null);
  const [pauseBefore, setPauseBefore] = useState<string[]>([]);
  const [runId, setRunId] = useState("");
  const [chunks, setChunks] = useState(0);
  const [subgraphs, setSubgraphs] = useState(true);
  const [subText, setSubText] = useState<SubgraphText[]>([]);
  const [uiMsgs, setUIMsgs] = useState<UIMessage[]>([]);
  const [showSystem, setShowSystem] = useState(false);
  const [schemas, setSchemas] = useState<{ input_schema?: JSONSchema; config_schema?: JSONSchema | null; context_schema?: JSONSchema | null } | null>(null);
  const [runConfig, setRunConfig] = useState<RunConfig | Error>({ configurable: {}, context: {} });
  const own = useRef<string | null>(null);
  const abort = useRef<AbortController | null>(null);
  const bottom = useRef<HTMLDivElement>(null);

  const loadState = useCallback(async (tid: string) => {
    const s = await api<ThreadState>("GET", `/threads/${tid}/state`);
    setState(s);
    const v = s.values as { messages?: Message[] } | null;
    if (v && Array.isArray(v.messages)) setMessages(v.messages);
    const kept = uiFromState(s.values);
    if (kept.length) setUIMsgs(kept);
    return s;
  }, []);

  useEffect(() => {
    if (thread && thread === own.current) return;
    setMessages([]);
    setUIMsgs([]);
    setState(null);
    setProgress(emptyProgress());
    setErr(null);
    if (thread) loadState(thread).catch(setErr);
  }, [thread, loadState]);

  useEffect(() => {
    api<typeof schemas>("GET", "/assistants/" + encodeURIComponent(assistant.assistant_id) + "/schemas").then(setSchemas, () => setSchemas({}));
  }, [assistant.assistant_id]);

  useEffect(() => {
    bottom.current?.scrollIntoView?.({ block: "end" });
  }, [messages, state]);

  const run = async (body: Record<string, unknown>, pendingHuman?: Message) => {
    if (runConfig instanceof Error) {
      setErr(runConfig);
      return;
    }
    setErr(null);
    setBusy(true);
    setProgress(emptyProgress());
    setChunks(0);
    setSubText([]);
    setState((s) => (s ? { ...s, next: [], tasks: [], interrupts: [] } : s));
    let tid = thread;
    try {
      if (!tid) {
        const t = await api<{ thread_id: string }>("POST", "/threads", { metadata: { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id } });
        tid = t.thread_id;
        own.current = tid;
        navigate(ui("/assistants/" + encodeURIComponent(assistant.assistant_id) + "?thread=" + tid), true);
      }
      if (pendingHuman) setMessages((m) => [...m, pendingHuman]);
      abort.current = new AbortController();
      const conf = runConfig as RunConfig;
      const req = { assistant_id: assistant.assistant_id, stream_mode: streamModes,
        ...(Object.keys(conf.configurable).length ? { config: { configurable: conf.configurable } } : {}),
        ...(Object.keys(conf.context).length ? { context: conf.context } : {}), ...(pauseBefore.length ? { interrupt_before: pauseBefore } : {}), ...(subgraphs ? { stream_subgraphs: true } : {}), ...body };
      for await (const ev of sse("POST", `/threads/${tid}/runs/stream`, req, abort.current.signal)) {
        const mode = ev.event.split("|")[0];
        if (mode === "custom" && isUIEvent(ev.data)) {
          const e = ev.data;
          setUIMsgs((l) => reduceUI(l, e));
          continue;
        }
        if (ev.event.includes("|")) {
          if (mode === "messages") setSubText((l) => addSubgraphChunk(l, ev.event, ev.data));
          else setProgress((p) => feed(p, ev.event, ev.data));
          continue;
        }
        if (mode === "metadata") setRunId(String((ev.data as { run_id?: string })?.run_id ?? ""));
        else if (mode === "messages") {
          const [chunk] = ev.data as [Message, unknown];
          if (chunk) {
            setChunks((n) => n + 1);
            setMessages((m) => mergeChunk(m, chunk));
          }
        } else if (mode === "updates" || mode === "tasks") {
          setProgress((p) => feed(p, mode, ev.data));
          if (mode === "updates" && ev.data && typeof ev.data === "object") {
            for (const v of Object.values(ev.data as Record<string, unknown>)) {
              const ms = (v as { messages?: Message[] } | null)?.messages;
              if (Array.isArray(ms)) setMessages((m) => upsert(m, ms));
            }
          }
        } else if (mode === "values") {
          const ms = (ev.data as { messages?: Message[] } | null)?.messages;
          if (Array.isArray(ms)) setMessages((m) => [...ms, ...m.filter((x) => x.type === "ai" && x.id && !ms.some((y) => y.id === x.id))]);
        } else if (mode === "error") {
          const d = ev.data as { error?: string; message?: string };
          setErr(new Error((d?.error ? d.error + ": " : "") + (d?.message ?? JSON.stringify(d))));
        }
      }
    } catch (x) {
      if ((x as Error).name !== "AbortError") setErr(x);
    } finally {
      abort.current = null;
      setBusy(false);
      if (tid) await loadState(tid).catch(() => {});
    }
  };

  const send = () => {
    const t = text.trim();
    if (!t || busy) return;
    setText("");
    void run({ input: { messages: [{ role: "user", content: t }] } }, { type: "human", content: t, id: "pending-" + Date.now() });
  };
  const cancel = async () => {
    if (thread && runId) await api("POST", `/threads/${thread}/runs/${runId}/cancel`).catch(setErr);
    abort.current?.abort();
  };
  const interrupts = interruptsOf(state);
  const resume = (value: unknown, id?: string) => {
    void run({ command: { resume: interrupts.length > 1 && id ? { [id]: value } : value } });
  };
  const nodes = (graph?.nodes ?? []).map((n) => n.id).filter((n) => !n.startsWith("__"));
  const paused = !busy && state && state.next?.length > 0 && interrupts.length === 0;
  const chat = isChatSchema(schemas?.input_schema);
  const hidden = messages.filter(isSystem).length;
  const pending = !busy && (interrupts.length > 0 || !!paused);
  const result = !chat && state?.values && typeof state.values === "object" ? Object.entries(state.values as Record<string, unknown>).filter(([, v]) => v !== "" && v != null) : [];

  return (
    <div className="grid gap-4 lg:grid-cols-[1fr_16rem]">
      <section aria-label="chat" data-chunks={chunks} data-busy={busy} className="flex min-h-[50vh] flex-col gap-3">
        {chat && messages.length === 0 && !busy && <p className="muted text-sm">Send a message to start a thread with {assistant.name}.</p>}
        {hidden > 0 && (
          <label className="muted flex items-center gap-2 self-end text-xs">
            <input type="checkbox" checked={showSystem} onChange={(e) => setShowSystem(e.target.checked)} />
            Show system messages ({hidden} hidden)
          </label>
        )}
        <Messages messages={messages} showSystem={showSystem}
          after={(m) => uiMsgs.filter((u) => u.metadata?.message_id === m.id).map((u) => <div key={u.id} className="mt-2"><UIComponent message={u} /></div>)} />
        <UIComponents messages={uiMsgs.filter((u) => !u.metadata?.message_id || !messages.some((m) => m.type === "ai" && m.id === u.metadata?.message_id))} />
        {!chat && schemas && !busy && (
          <section aria-label="result" className="card flex flex-col gap-2">
            <h2 className="font-medium">{result.length ? "State" : "Result"}</h2>
            {result.length === 0 ? <p className="muted text-sm">Fill in the input and run the graph: its state shows here.</p>
              : result.map(([k, v]) => (
                <div key={k} data-field={k}>
                  <p className="muted text-xs">{k}</p>
                  {typeof v === "string" ? <Markdown text={v} /> : <pre className="code">{JSON.stringify(v, null, 2)}</pre>}
                </div>
              ))}
          </section>
        )}
        {subText.filter((x) => !x.id || !messages.some((m) => m.id === x.id)).map((x) => (
          <section key={x.key} aria-label={"subgraph " + x.label} data-subgraph={x.label} className="rounded-lg border border-dashed border-zinc-300 px-3 py-2 text-sm dark:border-zinc-700">
            <p className="muted font-mono text-xs">subgraph · {x.label}</p>
            <Markdown text={x.text} />
          </section>
        ))}
        {!busy && state && findCharts(state.values).map((c, i) => <SpecChart key={i} spec={c} />)}
        {busy && <p className="muted text-sm" aria-live="polite">Running…</p>}
        <ErrorBox error={err} />
        <div ref={bottom} />
        {pending ? (
          <div aria-label="waiting for you" className="sticky bottom-0 z-10 flex max-h-[70vh] flex-col gap-2 overflow-y-auto bg-white/95 py-2 dark:bg-zinc-950/95">
        {interrupts.map((it, i) => (
          <InboxCard key={it.id ?? i} interrupt={it} busy={busy} onResume={(v) => resume(v, it.id)} />
        ))}
        {paused && (
          <section aria-label="breakpoint" className="card border-sky-300 dark:border-sky-800">
            <h3 className="font-medium">Paused before {state!.next.join(", ")}</h3>
            <p className="muted text-sm">A breakpoint stopped the run here. Continue it, or look at and edit the state first.</p>
            <div className="mt-2 flex flex-wrap gap-2">
              <button className="btn-primary" onClick={() => void run({ command: {} })}>Continue</button>
              <Link className="btn" to={ui("/threads/" + thread)}>Inspect and edit state</Link>
            </div>
          </section>
        )}
          </div>
        ) : chat ? (
        <form className="sticky bottom-0 flex gap-2 bg-white/90 py-2 dark:bg-zinc-950/90" onSubmit={(e) => { e.preventDefault(); send(); }}>
          <label className="sr-only" htmlFor="chat-input">Message</label>
          <textarea id="chat-input" className="input min-h-10 flex-1" rows={1} placeholder="Message (Enter sends, Shift+Enter for a new line)" value={text}
            onChange={(e) => setText(e.target.value)}
            onKeyDown={(e) => { if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) { e.preventDefault(); send(); } }} />
          {busy ? <button type="button" className="btn" onClick={() => void cancel()}>Cancel</button>
            : <button className="btn-primary" disabled={!text.trim()}>Send</button>}
        </form>
        ) : schemas?.input_schema ? (
          <InputForm schema={schemas.input_schema} busy={busy} onRun={(input) => void run({ input })} />
        ) : null}
      </section>
      <aside className="flex flex-col gap-3 text-sm">
        <div className="card">
          <h2 className="mb-1 font-medium">Thread</h2>
          {thread ? (
            <p className="flex flex-wrap gap-2"><Link className="font-mono underline" to={ui("/threads/" + thread)}>{short(thread)}</Link>
              <Link className="underline" to={ui("/assistants/" + encodeURIComponent(assistant.assistant_id))}>New thread</Link></p>
          ) : <p className="muted">A new thread starts with the first message.</p>}
        </div>
        <div className="card">
          <h2 className="mb-1 font-medium">Progress</h2>
          {graph && <div className="mb-2 rounded border border-zinc-200 dark:border-zinc-800"><GraphView graph={graph} status={progress.status} path={busy ? undefined : pathOf(progress, progress.steps.length > 0 && !pending && !err)} maxHeight={300} /></div>}
          {progress.steps.length ? <ProgressSteps progress={progress} /> : <p className="muted">Each node's status shows here as the run goes.</p>}
          <StepTimeline progress={progress} />
        </div>
        <RunConfigPanel configSchema={schemas?.config_schema} contextSchema={schemas?.context_schema}
          defaults={(assistant as { config?: { configurable?: Record<string, unknown> } }).config?.configurable} onChange={setRunConfig} />
        <fieldset className="card">
          <legend className="font-medium">Pause before</legend>
          {nodes.map((n) => (
            <label key={n} className="flex items-center gap-2 font-mono text-xs">
              <input type="checkbox" checked={pauseBefore.includes(n)} onChange={(e) => setPauseBefore((p) => (e.target.checked ? [...p, n] : p.filter((x) => x !== n)))} />
              {n}
            </label>
          ))}
          <p className="muted mt-1 text-xs">Breakpoints (interrupt_before) for the next runs.</p>
        </fieldset>
        <label className="card flex items-center gap-2 text-xs">
          <input type="checkbox" checked={subgraphs} onChange={(e) => setSubgraphs(e.target.checked)} /> Stream subgraphs: their tokens and progress (stream_subgraphs)
        </label>
        {state && <Json label="State" value={state.values} />}
      </aside>
    </div>
  );
}
