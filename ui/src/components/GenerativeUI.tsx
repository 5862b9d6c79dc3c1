// Generative UI: components a node pushes while it runs, rendered from a registry by name.
//
// The wire shape is LangGraph's UI message (what its push_ui_message writes to the custom
// stream and, when the graph keeps them, to the state key "ui"):
//
//   {"type": "ui", "id": "<id>", "name": "<component>", "props": {...},
//    "metadata": {"message_id": "<the AI message it belongs to>", "merge": false}}
//   {"type": "remove-ui", "id": "<id>"}
//
// A trellis node sends one with graph.Emit(ctx, map[string]any{"type": "ui", ...}); the Studio
// streams with the custom mode and folds them with reduceUI (a second message with the same ID
// replaces the first, or with metadata.merge its props are merged into the first's). A message
// with metadata.message_id is drawn under that AI message, the others after the conversation.
// Unknown names are drawn as their props, labelled with the name.
import type { ComponentType } from "react";
import { Markdown } from "./Markdown";
import { SpecChart, type ChartSpec } from "./LineChart";

export type UIMessage = {
  type: "ui";
  id: string;
  name: string;
  props: Record<string, unknown>;
  metadata?: { message_id?: string; merge?: boolean; [k: string]: unknown };
};

type Removal = { type: "remove-ui"; id: string };

// isUIEvent says whether a custom event's data is a UI message or its removal.
export function isUIEvent(v: unknown): v is UIMessage | Removal {
  const o = v as { type?: unknown; id?: unknown; name?: unknown } | null;
  if (!o || typeof o !== "object" || typeof o.id !== "string" || !o.id) return false;
  return (o.type === "ui" && typeof o.name === "string") || o.type === "remove-ui";
}

// reduceUI folds one UI event into the list, as LangGraph's ui_message_reducer does.
export function reduceUI(list: UIMessage[], ev: UIMessage | Removal): UIMessage[] {
  const i = list.findIndex((m) => m.id === ev.id);
  if (ev.type === "remove-ui") return i < 0 ? list : list.filter((m) => m.id !== ev.id);
  const m: UIMessage = { ...ev, props: ev.props && typeof ev.props === "object" ? ev.props : {} };
  if (i < 0) return [...list, m];
  const next = [...list];
  next[i] = ev.metadata?.merge ? { ...m, props: { ...list[i].props, ...m.props } } : m;
  return next;
}

// uiFromState reads the UI messages a graph keeps in its state (the key "ui").
export function uiFromState(values: unknown): UIMessage[] {
  const ui = (values as { ui?: unknown } | null)?.ui;
  if (!Array.isArray(ui)) return [];
  return ui.filter(isUIEvent).reduce<UIMessage[]>((l, e) => reduceUI(l, e), []);
}

const str = (v: unknown) => (v == null ? "" : typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : JSON.stringify(v));

// The built-in components. Each gets the message's props.
function Card({ title, body, fields }: { title?: unknown; body?: unknown; fields?: unknown }) {
  const rows = fields && typeof fields === "object" ? Object.entries(fields as Record<string, unknown>) : [];
  return (
    <div className="flex flex-col gap-1">
      {title != null && <p className="font-medium">{str(title)}</p>}
      {typeof body === "string" && body && <Markdown text={body} />}
      {rows.length > 0 && (
        <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-0.5 text-sm">
          {rows.map(([k, v]) => <div key={k} className="contents"><dt className="muted">{k}</dt><dd data-ui-field={k}>{str(v)}</dd></div>)}
        </dl>
      )}
    </div>
  );
}

function Progress({ label, value, max }: { label?: unknown; value?: unknown; max?: unknown }) {
  const v = Number(value) || 0;
  const m = Number(max) || 100;
  return (
    <div className="flex flex-col gap-1 text-sm">
      <p>{str(label)}</p>
      <progress className="w-full" value={Math.min(v, m)} max={m} aria-label={str(label) || "progress"} />
      <p className="muted text-xs">{v} / {m}</p>
    </div>
  );
}

function Table({ columns, rows }: { columns?: unknown; rows?: unknown }) {
  const cols = Array.isArray(columns) ? columns.map(str) : [];
  const rs = Array.isArray(rows) ? rows : [];
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-sm">
        <thead><tr>{cols.map((c) => <th key={c} className="border-b px-2 py-1 text-left">{c}</th>)}</tr></thead>
        <tbody>
          {rs.map((r, i) => (
            <tr key={i}>{cols.map((c, j) => <td key={c} className="border-b px-2 py-1">{str(Array.isArray(r) ? r[j] : (r as Record<string, unknown>)?.[c])}</td>)}</tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Chart(props: Record<string, unknown>) {
  return <SpecChart spec={props as unknown as ChartSpec} />;
}

const registry = new Map<string, ComponentType<Record<string, unknown>>>([
  ["card", Card as ComponentType<Record<string, unknown>>],
  ["progress", Progress as ComponentType<Record<string, unknown>>],
  ["table", Table as ComponentType<Record<string, unknown>>],
  ["chart", Chart],
]);

// registerUI adds a component to the registry under name (an app's page registers its own
// before it renders UI messages).
export function registerUI(name: string, c: ComponentType<Record<string, unknown>>) {
  registry.set(name, c);
}

export function UIComponent({ message }: { message: UIMessage }) {
  const C = registry.get(message.name);
  return (
    <section aria-label={"component " + message.name} data-ui-component={message.name} data-ui-id={message.id}
      className="rounded-lg border border-emerald-200 bg-emerald-50/40 px-3 py-2 dark:border-emerald-900 dark:bg-emerald-950/30">
      {C ? <C {...message.props} /> : (
        <>
          <p className="muted font-mono text-xs">component · {message.name}</p>
          <pre className="code">{JSON.stringify(message.props, null, 2)}</pre>
        </>
      )}
    </section>
  );
}

export function UIComponents({ messages }: { messages: UIMessage[] }) {
  if (!messages.length) return null;
  return <div className="flex flex-col gap-2">{messages.map((m) => <UIComponent key={m.id} message={m} />)}</div>;
}
