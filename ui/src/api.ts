// The Agent Protocol client the pages use: plain fetch on the same origin, the credential the
// user signed in with, and a reader of Server-Sent Events for streamed runs.

export type Auth = { kind: "none" } | { kind: "key"; value: string } | { kind: "token"; value: string };

const authKey = "trellis.auth";

export function loadAuth(): Auth {
  try {
    const raw = sessionStorage.getItem(authKey) ?? localStorage.getItem(authKey);
    if (raw) return JSON.parse(raw) as Auth;
  } catch {
    // storage unavailable or corrupt: no credential
  }
  return { kind: "none" };
}

let auth: Auth = loadAuth();

export function setAuth(a: Auth, remember: boolean) {
  auth = a;
  sessionStorage.removeItem(authKey);
  localStorage.removeItem(authKey);
  if (a.kind !== "none") (remember ? localStorage : sessionStorage).setItem(authKey, JSON.stringify(a));
}

export function currentAuth(): Auth {
  return auth;
}

function headers(json: boolean): Record<string, string> {
  const h: Record<string, string> = {};
  if (json) h["content-type"] = "application/json";
  if (auth.kind === "key") h["x-api-key"] = auth.value;
  if (auth.kind === "token") h["authorization"] = "Bearer " + auth.value;
  return h;
}

export class APIError extends Error {
  status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

async function failure(res: Response): Promise<APIError> {
  let msg = res.status + " " + res.statusText;
  try {
    const body = await res.json();
    const m = body?.message ?? body?.detail ?? body?.error;
    if (m) msg = typeof m === "string" ? m : JSON.stringify(m);
    if (body?.hint) msg += " (" + body.hint + ")";
  } catch {
    // not JSON
  }
  return new APIError(res.status, msg);
}

export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    headers: headers(body !== undefined),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw await failure(res);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export type SSEEvent = { event: string; data: unknown; id?: string };

// sse runs a request whose answer is an event stream and yields each event as it arrives.
export async function* sse(method: string, path: string, body: unknown, signal?: AbortSignal): AsyncGenerator<SSEEvent> {
  const res = await fetch(path, {
    method,
    headers: { ...headers(body !== undefined), accept: "text/event-stream" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  if (!res.ok || !res.body) throw await failure(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let cut: number;
    while ((cut = buf.search(/\r?\n\r?\n/)) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut).replace(/^\r?\n\r?\n/, "");
      const ev: SSEEvent = { event: "message", data: null };
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith(":")) continue;
        const i = line.indexOf(":");
        const field = i < 0 ? line : line.slice(0, i);
        const v = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
        if (field === "event") ev.event = v;
        else if (field === "data") data.push(v);
        else if (field === "id") ev.id = v;
      }
      if (data.length) {
        const raw = data.join("\n");
        try {
          ev.data = JSON.parse(raw);
        } catch {
          ev.data = raw;
        }
      }
      yield ev;
    }
  }
}

// Shapes of the Agent Protocol (only the fields the UI reads).

export type AppInfo = { name: string; description: string; graphs: string[] | null; has_routes: boolean };
export type Assistant = {
  assistant_id: string;
  graph_id: string;
  name: string;
  description?: string | null;
  metadata?: Record<string, unknown>;
  version?: number;
  created_at?: string;
  updated_at?: string;
};
export type ToolCall = { id?: string; name: string; args: unknown; type?: string };
export type Message = {
  type: string;
  content: unknown;
  id?: string | null;
  name?: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  status?: string;
  tool_call_chunks?: { id?: string | null; name?: string | null; args?: string | null; index?: number }[];
};
export type Interrupt = { value: unknown; id?: string; interrupt_id?: string };
export type ThreadState = {
  values: Record<string, unknown> | unknown;
  next: string[];
  tasks?: { id: string; name: string; interrupts?: Interrupt[]; error?: unknown }[];
  interrupts?: Interrupt[];
  metadata?: Record<string, unknown> & { step?: number; source?: string; writes?: Record<string, unknown> | null };
  created_at?: string;
  checkpoint: { checkpoint_id: string; checkpoint_ns?: string; thread_id?: string };
  parent_checkpoint?: { checkpoint_id: string } | null;
};
export type Thread = {
  thread_id: string;
  status: string;
  metadata?: Record<string, unknown>;
  values?: unknown;
  created_at?: string;
  updated_at?: string;
  interrupts?: Record<string, Interrupt[]>;
};
export type Run = {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  status: string;
  created_at: string;
  updated_at: string;
  metadata?: Record<string, unknown>;
  kwargs?: Record<string, unknown>;
};
export type GraphJSON = {
  nodes: { id: string; type?: string; data?: unknown }[];
  edges: { source: string; target: string; conditional?: boolean; data?: unknown }[];
};
export type StoreItem = {
  namespace: string[];
  key: string;
  value: unknown;
  created_at?: string;
  updated_at?: string;
  score?: number | null;
};

// textOf gives a message's content as text (content blocks of type text joined).
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((b) => (typeof b === "string" ? b : b && typeof b === "object" && "text" in b ? String((b as { text: unknown }).text) : ""))
      .join("");
  return content == null ? "" : JSON.stringify(content);
}

// interruptsOf lists the interrupts a thread's state waits on (top-level, or per task).
export function interruptsOf(s: ThreadState | null | undefined): Interrupt[] {
  if (!s) return [];
  if (s.interrupts && s.interrupts.length) return s.interrupts;
  return (s.tasks ?? []).flatMap((t) => t.interrupts ?? []);
}

// short gives the end of an ID: run and checkpoint IDs begin with the time, so their ends differ.
export function short(id: string | undefined | null, n = 8): string {
  return id ? (id.length > n ? id.slice(-n) : id) : "";
}

// pageLocale is the page's language (<html lang>), else the browser's.
export function pageLocale(): string | undefined {
  return document.documentElement.lang || undefined;
}

// when formats a time for people, in locale (a page's own, such as pt-PT on Rehabify) or the
// page's language.
export function when(t: string | undefined, locale?: string): string {
  if (!t) return "";
  const d = new Date(t);
  return isNaN(d.getTime()) ? t : d.toLocaleString(locale ?? pageLocale(), { dateStyle: "short", timeStyle: "short" });
}
