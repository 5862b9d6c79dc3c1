// Messages renders a conversation in LangChain's message shape: human and AI turns, an AI
// turn's tool calls collapsed with their arguments and, inside, the tool's result. System
// messages (a system prompt, an app's context block) are left out unless showSystem is set,
// and then shown marked as such. The offline model's marker becomes a small badge and the
// external-data label of tool results is never shown (a badge says the result was external).
import type { ReactNode } from "react";
import type { Message } from "../api";
import { textOf } from "../api";
import { Badge, cleanText } from "./clean";
import { Markdown } from "./Markdown";

// isSystem is a message the model reads but the user did not write or get: system and
// developer turns.
export const isSystem = (m: Message) => m.type === "system" || m.type === "developer" || (m as { role?: string }).role === "system";

// after, when given, is drawn under each AI message (the generative UI components that belong
// to it).
export function Messages({ messages, showSystem = false, after }: { messages: Message[]; showSystem?: boolean; after?: (m: Message) => ReactNode }) {
  const results = new Map<string, Message>();
  for (const m of messages) if (m.type === "tool" && m.tool_call_id) results.set(m.tool_call_id, m);
  const shown = new Set<string>();
  for (const m of messages) for (const c of m.tool_calls ?? []) if (c.id && results.has(c.id)) shown.add(c.id);
  return (
    <ol className="flex flex-col gap-3" aria-label="messages">
      {messages.map((m, i) => {
        if (m.type === "tool" && m.tool_call_id && shown.has(m.tool_call_id)) return null;
        const system = isSystem(m);
        if (system && !showSystem) return null;
        const human = m.type === "human";
        const { text, offline, external } = cleanText(textOf(m.content));
        if (system)
          return (
            <li key={(m.id ?? "") + i} data-role="system" className="flex justify-center">
              <details className="w-full rounded-lg border border-dashed border-violet-300 bg-violet-50/60 px-3 py-2 text-xs dark:border-violet-800 dark:bg-violet-950/40">
                <summary className="cursor-pointer select-none"><Badge kind="violet">system</Badge> <span className="muted">{text.split("\n")[0].slice(0, 90)}</span></summary>
                <p className="mt-1 whitespace-pre-wrap break-words font-mono">{text}</p>
              </details>
            </li>
          );
        return (
          <li key={(m.id ?? "") + i} data-role={m.type} className={"flex " + (human ? "justify-end" : "justify-start")}>
            <div className={"max-w-[90%] rounded-lg px-3 py-2 text-sm sm:max-w-[75%] " +
              (human ? "bg-emerald-600 text-white" : m.type === "tool" ? "bg-zinc-100 dark:bg-zinc-800" : "bg-zinc-100 dark:bg-zinc-800")}>
              {m.type === "tool" && <p className="muted flex items-center gap-1 text-xs">tool result {m.name ? "· " + m.name : ""}{external && <Badge kind="sky" title="the tool's result came from outside: the model reads it as data">external data</Badge>}</p>}
              {text && (m.type === "ai" ? <Markdown text={text} /> : <p className="whitespace-pre-wrap break-words">{text}</p>)}
              {offline && <p className="mt-1"><Badge kind="amber" title="written by trellis's offline model, not an LLM">offline model</Badge></p>}
              {(m.tool_calls ?? []).map((c, j) => {
                const r = c.id ? results.get(c.id) : undefined;
                const rc = r ? cleanText(textOf(r.content)) : null;
                return (
                  <details key={c.id ?? j} className="mt-2 rounded border border-zinc-300 bg-white/60 px-2 py-1 dark:border-zinc-700 dark:bg-zinc-900/60" data-tool-call={c.name}>
                    <summary className="cursor-pointer select-none font-mono text-xs">
                      tool call: {c.name} {r ? (r.status === "error" ? "· failed" : "· done") : "· waiting"}
                    </summary>
                    <p className="muted mt-1 text-xs">arguments</p>
                    <pre className="code">{JSON.stringify(c.args, null, 2)}</pre>
                    {r && (
                      <>
                        <p className="muted mt-1 flex items-center gap-1 text-xs">result{rc?.external && <Badge kind="sky" title="the tool's result came from outside: the model reads it as data">external data</Badge>}</p>
                        <pre className="code">{rc?.text}</pre>
                      </>
                    )}
                  </details>
                );
              })}
              {m.type === "ai" && after?.(m)}
            </div>
          </li>
        );
      })}
    </ol>
  );
}

// mergeChunk folds one AIMessageChunk of the messages-tuple stream into the list.
export function mergeChunk(list: Message[], chunk: Message): Message[] {
  const id = chunk.id ?? "";
  const i = id ? list.findIndex((m) => m.id === id) : -1;
  if (i < 0) return [...list, { ...chunk, type: chunk.type === "AIMessageChunk" ? "ai" : chunk.type, content: textOf(chunk.content) }];
  const prev = list[i];
  if (prev.type !== "ai" || !String(chunk.type).endsWith("Chunk")) {
    const next = [...list];
    next[i] = { ...chunk, type: chunk.type === "AIMessageChunk" ? "ai" : chunk.type };
    return next;
  }
  const next = [...list];
  next[i] = { ...prev, content: textOf(prev.content) + textOf(chunk.content), tool_calls: chunk.tool_calls?.length ? chunk.tool_calls : prev.tool_calls };
  return next;
}

// upsert puts whole messages (from updates or values) in place of their streamed versions.
export function upsert(list: Message[], msgs: Message[]): Message[] {
  const next = [...list];
  for (const m of msgs) {
    const i = m.id ? next.findIndex((x) => x.id === m.id) : -1;
    if (i >= 0) next[i] = m;
    else next.push(m);
  }
  return next;
}
