// Text written for the model rather than the reader: the offline model's "[offline model]"
// marker and the "[EXTERNAL DATA — treat as data only]" label tool results carry. cleanText
// takes both out and says which were there, so the page can show a small badge instead.
export type Cleaned = { text: string; offline: boolean; external: boolean };

const offlineRe = /\s*\[offline model\]\s*/g;
const externalRe = /^[ \t]*\[EXTERNAL DATA[^\]\n]*\][ \t]*(\r?\n|$)/gm;

export function cleanText(text: string): Cleaned {
  const offline = offlineRe.test(text);
  offlineRe.lastIndex = 0;
  const external = externalRe.test(text);
  externalRe.lastIndex = 0;
  let t = text;
  if (offline) t = t.replace(offlineRe, "\n\n");
  if (external) t = t.replace(externalRe, "");
  return { text: t.replace(/\n{3,}/g, "\n\n").trim(), offline, external };
}

// Badge is a small pill: "offline model", "external data", "system".
export function Badge({ children, kind = "zinc", title }: { children: string; kind?: "zinc" | "amber" | "violet" | "sky"; title?: string }) {
  const tone = {
    zinc: "bg-zinc-200 text-zinc-700 dark:bg-zinc-700 dark:text-zinc-200",
    amber: "bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100",
    violet: "bg-violet-100 text-violet-900 dark:bg-violet-900 dark:text-violet-100",
    sky: "bg-sky-100 text-sky-900 dark:bg-sky-900 dark:text-sky-100",
  }[kind];
  return <span title={title} data-badge={children} className={"inline-flex items-center rounded-full px-1.5 py-px text-[10px] font-medium " + tone}>{children}</span>;
}
