// ListForge's client: the app's REST API under /apps/listforge/api/v1, its WebSockets
// (/ws/chat, /ws/research: {event, data} frames both ways), and the shapes they carry.
import { useEffect, useState } from "react";
import { api, currentAuth } from "../../../api";

export const base = "/apps/listforge";
export const lf = <T = unknown>(method: string, path: string, body?: unknown) => api<T>(method, base + "/api/v1" + path, body);

export type Media = { type: string; url: string; caption?: string };
export type Item = {
  id: string; title: string; description: string; condition: string; attributes: Record<string, unknown>; media: Media[];
  defaultPrice: number | null; currency: string; lifecycleStatus: string; aiReviewState: string; createdAt: string; updatedAt: string;
};
export type Page<T> = { items: T[]; total: number; page: number; limit: number };
export type Audit = { id: string; field: string; oldValue: unknown; newValue: unknown; reason: string; userId: string; createdAt: string };
export type Step = { node: string; startedAt: string; completedAt?: string; status: string; error?: string };
export type Job = {
  id: string; itemId: string; type: string; priority: string; status: "pending" | "running" | "success" | "error"; currentNode?: string;
  stepCount: number; stepHistory: Step[] | null; attempts: number; error?: string; message?: string; createdAt: string; startedAt?: string; completedAt?: string;
};
export type PriceBand = { label: "floor" | "target" | "ceiling"; amount: number; currency: string; confidence: number; reasoning: string };
export type DemandSignal = { metric: string; value: number; unit: string; period?: string; source: string };
export type MissingInfo = { field: string; importance: "required" | "recommended" | "optional"; reason: string; suggestedPrompt?: string };
export type ProductID = { confidence: number; brand?: string; model?: string; mpn?: string; upc?: string; category?: string[]; source?: string };
export type Research = {
  id: string; itemId: string; researchRunId?: string; isCurrent: boolean; createdAt: string; schemaVersion: string;
  data: { productId?: ProductID; priceBands: PriceBand[] | null; demandSignals: DemandSignal[] | null; missingInfo: MissingInfo[] | null; competitorCount?: number;
    recommendedMarketplaces: string[] | null; overallConfidence: number; notes?: string[]; generatedAt: string };
};
export type Evidence = {
  id: string; type: string; source: string; url?: string; title: string; price?: number; currency?: string; soldDate?: string; listedDate?: string;
  condition?: string; relevanceScore: number;
};
export type Bundle = { id: string; count: number; createdAt: string; records?: Evidence[] } | null;
export type Session = { id: string; createdAt: string; updatedAt: string; lastMessageAt?: string };
export type Action = { type: string; payload: Record<string, unknown>; applied: boolean };
export type ChatMessage = { id: string; sessionId: string; role: string; content: string; actions?: Action[]; toolCalls?: { tool: string; args: unknown; result?: unknown }[]; createdAt: string };
export type ActionResult = { success: boolean; messageId: string; actionIndex: number; field?: string; item?: Item; jobId?: string; error?: string };

// The research steps the progress shows, with the specification's labels (refine_search,
// when the graph refines, is not one of them).
export const STEPS: { id: string; label: string }[] = [
  { id: "load_context", label: "Loading item" },
  { id: "analyze_media", label: "Analyzing photos" },
  { id: "identify_product", label: "Identifying product" },
  { id: "search_comps", label: "Finding comparables" },
  { id: "analyze_comps", label: "Analyzing prices" },
  { id: "calculate_price", label: "Calculating recommendations" },
  { id: "assess_missing", label: "Checking for gaps" },
  { id: "persist_results", label: "Saving results" },
];

export function money(v: number | null | undefined, currency = "USD") {
  if (v === null || v === undefined || Number.isNaN(v)) return "—";
  try {
    return new Intl.NumberFormat("en-US", { style: "currency", currency: currency || "USD" }).format(v);
  } catch {
    return "$" + v.toFixed(2);
  }
}
export const pct = (v: number) => Math.round(v * 100) + "%";
export const when = (s?: string) => (s ? new Date(s).toLocaleString() : "—");

export function ago(s: string) {
  const d = (Date.now() - new Date(s).getTime()) / 1000;
  if (d < 60) return "just now";
  if (d < 3600) return Math.floor(d / 60) + " min ago";
  if (d < 86400) return Math.floor(d / 3600) + " h ago";
  return Math.floor(d / 86400) + " d ago";
}

type Handler = (data: any) => void; // eslint-disable-line @typescript-eslint/no-explicit-any

// Socket is one of the app's WebSockets: frames sent before it opens are queued; handlers are
// called by event name. Browsers cannot set headers on a WebSocket, so the credential goes in
// ?token= (an API key is accepted there as a bearer credential).
export class Socket {
  private ws: WebSocket;
  private queue: string[] = [];
  private handlers = new Map<string, Set<Handler>>();
  state: "connecting" | "open" | "closed" = "connecting";

  constructor(path: string) {
    const a = currentAuth();
    const q = a.kind === "none" ? "" : "?token=" + encodeURIComponent(a.value);
    this.ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + base + path + q);
    this.ws.onopen = () => {
      this.state = "open";
      for (const f of this.queue) this.ws.send(f);
      this.queue = [];
      this.emit("_state", "open");
    };
    this.ws.onclose = () => {
      this.state = "closed";
      this.emit("_state", "closed");
    };
    this.ws.onmessage = (m) => {
      let f: { event?: string; data?: unknown };
      try {
        f = JSON.parse(String(m.data));
      } catch {
        return;
      }
      if (f.event) this.emit(f.event, f.data ?? {});
    };
  }
  private emit(event: string, data: unknown) {
    for (const h of this.handlers.get(event) ?? []) h(data);
  }
  on(event: string, h: Handler): () => void {
    if (!this.handlers.has(event)) this.handlers.set(event, new Set());
    this.handlers.get(event)!.add(h);
    return () => this.handlers.get(event)?.delete(h);
  }
  send(event: string, data: unknown) {
    const f = JSON.stringify({ event, data });
    if (this.state === "open") this.ws.send(f);
    else if (this.state === "connecting") this.queue.push(f);
  }
  close() {
    this.handlers.clear();
    this.ws.onclose = null;
    this.ws.onmessage = null;
    this.state = "closed";
    // Closing a socket still connecting makes the browser log an error: close it once open.
    if (this.ws.readyState === WebSocket.CONNECTING) this.ws.onopen = () => this.ws.close();
    else this.ws.close();
  }
}

// useSocket opens a socket for the component's life (again when key changes, or on reconnect)
// and reports whether it is open. A null key opens nothing.
export function useSocket(path: string, key: string | null): [Socket | null, "connecting" | "open" | "closed", () => void] {
  const [sock, setSock] = useState<Socket | null>(null);
  const [state, setState] = useState<"connecting" | "open" | "closed">("connecting");
  const [tries, setTries] = useState(0);
  useEffect(() => {
    if (key === null) return;
    const s = new Socket(path);
    setState("connecting");
    s.on("_state", setState);
    setSock(s);
    return () => {
      s.close();
      setSock(null);
    };
  }, [path, key, tries]);
  return [sock, state, () => setTries((n) => n + 1)];
}
