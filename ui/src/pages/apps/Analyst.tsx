// The strategic analyst's inbox (/ui/apps/analyst): its sessions (threads of the analyst
// assistant, with the gate each waits at), a new session started from the page, the pending
// interrupt of the open session as an Agent Inbox card at each of the three gates (plan,
// discovery, final) answered from the page, the run's progress (subgraph nodes included), the
// final report as Markdown with its saved report ID, and the user's saved reports.
import { useCallback, useEffect, useRef, useState } from "react";
import type { Catalog } from "../../App";
import { api, interruptsOf, short, sse, textOf, when, type Interrupt, type Message, type Thread, type ThreadState } from "../../api";
import { Link, navigate, ui, useLocation } from "../../router";
import { ErrorBox } from "../../components/Json";
import { InboxCard } from "../../components/InboxCard";
import { Markdown } from "../../components/Markdown";
import { Messages } from "../../components/Messages";
import { emptyProgress, feed, ProgressSteps, type ProgressState } from "../../components/Progress";

const graphID = "analyst";
const routes = "/apps/analyst/api/v1";

type Values = {
  messages?: Message[];
  query?: string;
  current_phase?: string;
  final_report?: string;
  report_id?: string;
  report_format?: string;
  report_json?: unknown;
};
type ReportMeta = { id: string; title: string; format: string; created_at: string; session_id?: string; topic_tags?: string[] };
type Report = ReportMeta & { content: string; chunks?: number };

// The three gates by the action their interrupt names (docs/apps/analyst.md, Interrupts).
const gates: [string, string][] = [["Review research plan", "plan"], ["Review discoveries", "discovery"], ["Review final report", "final"]];

function gateOf(it: Interrupt | undefined): string {
  const v = it?.value;
  const one = Array.isArray(v) ? v[0] : v;
  const action = (one as { action_request?: { action?: string } } | undefined)?.action_request?.action;
  return gates.find(([a]) => a === action)?.[1] ?? (it ? "question" : "");
}

function topicOf(v: Values | undefined): string {
  if (!v) return "";
  if (v.query) return v.query;
  const h = (v.messages ?? []).filter((m) => m.type === "human").pop();
  return h ? textOf(h.content) : "";
}

export function AnalystInbox({ catalog }: { catalog: Catalog | null }) {
  const { query } = useLocation();
  const tid = query.get("thread") ?? "";
  const assistant = catalog?.assistants.find((a) => a.graph_id === graphID);
  const [sessions, setSessions] = useState<Thread[] | null>(null);
  const [reports, setReports] = useState<ReportMeta[]>([]);
  const [open, setOpen] = useState<Report | null>(null);
  const [err, setErr] = useState<unknown>(null);

  const refresh = useCallback(async () => {
    const [ts, rs] = await Promise.all([
      api<Thread[]>("POST", "/threads/search", { metadata: { graph_id: graphID }, limit: 50, sort_by: "updated_at", sort_order: "desc" }),
      api<ReportMeta[]>("GET", routes + "/reports"),
    ]);
    setSessions(ts);
    setReports(rs ?? []);
  }, []);
  useEffect(() => { refresh().catch(setErr); }, [refresh]);

  const openReport = async (id: string) => {
    try { setOpen(await api<Report>("GET", routes + "/reports/" + encodeURIComponent(id))); } catch (x) { setErr(x); }
  };

  return (
    <div className="flex flex-col gap-4">
      <header className="flex flex-wrap items-baseline gap-x-3 gap-y-1">
        <h1 className="text-xl font-semibold">Strategic analyst</h1>
        <span className="muted text-sm">research with three review gates: plan, discoveries, final report</span>
        <Link className="ml-auto text-sm underline" to={ui("/assistants/" + encodeURIComponent(assistant?.assistant_id ?? graphID))}>Open in Studio</Link>
      </header>
      <ErrorBox error={err} />
      <div className="grid gap-4 lg:grid-cols-[18rem_minmax(0,1fr)]">
        <aside className="flex min-w-0 flex-col gap-4 text-sm">
          <section aria-label="sessions" className="card">
            <div className="mb-2 flex items-center gap-2">
              <h2 className="font-medium">Sessions</h2>
              <button className="btn ml-auto" onClick={() => navigate(ui("/apps/analyst"))}>New session</button>
            </div>
            {sessions === null ? <p className="muted">Loading…</p> : sessions.length === 0 ? <p className="muted">No session yet.</p> : (
              <ul className="flex flex-col gap-1">
                {sessions.map((t) => {
                  const pending = Object.values(t.interrupts ?? {}).flat()[0];
                  const gate = gateOf(pending);
                  const v = t.values as Values | undefined;
                  return (
                    <li key={t.thread_id}>
                      <Link to={ui("/apps/analyst?thread=" + t.thread_id)} data-session={t.thread_id} aria-current={t.thread_id === tid ? "page" : undefined}
                        className={"block rounded px-2 py-1 hover:bg-zinc-100 dark:hover:bg-zinc-800 " + (t.thread_id === tid ? "bg-emerald-50 dark:bg-emerald-950" : "")}>
                        <span className="block truncate">{topicOf(v) || "(no request yet)"}</span>
                        <span className="muted text-xs">
                          {when(t.updated_at)} · {gate ? "waiting at the " + gate + " gate" : v?.report_id ? "report " + v.report_id : t.status}
                        </span>
                      </Link>
                    </li>
                  );
                })}
              </ul>
            )}
          </section>
          <section aria-label="saved reports" className="card">
            <h2 className="mb-2 font-medium">Saved reports</h2>
            {reports.length === 0 ? <p className="muted">None yet: approve a final report to save one.</p> : (
              <ul className="flex flex-col gap-1">
                {reports.map((r) => (
                  <li key={r.id}>
                    <button className="w-full rounded px-2 py-1 text-left hover:bg-zinc-100 dark:hover:bg-zinc-800" onClick={() => void openReport(r.id)}>
                      <span className="block truncate">{r.title}</span>
                      <span className="muted font-mono text-xs">{r.id} · {r.format} · {when(r.created_at)}</span>
                    </button>
                  </li>
                ))}
              </ul>
            )}
          </section>
        </aside>
        <div className="flex min-w-0 flex-col gap-4">
          {open && (
            <section aria-label="report" className="card">
              <div className="mb-2 flex flex-wrap items-center gap-2">
                <h2 className="font-medium">Report <code className="code">{open.id}</code></h2>
                <span className="muted text-xs">{open.format} · {when(open.created_at)}{open.chunks ? ` · ${open.chunks} chunks indexed` : ""}</span>
                <button className="btn ml-auto" onClick={() => setOpen(null)}>Close</button>
              </div>
              {open.format === "json" ? <pre className="code">{open.content}</pre> : <Markdown text={open.content} />}
            </section>
          )}
          <Session key={tid || "new"} tid={tid} assistantID={assistant?.assistant_id ?? graphID} onChange={() => void refresh().catch(setErr)} />
        </div>
      </div>
    </div>
  );
}

function Session({ tid, assistantID, onChange }: { tid: string; assistantID: string; onChange: () => void }) {
  const [state, setState] = useState<ThreadState | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [progress, setProgress] = useState<ProgressState>(emptyProgress());
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<unknown>(null);
  const [text, setText] = useState("");
  const [name, setName] = useState("");
  const thread = useRef(tid);

  const load = useCallback(async (id: string) => {
    const s = await api<ThreadState>("GET", `/threads/${id}/state`);
    setState(s);
    const v = s.values as Values | null;
    setMessages(Array.isArray(v?.messages) ? v!.messages! : []);
  }, []);
  useEffect(() => { if (tid) load(tid).catch(setErr); }, [tid, load]);

  const run = async (body: Record<string, unknown>) => {
    setErr(null);
    setBusy(true);
    setProgress(emptyProgress());
    setState((s) => (s ? { ...s, next: [], tasks: [], interrupts: [] } : s));
    let id = thread.current;
    try {
      if (!id) {
        const t = await api<{ thread_id: string }>("POST", "/threads", { metadata: { graph_id: graphID, assistant_id: assistantID } });
        id = t.thread_id;
        thread.current = id;
      }
      const req = { assistant_id: assistantID, stream_mode: ["values", "updates", "tasks"], stream_subgraphs: true, ...body };
      for await (const ev of sse("POST", `/threads/${id}/runs/stream`, req)) {
        const mode = ev.event.split("|")[0];
        if (mode === "updates" || mode === "tasks") setProgress((p) => feed(p, ev.event, ev.data));
        else if (ev.event === "values") {
          const ms = (ev.data as Values | null)?.messages;
          if (Array.isArray(ms)) setMessages(ms);
        } else if (mode === "error") {
          const d = ev.data as { error?: string; message?: string };
          setErr(new Error((d?.error ? d.error + ": " : "") + (d?.message ?? JSON.stringify(d))));
        }
      }
    } catch (x) {
      setErr(x);
    } finally {
      setBusy(false);
      if (id) await load(id).catch(setErr);
      if (id && id !== tid) navigate(ui("/apps/analyst?thread=" + id), true);
      onChange();
    }
  };

  const send = () => {
    const t = text.trim();
    if (!t || busy) return;
    setText("");
    setMessages((m) => [...m, { type: "human", content: t, id: "pending-" + Date.now() }]);
    const input: Record<string, unknown> = { messages: [{ role: "user", content: t }] };
    if (name.trim()) input.profile = { name: name.trim() };
    void run({ input });
  };

  const interrupts = interruptsOf(state);
  const gate = gateOf(interrupts[0]);
  const v = (state?.values ?? {}) as Values;
  const step = v.report_id ? 4 : gate === "final" ? 3 : gate === "discovery" ? 2 : gate === "plan" ? 1 : 0;

  return (
    <section aria-label="session" data-busy={busy} data-gate={gate || undefined} className="flex flex-col gap-3">
      <div className="flex flex-wrap items-center gap-2">
        <h2 className="font-medium">{tid ? "Session " + short(tid) : "New session"}</h2>
        {tid && <Link className="text-xs underline" to={ui("/threads/" + tid)}>inspect the thread</Link>}
        <ol aria-label="gates" className="ml-auto flex flex-wrap gap-1 text-xs">
          {["plan", "discovery", "final", "saved"].map((g, i) => (
            <li key={g} data-current={step === i + 1 ? "true" : undefined}
              className={"rounded-full px-2 py-0.5 " + (step === i + 1 ? "bg-sky-100 text-sky-900 dark:bg-sky-900 dark:text-sky-100" : step > i + 1 ? "bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100" : "bg-zinc-100 text-zinc-600 dark:bg-zinc-800 dark:text-zinc-300")}>
              {i + 1}. {g}
            </li>
          ))}
        </ol>
      </div>
      {!tid && messages.length === 0 && !busy && (
        <p className="muted text-sm">Start a session: greet the analyst, or ask a research question straight away, such as “Is Voltra a threat to our B2B fleet leasing plans?”.
          The plan, the discoveries and the final report each wait for your review here.</p>
      )}
      <Messages messages={messages} />
      {busy && <p className="muted text-sm" aria-live="polite">Working…</p>}
      {progress.steps.length > 0 && <div className="card"><h3 className="mb-1 text-sm font-medium">Progress</h3><ProgressSteps progress={progress} /></div>}
      <ErrorBox error={err} />
      {!busy && interrupts.map((it, i) => (
        <div key={it.id ?? i} data-gate-card={gateOf(it)}>
          <InboxCard interrupt={it} busy={busy} onResume={(value) => void run({ command: { resume: interrupts.length > 1 && it.id ? { [it.id]: value } : value } })} />
        </div>
      ))}
      {!busy && v.report_id && (
        <section aria-label="final report" className="card border-emerald-300 dark:border-emerald-800">
          <p className="muted text-xs uppercase tracking-wide">Saved report</p>
          <h3 className="font-medium">Report ID <code className="code" data-report-id={v.report_id}>{v.report_id}</code> · {v.report_format ?? "markdown"}</h3>
          <div className="mt-2">
            {v.report_format === "json" && v.report_json ? <pre className="code">{JSON.stringify(v.report_json, null, 2)}</pre> : <Markdown text={v.final_report ?? ""} />}
          </div>
        </section>
      )}
      {interrupts.length === 0 && (
        <form className="flex flex-col gap-2" onSubmit={(e) => { e.preventDefault(); send(); }}>
          {!tid && (
            <label className="text-sm">Your name (optional; the analyst remembers it)
              <input className="input mt-1" value={name} onChange={(e) => setName(e.target.value)} autoComplete="name" />
            </label>
          )}
          <div className="flex gap-2">
            <label className="sr-only" htmlFor="analyst-input">Message</label>
            <textarea id="analyst-input" className="input min-h-10 flex-1" rows={2} value={text} placeholder={tid ? "A new request in this session" : "Hello, or a research question"}
              onChange={(e) => setText(e.target.value)}
              onKeyDown={(e) => { if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) { e.preventDefault(); send(); } }} />
            <button className="btn-primary" disabled={busy || !text.trim()}>{tid ? "Send" : "Start session"}</button>
          </div>
        </form>
      )}
    </section>
  );
}
