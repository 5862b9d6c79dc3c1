// SchemaForm builds form fields from a JSON Schema object (GET /assistants/{id}/schemas: a
// graph's input_schema, an assistant's config_schema or context_schema): text, numbers,
// booleans, enums as choices, and JSON for objects and arrays. Values are kept as the schema's
// types; a field left empty is left out.
import { useState } from "react";

export type JSONSchema = {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JSONSchema>;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  items?: JSONSchema;
};

const typeOf = (s: JSONSchema): string => {
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== "null") : s.type;
  return t ?? (s.properties ? "object" : "string");
};

// human turns a field's key into words: "item_id" is "Item id", "maxResults" is "Max results".
export function human(key: string): string {
  const w = key.replace(/[_-]+/g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2").trim().toLowerCase();
  return w.charAt(0).toUpperCase() + w.slice(1);
}

// isChatSchema says whether a graph takes a conversation: its input has messages.
export function isChatSchema(s: JSONSchema | null | undefined): boolean {
  return !s || !s.properties || "messages" in s.properties;
}

// parseField reads a field's text as its schema's type; it throws saying what is wrong.
export function parseField(key: string, s: JSONSchema, raw: string): unknown {
  const t = typeOf(s);
  if (t === "integer" || t === "number") {
    const n = Number(raw);
    if (raw.trim() === "" || Number.isNaN(n)) throw new Error(`${human(key)}: "${raw}" is not a number`);
    if (t === "integer" && !Number.isInteger(n)) throw new Error(`${human(key)}: give a whole number, not ${raw}`);
    return n;
  }
  if (t === "object" || t === "array") {
    try {
      return JSON.parse(raw);
    } catch {
      throw new Error(`${human(key)}: write it as JSON (an ${t === "object" ? "object, {…}" : "array, […]"})`);
    }
  }
  return raw;
}

export function SchemaFields({ schema, values, onChange, prefix, skip = [] }: {
  schema: JSONSchema;
  values: Record<string, string | boolean>;
  onChange: (key: string, v: string | boolean) => void;
  prefix: string;
  skip?: string[];
}) {
  const props = Object.entries(schema.properties ?? {}).filter(([k]) => !skip.includes(k));
  return (
    <>
      {props.map(([k, s]) => {
        const id = prefix + "-" + k;
        const t = typeOf(s);
        const req = schema.required?.includes(k);
        const label = (s.title && s.title !== k ? s.title : human(k)) + (req ? " *" : "");
        if (t === "boolean")
          return (
            <label key={k} className="flex items-center gap-2 text-sm">
              <input type="checkbox" checked={values[k] === true} onChange={(e) => onChange(k, e.target.checked)} /> {label}
              {s.description && <span className="muted text-xs">{s.description}</span>}
            </label>
          );
        const v = typeof values[k] === "string" ? (values[k] as string) : "";
        return (
          <div key={k} className="flex flex-col gap-0.5">
            <label htmlFor={id} className="text-sm font-medium">{label}</label>
            {s.enum ? (
              <select id={id} className="input" value={v} onChange={(e) => onChange(k, e.target.value)}>
                <option value="">—</option>
                {s.enum.map((o) => <option key={String(o)} value={String(o)}>{String(o)}</option>)}
              </select>
            ) : t === "object" || t === "array" ? (
              <textarea id={id} className="input font-mono text-xs" rows={3} value={v} placeholder={t === "object" ? "{ }" : "[ ]"} onChange={(e) => onChange(k, e.target.value)} />
            ) : (
              <input id={id} className="input" type={t === "integer" || t === "number" ? "number" : "text"} value={v} onChange={(e) => onChange(k, e.target.value)} />
            )}
            {s.description && <p className="muted text-xs">{s.description}</p>}
          </div>
        );
      })}
    </>
  );
}

// collect turns the fields' values into an object of the schema's types (empty ones left out).
export function collect(schema: JSONSchema, values: Record<string, string | boolean>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, s] of Object.entries(schema.properties ?? {})) {
    const v = values[k];
    if (v === undefined || v === "") continue;
    out[k] = typeof v === "boolean" ? v : parseField(k, s, v);
  }
  for (const k of schema.required ?? []) if (out[k] === undefined && k in (schema.properties ?? {})) throw new Error(`${human(k)} is required`);
  return out;
}

// InputForm starts a run of a graph that is not a chat: one field per key of its input schema.
export function InputForm({ schema, busy, onRun }: { schema: JSONSchema; busy: boolean; onRun: (input: Record<string, unknown>) => void }) {
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [err, setErr] = useState("");
  return (
    <form aria-label="input" className="card flex flex-col gap-2" onSubmit={(e) => {
      e.preventDefault();
      try {
        setErr("");
        onRun(collect(schema, values));
      } catch (x) {
        setErr((x as Error).message);
      }
    }}>
      <h2 className="font-medium">Input</h2>
      <p className="muted -mt-1 text-xs">This graph is not a chat: it starts from these fields ({schema.title ?? "its input schema"}).</p>
      <SchemaFields schema={schema} values={values} prefix="input" onChange={(k, v) => setValues((o) => ({ ...o, [k]: v }))} />
      {err && <p role="alert" className="text-sm text-red-700 dark:text-red-400">{err}</p>}
      <div><button className="btn-primary" disabled={busy}>Run</button></div>
    </form>
  );
}

export type RunConfig = { configurable: Record<string, unknown>; context: Record<string, unknown> };

// RunConfigPanel is the run configuration: the assistant's config_schema fields (sent as
// config.configurable) and context_schema fields (sent as context), and, for a graph that
// declares neither, free values by name. Values the assistant already sets show as the
// fields' placeholders; a value given here wins for the runs started from this page.
export function RunConfigPanel({ configSchema, contextSchema, defaults, onChange }: {
  configSchema?: JSONSchema | null;
  contextSchema?: JSONSchema | null;
  defaults?: Record<string, unknown>;
  onChange: (c: RunConfig | Error) => void;
}) {
  const [cfg, setCfg] = useState<Record<string, string | boolean>>({});
  const [ctx, setCtx] = useState<Record<string, string | boolean>>({});
  const [free, setFree] = useState<{ name: string; value: string }[]>([]);
  const update = (c: typeof cfg, x: typeof ctx, f: typeof free) => {
    try {
      const configurable = configSchema?.properties ? collect(configSchema, c) : {};
      for (const { name, value } of f) {
        if (!name.trim() || value === "") continue;
        let v: unknown = value;
        try { v = JSON.parse(value); } catch { /* text */ }
        configurable[name.trim()] = v;
      }
      onChange({ configurable, context: contextSchema?.properties ? collect(contextSchema, x) : {} });
    } catch (e) {
      onChange(e as Error);
    }
  };
  const known = Object.entries(defaults ?? {}).filter(([k]) => !["thread_id", "checkpoint_id", "checkpoint_ns"].includes(k));
  return (
    <fieldset className="card flex flex-col gap-2" aria-label="run configuration">
      <legend className="font-medium">Run configuration</legend>
      {configSchema?.properties && (
        <SchemaFields schema={configSchema} values={cfg} prefix="config" onChange={(k, v) => { const n = { ...cfg, [k]: v }; setCfg(n); update(n, ctx, free); }} />
      )}
      {contextSchema?.properties && (
        <>
          <p className="muted text-xs">Context</p>
          <SchemaFields schema={contextSchema} values={ctx} prefix="context" onChange={(k, v) => { const n = { ...ctx, [k]: v }; setCtx(n); update(cfg, n, free); }} />
        </>
      )}
      {known.length > 0 && (
        <dl className="text-xs">
          {known.map(([k, v]) => <div key={k} className="flex gap-1"><dt className="font-medium">{human(k)}:</dt><dd className="muted truncate font-mono">{JSON.stringify(v)}</dd></div>)}
        </dl>
      )}
      {free.map((f, i) => (
        <div key={i} className="grid grid-cols-2 gap-1">
          <label className="sr-only" htmlFor={"cfg-name-" + i}>Name</label>
          <input id={"cfg-name-" + i} className="input font-mono text-xs" placeholder="name" value={f.name}
            onChange={(e) => { const n = free.map((x, j) => (j === i ? { ...x, name: e.target.value } : x)); setFree(n); update(cfg, ctx, n); }} />
          <label className="sr-only" htmlFor={"cfg-value-" + i}>Value</label>
          <input id={"cfg-value-" + i} className="input text-xs" placeholder="value (text or JSON)" value={f.value}
            onChange={(e) => { const n = free.map((x, j) => (j === i ? { ...x, value: e.target.value } : x)); setFree(n); update(cfg, ctx, n); }} />
        </div>
      ))}
      <div><button type="button" className="btn !py-0.5 text-xs" onClick={() => setFree((f) => [...f, { name: "", value: "" }])}>Add a configurable value</button></div>
      <p className="muted text-xs">Sent with the next runs as config.configurable{contextSchema?.properties ? " and context" : ""}.</p>
    </fieldset>
  );
}
