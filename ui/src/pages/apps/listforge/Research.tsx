// The Research tab: start research, its progress live over the /research WebSocket, the
// pricing card, the evidence card and the history of research and jobs.
import { useCallback, useEffect, useState } from "react";
import { ErrorBox } from "../../../components/Json";
import { Table } from "../../../components/Table";
import { lf, money, pct, when, useSocket, STEPS, type Bundle, type Evidence, type Item, type Job, type Page, type Research } from "./lf";

export function ResearchTab({ item, latest, onLatest, job, onJob }: {
  item: Item; latest: Research | null | undefined; onLatest: (r: Research | null) => void; job: string | null; onJob: (id: string) => void;
}) {
  const [jobs, setJobs] = useState<Job[] | null>(null);
  const [history, setHistory] = useState<Page<Research> | null>(null);
  const [evidence, setEvidence] = useState<Bundle | undefined>(undefined);
  const [err, setErr] = useState<unknown>(null);
  const [startErr, setStartErr] = useState<unknown>(null);
  const [starting, setStarting] = useState(false);
  const [running, setRunning] = useState(false);

  const load = useCallback(async () => {
    setErr(null);
    try {
      const [j, h, e, l] = await Promise.all([
        lf<{ items: Job[] }>("GET", `/items/${item.id}/research/jobs?limit=10`),
        lf<Page<Research>>("GET", `/items/${item.id}/research/history?limit=10`),
        lf<Bundle>("GET", `/items/${item.id}/evidence`),
        lf<Research | null>("GET", `/items/${item.id}/research/latest`),
      ]);
      setJobs(j.items);
      setHistory(h);
      setEvidence(e);
      onLatest(l);
      return j.items;
    } catch (x) {
      setErr(x);
      return null;
    }
  }, [item.id, onLatest]);

  // A job still going when the page opens is followed again.
  useEffect(() => {
    void load().then((js) => {
      const open = js?.find((j) => j.status === "pending" || j.status === "running");
      if (open && !job) onJob(open.id);
    });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [load]);

  const start = async () => {
    setStarting(true);
    setStartErr(null);
    try {
      const r = await lf<{ jobId: string }>("POST", `/items/${item.id}/research`, { type: latest ? "pricing_refresh" : "manual_request" });
      setRunning(true);
      onJob(r.jobId);
      void load();
    } catch (x) {
      setStartErr(x);
    } finally {
      setStarting(false);
    }
  };
  const done = useCallback(() => { setRunning(false); void load(); }, [load]);

  return (
    <div className="flex flex-col gap-4">
      <div className="flex flex-wrap items-center gap-3">
        <button className="btn-primary" onClick={() => void start()} disabled={starting || running}>{latest ? "Refresh research" : "Start research"}</button>
        <span className="muted text-sm">{latest ? "Last researched " + when(latest.createdAt) : "Research finds comparable sales and recommends price bands."}</span>
      </div>
      <ErrorBox error={startErr} />
      <ErrorBox error={err} />
      <div className="grid grid-cols-1 gap-4 lg:grid-cols-3">
        <div className="flex min-w-0 flex-col gap-4 lg:col-span-2">
          <PricingCard research={latest} currency={item.currency} onStart={() => void start()} busy={starting || running} />
          <EvidenceCard bundle={evidence} />
        </div>
        <div className="flex flex-col gap-4">
          {job && <ResearchProgress key={job} jobId={job} onRunning={setRunning} onDone={done} />}
          <HistoryCard jobs={jobs} history={history} />
        </div>
      </div>
    </div>
  );
}

type StepState = "pending" | "running" | "done" | "error";

// ResearchProgress follows a job over the /research WebSocket: subscribe_job, then job_status
// (the job, with the node now running), node_complete (each finished step; a late subscriber
// gets the earlier ones first) and job_complete.
export function ResearchProgress({ jobId, onDone, onRunning }: { jobId: string; onDone: (r: Research | null) => void; onRunning?: (b: boolean) => void }) {
  const [sock, state, reconnect] = useSocket("/ws/research", jobId);
  const [job, setJob] = useState<Job | null>(null);
  const [steps, setSteps] = useState<Record<string, StepState>>({});
  const [finished, setFinished] = useState<{ status: string; error?: string } | null>(null);
  const [err, setErr] = useState<string | null>(null);

  useEffect(() => {
    if (!sock) return;
    const offs = [
      sock.on("job_status", (j: Job) => {
        setJob(j);
        if (j.status === "running" && j.currentNode) setSteps((s) => (s[j.currentNode!] === "done" ? s : { ...s, [j.currentNode!]: "running" }));
      }),
      sock.on("node_complete", (n: { node: string; status: string }) => {
        setSteps((s) => ({ ...s, [n.node]: n.status === "success" ? "done" : "error" }));
      }),
      sock.on("job_complete", (c: { status: string; error?: string; message?: string; research?: Research }) => {
        setFinished({ status: c.status, error: c.error || c.message });
        onDone(c.research ?? null);
      }),
      sock.on("error", (e: { error?: string }) => setErr(e.error ?? "the server refused the subscription")),
    ];
    sock.send("subscribe_job", { jobId });
    return () => offs.forEach((f) => f());
  }, [sock, jobId, onDone]);

  const status = finished?.status ?? job?.status ?? "pending";
  useEffect(() => { onRunning?.(status === "pending" || status === "running"); }, [status, onRunning]);
  const paused = status === "pending" && job?.message;
  const current = !finished && job?.status === "running" ? job.currentNode : undefined;
  return (
    <div className="card" aria-label="research progress" data-job-status={status}>
      <div className="mb-2 flex items-baseline justify-between gap-2">
        <h2 className="font-semibold">{finished ? "Research " + (status === "success" ? "finished" : "failed") : "Research in progress"}</h2>
        <span className={"text-xs font-medium " + (status === "success" ? "text-emerald-700 dark:text-emerald-400" : status === "error" ? "text-red-700 dark:text-red-400" : "muted")}>{status}</span>
      </div>
      {paused && <p className="mb-2 rounded bg-amber-50 px-2 py-1 text-sm text-amber-900 dark:bg-amber-950 dark:text-amber-200" role="status">{job?.message}</p>}
      <ol className="flex flex-col gap-1" aria-label="research steps">
        {STEPS.map((s) => {
          const st: StepState = steps[s.id] ?? (current === s.id ? "running" : "pending");
          return (
            <li key={s.id} data-step={s.id} data-state={st}
              className={"flex items-center gap-2 rounded px-2 py-1 text-sm " + (st === "done" ? "bg-emerald-50 text-emerald-800 dark:bg-emerald-950 dark:text-emerald-200" : st === "running" ? "animate-pulse bg-sky-50 dark:bg-sky-950" : st === "error" ? "bg-red-50 text-red-800 dark:bg-red-950 dark:text-red-200" : "")}>
              <span aria-hidden className="w-4 text-center">{st === "done" ? "✓" : st === "running" ? "◌" : st === "error" ? "✕" : "○"}</span>
              <span>{s.label}</span>
              <span className="sr-only">: {st}</span>
            </li>
          );
        })}
      </ol>
      {job && <p className="muted mt-2 text-xs">{job.stepCount} step{job.stepCount === 1 ? "" : "s"} · {job.type} · priority {job.priority}{job.attempts > 1 ? " · run " + job.attempts : ""}</p>}
      {finished?.error && <p role="alert" className="mt-2 text-sm text-red-700 dark:text-red-400">{finished.error}</p>}
      {err && <p role="alert" className="mt-2 text-sm text-red-700 dark:text-red-400">{err}</p>}
      {!finished && state === "closed" && (
        <p className="mt-2 text-sm">The connection closed. <button className="btn" onClick={reconnect}>Reconnect</button></p>
      )}
      {!finished && state === "connecting" && <p className="muted mt-2 text-xs" role="status">Connecting…</p>}
    </div>
  );
}

const bandStyle: Record<string, string> = {
  floor: "border-zinc-300 dark:border-zinc-700",
  target: "border-emerald-500",
  ceiling: "border-zinc-300 dark:border-zinc-700",
};
const metricLabel: Record<string, string> = {
  sell_through_rate: "Sell-through", days_to_sell: "Days to sell", active_competition: "Active competition", search_volume: "Search volume",
};

function Bar({ v, label }: { v: number; label: string }) {
  return (
    <div className="flex items-center gap-2 text-xs" title={label + " " + pct(v)}>
      <div className="h-1.5 flex-1 overflow-hidden rounded bg-zinc-200 dark:bg-zinc-700" role="meter" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(v * 100)}>
        <div className={"h-full " + (v >= 0.7 ? "bg-emerald-500" : v >= 0.4 ? "bg-amber-500" : "bg-red-500")} style={{ width: pct(Math.max(0, Math.min(1, v))) }} />
      </div>
      <span className="w-9 text-right">{pct(v)}</span>
    </div>
  );
}

export function PricingCard({ research, currency, onStart, busy }: { research: Research | null | undefined; currency: string; onStart: () => void; busy: boolean }) {
  if (research === undefined) return <div className="card" aria-label="pricing"><p className="muted text-sm" role="status">Loading the research…</p></div>;
  if (!research) {
    return (
      <div className="card text-center" aria-label="pricing">
        <h2 className="font-semibold">No research yet</h2>
        <p className="muted text-sm">Run research to get price recommendations from comparable sales.</p>
        <button className="btn-primary mt-3" onClick={onStart} disabled={busy}>Start research</button>
      </div>
    );
  }
  const d = research.data;
  const bands = ["floor", "target", "ceiling"].map((l) => d.priceBands?.find((b) => b.label === l)).filter(Boolean) as NonNullable<typeof d.priceBands>;
  const p = d.productId;
  return (
    <div className="card" aria-label="pricing">
      <div className="mb-3 flex flex-wrap items-baseline justify-between gap-2">
        <h2 className="font-semibold">Pricing</h2>
        <div className="w-48"><Bar v={d.overallConfidence} label="overall confidence" /></div>
      </div>
      {p && (
        <p className="mb-3 text-sm">
          Identified as <strong>{[p.brand, p.model].filter(Boolean).join(" ") || "unknown"}</strong>
          {p.mpn && <> · MPN <code>{p.mpn}</code></>}{p.upc && <> · UPC <code>{p.upc}</code></>}
          <span className="muted"> ({pct(p.confidence)}{p.source ? ", from " + p.source : ""})</span>
        </p>
      )}
      {(d.notes ?? []).map((n) => <p key={n} role="note" className="mb-2 rounded bg-amber-50 px-2 py-1 text-sm text-amber-900 dark:bg-amber-950 dark:text-amber-200">{n}</p>)}
      <ul className="grid gap-3 sm:grid-cols-3" aria-label="price bands">
        {bands.map((b) => (
          <li key={b.label} data-band={b.label} className={"rounded-lg border-2 p-3 " + bandStyle[b.label]}>
            <p className="muted text-xs font-semibold uppercase tracking-wide">{b.label}</p>
            <p className="text-2xl font-semibold">{money(b.amount, b.currency || currency)}</p>
            <Bar v={b.confidence} label={b.label + " confidence"} />
            <p className="muted mt-1 text-xs">{b.reasoning}</p>
          </li>
        ))}
      </ul>
      {bands.length === 0 && <p className="muted text-sm">The research recommended no price.</p>}
      <div className="mt-4 grid gap-4 sm:grid-cols-2">
        <section aria-label="demand signals">
          <h3 className="mb-1 text-sm font-semibold">Demand</h3>
          {(d.demandSignals ?? []).length === 0 ? <p className="muted text-sm">No demand data.</p> : (
            <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-0.5 text-sm">
              {d.demandSignals!.map((s) => (
                <div key={s.metric} className="contents">
                  <dt className="muted">{metricLabel[s.metric] ?? s.metric}</dt>
                  <dd>{s.unit === "ratio" ? pct(s.value) : s.value + " " + s.unit}{s.period ? " (" + s.period + ")" : ""}</dd>
                </div>
              ))}
            </dl>
          )}
        </section>
        <section aria-label="missing information">
          <h3 className="mb-1 text-sm font-semibold">Missing information</h3>
          {(d.missingInfo ?? []).length === 0 ? <p className="muted text-sm">Nothing missing.</p> : (
            <ul className="flex flex-col gap-1 text-sm">
              {d.missingInfo!.map((m) => (
                <li key={m.field}>
                  <span className={"mr-1 rounded px-1 text-xs " + (m.importance === "required" ? "bg-red-100 text-red-800 dark:bg-red-950 dark:text-red-200" : m.importance === "recommended" ? "bg-amber-100 text-amber-900 dark:bg-amber-950 dark:text-amber-200" : "bg-zinc-100 dark:bg-zinc-800")}>{m.importance}</span>
                  <strong>{m.field}</strong>: {m.reason}
                  {m.suggestedPrompt && <div className="muted text-xs">“{m.suggestedPrompt}”</div>}
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>
      <p className="muted mt-3 text-xs">
        {d.competitorCount !== undefined && <>{d.competitorCount} competing listings · </>}
        {(d.recommendedMarketplaces ?? []).length > 0 && <>sell on {d.recommendedMarketplaces!.join(", ")} · </>}
        generated {when(d.generatedAt || research.createdAt)}
      </p>
    </div>
  );
}

function EvidenceCard({ bundle }: { bundle: Bundle | undefined }) {
  return (
    <div className="card" aria-label="evidence">
      <h2 className="mb-2 font-semibold">Evidence{bundle ? <span className="muted text-sm font-normal"> · {bundle.count} comparables kept</span> : null}</h2>
      {bundle === undefined && <p className="muted text-sm" role="status">Loading…</p>}
      {bundle === null && <p className="muted text-sm">No evidence yet: research keeps the comparable listings it priced from.</p>}
      {bundle && (
        <div className="max-h-96 overflow-auto">
          <Table<Evidence>
            label="evidence"
            rows={bundle.records ?? []}
            rowKey={(r) => r.id}
            initialSort={{ key: "relevanceScore", desc: true }}
            empty={<p className="muted text-sm">The research kept no comparable.</p>}
            columns={[
              { key: "title", header: "Listing", render: (r) => r.url ? <a className="underline" href={r.url} target="_blank" rel="noreferrer noopener">{r.title}</a> : r.title },
              { key: "type", header: "Kind", render: (r) => (r.type === "sold_listing" ? "sold" : r.type === "active_listing" ? "active" : r.type) },
              { key: "price", header: "Price", align: "right", render: (r) => money(r.price, r.currency), value: (r) => r.price ?? -1 },
              { key: "condition", header: "Condition" },
              { key: "date", header: "Date", render: (r) => <span className="whitespace-nowrap">{(r.soldDate || r.listedDate || "").slice(0, 10)}</span>, value: (r) => r.soldDate || r.listedDate || "" },
              { key: "relevanceScore", header: "Relevance", align: "right", render: (r) => pct(r.relevanceScore) },
            ]}
          />
        </div>
      )}
    </div>
  );
}

function HistoryCard({ jobs, history }: { jobs: Job[] | null; history: Page<Research> | null }) {
  const dur = (j: Job) => (j.startedAt && j.completedAt ? ((new Date(j.completedAt).getTime() - new Date(j.startedAt).getTime()) / 1000).toFixed(2) + " s" : "");
  return (
    <div className="card" aria-label="research history">
      <h2 className="mb-2 font-semibold">History</h2>
      {!jobs && <p className="muted text-sm" role="status">Loading…</p>}
      {history && history.items.length > 0 && (
        <>
          <h3 className="text-sm font-semibold">Research</h3>
          <ol className="mb-3 flex flex-col gap-1 text-sm">
            {history.items.map((r) => {
              const t = r.data.priceBands?.find((b) => b.label === "target");
              return (
                <li key={r.id}>
                  {when(r.createdAt)} · target {t ? money(t.amount, t.currency) : "—"} · {pct(r.data.overallConfidence)} confidence{r.isCurrent && <span className="ml-1 rounded bg-emerald-100 px-1 text-xs text-emerald-800 dark:bg-emerald-950 dark:text-emerald-200">current</span>}
                </li>
              );
            })}
          </ol>
        </>
      )}
      {jobs && jobs.length === 0 && <p className="muted text-sm">No research jobs yet.</p>}
      {jobs && jobs.length > 0 && (
        <>
          <h3 className="text-sm font-semibold">Jobs</h3>
          <ol className="flex flex-col gap-1 text-sm" aria-label="research jobs">
            {jobs.map((j) => (
              <li key={j.id}>
                <span className={j.status === "success" ? "text-emerald-700 dark:text-emerald-400" : j.status === "error" ? "text-red-700 dark:text-red-400" : ""}>{j.status}</span>
                {" "}· {when(j.createdAt)} · {j.stepCount} step{j.stepCount === 1 ? "" : "s"}{dur(j) && " · " + dur(j)}
                {j.error && <div className="text-xs text-red-700 dark:text-red-400">{j.error}</div>}
              </li>
            ))}
          </ol>
        </>
      )}
    </div>
  );
}
