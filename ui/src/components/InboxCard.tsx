// InboxCard shows an interrupt as an Agent Inbox card: a HumanInterrupt (action_request,
// config, description) gets the buttons its config allows (accept, edit, respond, ignore) and
// answers with a HumanResponse; any other interrupt value is shown as JSON with a free answer.
import { useState } from "react";
import type { Interrupt } from "../api";
import { Json } from "./Json";
import { Markdown } from "./Markdown";

type HumanInterrupt = {
  action_request: { action: string; args: Record<string, unknown> };
  config: { allow_ignore?: boolean; allow_respond?: boolean; allow_edit?: boolean; allow_accept?: boolean };
  description?: string;
};

function asHuman(v: unknown): { req: HumanInterrupt; list: boolean } | null {
  const one = Array.isArray(v) && v.length === 1 ? v[0] : v;
  if (one && typeof one === "object" && "action_request" in one && "config" in one)
    return { req: one as HumanInterrupt, list: Array.isArray(v) };
  return null;
}

export function InboxCard({ interrupt, onResume, busy }: {
  interrupt: Interrupt;
  onResume: (value: unknown) => void;
  busy?: boolean;
}) {
  const human = asHuman(interrupt.value);
  const [mode, setMode] = useState<"" | "edit" | "respond">("");
  const [text, setText] = useState("");
  const [err, setErr] = useState("");
  const wrap = (r: unknown) => (human?.list ? [r] : r);
  if (!human) {
    return (
      <section aria-label="interrupt" className="card border-sky-300 dark:border-sky-800">
        <h3 className="mb-2 font-medium">The run is waiting for you</h3>
        <Json value={interrupt.value} />
        <label className="mt-2 block text-sm">
          Answer (JSON, or plain text)
          <textarea className="input mt-1 font-mono" rows={3} value={text} onChange={(e) => setText(e.target.value)} />
        </label>
        <div className="mt-2 flex gap-2">
          <button className="btn-primary" disabled={busy} onClick={() => {
            let v: unknown = text;
            try { v = JSON.parse(text); } catch { /* plain text */ }
            onResume(v);
          }}>Resume</button>
        </div>
      </section>
    );
  }
  const { req } = human;
  const c = req.config ?? {};
  return (
    <section aria-label="interrupt" className="card border-sky-300 dark:border-sky-800">
      <p className="muted text-xs uppercase tracking-wide">Agent Inbox</p>
      <h3 className="font-medium">{req.action_request?.action}</h3>
      {req.description && <div className="mt-1 text-sm" data-description><Markdown text={req.description} /></div>}
      <div className="mt-2"><Json value={req.action_request?.args} /></div>
      {mode === "edit" && (
        <label className="mt-2 block text-sm">
          Arguments (JSON)
          <textarea aria-label="edited arguments" className="input mt-1 font-mono" rows={6} value={text} onChange={(e) => setText(e.target.value)} />
        </label>
      )}
      {mode === "respond" && (
        <label className="mt-2 block text-sm">
          Your response
          <textarea aria-label="response" className="input mt-1" rows={3} value={text} onChange={(e) => setText(e.target.value)} />
        </label>
      )}
      {err && <p role="alert" className="mt-1 text-sm text-red-600">{err}</p>}
      <div className="mt-3 flex flex-wrap gap-2">
        {mode === "" && c.allow_accept && <button className="btn-primary" disabled={busy} onClick={() => onResume(wrap({ type: "accept", args: null }))}>Accept</button>}
        {mode === "" && c.allow_edit && <button className="btn" disabled={busy} onClick={() => { setText(JSON.stringify(req.action_request.args, null, 2)); setMode("edit"); }}>Edit</button>}
        {mode === "" && c.allow_respond && <button className="btn" disabled={busy} onClick={() => { setText(""); setMode("respond"); }}>Respond</button>}
        {mode === "" && c.allow_ignore && <button className="btn" disabled={busy} onClick={() => onResume(wrap({ type: "ignore", args: null }))}>Ignore</button>}
        {mode === "edit" && <button className="btn-primary" disabled={busy} onClick={() => {
          try {
            const args = JSON.parse(text);
            onResume(wrap({ type: "edit", args: { action: req.action_request.action, args } }));
          } catch (e) { setErr("The arguments are not JSON: " + (e as Error).message); }
        }}>Send edit</button>}
        {mode === "respond" && <button className="btn-primary" disabled={busy || !text.trim()} onClick={() => onResume(wrap({ type: "response", args: text }))}>Send response</button>}
        {mode !== "" && <button className="btn" onClick={() => { setMode(""); setErr(""); }}>Back</button>}
      </div>
    </section>
  );
}
