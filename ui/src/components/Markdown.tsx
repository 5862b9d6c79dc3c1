// Markdown renders the Markdown that assistants answer with (paragraphs, headings, lists,
// tables, code, bold, italics, links) as React elements: no HTML is ever injected, so a
// message cannot run script. Anything it does not know stays as text.
import { Fragment, type ReactNode } from "react";

function inline(text: string, key = ""): ReactNode[] {
  const out: ReactNode[] = [];
  const re = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\[[^\]]+\]\([^)\s]+\))|(\*[^*\s][^*]*\*)|(_[^_\s][^_]*_)/g;
  let last = 0;
  let m: RegExpExecArray | null;
  let i = 0;
  while ((m = re.exec(text))) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const t = m[0];
    const k = key + "." + i++;
    if (m[1]) out.push(<code key={k} className="rounded bg-zinc-200 px-1 font-mono text-[0.85em] dark:bg-zinc-700">{t.slice(1, -1)}</code>);
    else if (m[2]) out.push(<strong key={k}>{inline(t.slice(2, -2), k)}</strong>);
    else if (m[3]) {
      const cut = t.indexOf("](");
      const label = t.slice(1, cut);
      const href = t.slice(cut + 2, -1);
      const safe = /^(https?:\/\/|\/|#)/i.test(href);
      out.push(safe ? <a key={k} href={href} target="_blank" rel="noreferrer noopener" className="underline">{inline(label, k)}</a> : label);
    } else out.push(<em key={k}>{inline(t.slice(1, -1), k)}</em>);
    last = m.index + t.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

const cells = (line: string) => line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
const isRule = (line: string) => /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(line);

export function Markdown({ text }: { text: string }) {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const blocks: ReactNode[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const k = "b" + i;
    if (!line.trim()) { i++; continue; }
    if (line.startsWith("```")) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i].startsWith("```")) body.push(lines[i++]);
      i++;
      blocks.push(<pre key={k} className="code overflow-x-auto">{body.join("\n")}</pre>);
      continue;
    }
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) {
      blocks.push(<p key={k} className={"font-semibold " + (h[1].length <= 2 ? "text-base" : "")}>{inline(h[2], k)}</p>);
      i++;
      continue;
    }
    if (/^\s*(-{3,}|\*{3,})\s*$/.test(line)) {
      blocks.push(<hr key={k} className="my-1 border-zinc-300 dark:border-zinc-700" />);
      i++;
      continue;
    }
    if (line.trim().startsWith("|") && i + 1 < lines.length && isRule(lines[i + 1])) {
      const head = cells(line);
      const rows: string[][] = [];
      i += 2;
      while (i < lines.length && lines[i].trim().startsWith("|")) rows.push(cells(lines[i++]));
      blocks.push(
        <div key={k} className="overflow-x-auto">
          <table className="my-1 text-xs">
            <thead><tr>{head.map((c, j) => <th key={j} className="border-b border-zinc-300 px-2 py-1 text-left dark:border-zinc-600">{inline(c, k + j)}</th>)}</tr></thead>
            <tbody>{rows.map((r, ri) => <tr key={ri}>{r.map((c, j) => <td key={j} className="border-b border-zinc-200 px-2 py-0.5 dark:border-zinc-700">{inline(c, k + ri + "." + j)}</td>)}</tr>)}</tbody>
          </table>
        </div>,
      );
      continue;
    }
    const item = /^\s*([-*+]|\d+[.)])\s+/;
    if (item.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const items: string[] = [];
      while (i < lines.length && item.test(lines[i])) items.push(lines[i++].replace(item, ""));
      const List = ordered ? "ol" : "ul";
      blocks.push(
        <List key={k} className={(ordered ? "list-decimal" : "list-disc") + " ml-5"}>
          {items.map((t, j) => <li key={j}>{inline(t, k + j)}</li>)}
        </List>,
      );
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && lines[i].trim() && !lines[i].startsWith("```") && !/^#{1,6}\s/.test(lines[i]) && !item.test(lines[i]) &&
      !(lines[i].trim().startsWith("|") && i + 1 < lines.length && isRule(lines[i + 1]))) para.push(lines[i++]);
    if (para.length === 0) para.push(lines[i++]); // never stall on a line no rule takes
    blocks.push(
      <p key={k} className="whitespace-pre-wrap break-words">
        {para.map((p, j) => <Fragment key={j}>{j > 0 && "\n"}{inline(p, k + j)}</Fragment>)}
      </p>,
    );
  }
  return <div className="flex flex-col gap-1.5">{blocks}</div>;
}
