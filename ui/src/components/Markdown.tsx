// Markdown renders the Markdown that assistants answer with through react-markdown and
// remark-gfm (GFM tables, strikethrough, task lists, autolinks). Raw HTML in the text is never
// rendered as HTML: react-markdown shows it as text, so a message cannot run script or inject
// markup. Links open in a new tab, and only http(s), relative and #anchors are kept as links.
import ReactMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";

const components: Components = {
  h1: ({ children }) => <p className="text-base font-semibold">{children}</p>,
  h2: ({ children }) => <p className="text-base font-semibold">{children}</p>,
  h3: ({ children }) => <p className="font-semibold">{children}</p>,
  h4: ({ children }) => <p className="font-semibold">{children}</p>,
  h5: ({ children }) => <p className="font-semibold">{children}</p>,
  h6: ({ children }) => <p className="font-semibold">{children}</p>,
  p: ({ children }) => <p className="whitespace-pre-wrap break-words">{children}</p>,
  ul: ({ children, className }) => <ul className={"ml-5 " + (className?.includes("contains-task-list") ? "list-none" : "list-disc")}>{children}</ul>,
  ol: ({ children, start }) => <ol start={start} className="ml-5 list-decimal">{children}</ol>,
  hr: () => <hr className="my-1 border-zinc-300 dark:border-zinc-700" />,
  pre: ({ children }) => <pre className="code overflow-x-auto">{children}</pre>,
  code: ({ children, className }) =>
    className?.startsWith("language-") ? <code className={className}>{children}</code>
      : <code className="rounded bg-zinc-200 px-1 font-mono text-[0.85em] dark:bg-zinc-700">{children}</code>,
  table: ({ children }) => <div className="overflow-x-auto"><table className="my-1 text-xs">{children}</table></div>,
  th: ({ children, style }) => <th style={style} className="border-b border-zinc-300 px-2 py-1 text-left dark:border-zinc-600">{children}</th>,
  td: ({ children, style }) => <td style={style} className="border-b border-zinc-200 px-2 py-0.5 dark:border-zinc-700">{children}</td>,
  a: ({ children, href }) => <a href={href} target="_blank" rel="noreferrer noopener" className="underline">{children}</a>,
  blockquote: ({ children }) => <blockquote className="border-l-2 border-zinc-300 pl-2 dark:border-zinc-600">{children}</blockquote>,
  img: ({ alt }) => <span className="muted">[image{alt ? ": " + alt : ""}]</span>,
};

// safeUrl keeps links to http(s), to this server's paths and to anchors; any other scheme
// (javascript:, data:) leaves the link's text alone.
function safeUrl(url: string): string {
  return /^(https?:\/\/|\/|#)/i.test(url) ? url : "";
}

export function Markdown({ text }: { text: string }) {
  return (
    <div className="flex flex-col gap-1.5" data-markdown="">
      <ReactMarkdown remarkPlugins={[remarkGfm]} components={components} urlTransform={safeUrl}>{text}</ReactMarkdown>
    </div>
  );
}
