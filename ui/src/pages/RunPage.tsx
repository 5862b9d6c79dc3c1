// A run's page: its status, a cancel button while it runs, and its progress: the stream joined
// (GET /threads/{id}/runs/{run}/stream), each node's status drawn on the graph as tasks,
// updates and debug events arrive, and the events listed.
import { useEffect, useState } from "react";
import { api, sse, short, textOf, when, type GraphJSON, type Message, type Run } from "../api";
import { Link, ui } from "../router";
import { ErrorBox, Json } from "../components/Json";
import { GraphView } from "../components/GraphView";
import { emptyProgress, feed, pathOf, ProgressSteps, StepTimeline, type ProgressState } from "../components/Progress";

type Logged = { id?: string; event: string; data: unknown };

export function RunPage({ tid, rid }: { tid: string; rid: string }) {
  const [run, setRun] = useState<Run | null>(null);
  const [graph, setGraph] = useState<GraphJSON | null>(null);
  const [progress, setProgress] = useState<ProgressState>(emptyProgress());
  const [events, setEvents] = useState<Logged[]>([]);
  const [answer, setAnswer] = useState("");
  const [live, setLive] = useState(false);
  const [err, setErr] = useState<unknown>(null);

  useEffect(() => {
    const ctl = new AbortController();
    setProgress(emptyProgress());
    setEvents([]);
    setAnswer("");
    (async () => {
      try {
        const r = await api<Run>("GET", `/threads/${tid}/runs/${rid}`);
        setRun(r);
        api<GraphJSON>("GET", "/assistants/" + encodeURIComponent(r.assistant_id) + "/graph").then(setGraph, () => {});
        setLive(true);
        for await (const ev of sse("GET", `/threads/${tid}/runs/${rid}/stream`, undefined, ctl.signal)) {
          setEvents((l) => (l.length > 500 ? l : [...l, ev]));
          setProgress((p) => feed(p, ev.event, ev.data));
          if (ev.event === "messages") {
            const [chunk] = ev.data as [Message, unknown];
            if (chunk?.type === "AIMessageChunk") setAnswer((a) => a + textOf(chunk.content));
          }
          if (ev.event === "error") setErr(new Error(JSON.stringify(ev.data)));
        }
      } catch (x) {
        if ((x as Error).name !== "AbortError") setErr(x);
      } finally {
        setLive(false);
        api<Run>("GET", `/threads/${tid}/runs/${rid}`).then(setRun, () => {});
      }
    })();
    return () => ctl.abort();
  }, [tid, rid]);

  const cancel = async () => {
    try {
      setRun(await api<Run>("POST", `/threads/${tid}/runs/${rid}/cancel?wait=1`).then(() => api<Run>("GET", `/threads/${tid}/runs/${rid}`)));
    } catch (x) {
      setErr(x);
    }
  };
  const active = run && ["pending", "running"].includes(run.status);
  return (
    <div className="flex flex-col gap-4">
      <header className="flex flex-wrap items-baseline gap-3">
        <h1 className="text-xl font-semibold">Run <span className="font-mono">{short(rid)}</span></h1>
        {run && <span className="rounded-full bg-zinc-100 px-2 py-0.5 text-xs dark:bg-zinc-800" data-run-status={run.status}>{run.status}</span>}
        {live && <span className="muted text-xs" aria-live="polite">following the stream…</span>}
        {active && <button className="btn" onClick={() => void cancel()}>Cancel</button>}
        <Link className="btn" to={ui("/threads/" + tid)}>Thread {short(tid)}</Link>
      </header>
      {run && <p className="muted text-sm">Created {when(run.created_at)}, updated {when(run.updated_at)}.</p>}
      <ErrorBox error={err} />
      <section aria-label="run progress" className="grid gap-4 lg:grid-cols-2">
        <div className="card overflow-x-auto">
          <h2 className="mb-2 font-semibold">Nodes</h2>
          {graph ? <GraphView graph={graph} status={progress.status} path={pathOf(progress, run?.status === "success")} /> : <p className="muted">Loading the graph…</p>}
          <div className="mt-2"><ProgressSteps progress={progress} /></div>
          <StepTimeline progress={progress} />
        </div>
        <div className="flex min-w-0 flex-col gap-3">
          {answer && <div className="card"><h2 className="mb-1 font-semibold">Streamed text</h2><p className="whitespace-pre-wrap text-sm">{answer}</p></div>}
          <div className="card">
            <h2 className="mb-1 font-semibold">Events <span className="muted text-sm">({events.length})</span></h2>
            <ol className="flex max-h-[60vh] flex-col gap-1 overflow-auto text-xs">
              {events.filter((e) => e.event !== "messages").map((e, i) => (
                <li key={i}><Json label={`${e.id ?? ""} ${e.event}`} value={e.data} /></li>
              ))}
            </ol>
          </div>
        </div>
      </section>
    </div>
  );
}
