// Json shows a value as indented JSON, collapsed behind a summary when it is long.
export function Json({ value, label, open }: { value: unknown; label?: string; open?: boolean }) {
  const text = JSON.stringify(value, null, 2) ?? "null";
  if (!label && text.length < 400) return <pre className="code">{text}</pre>;
  return (
    <details open={open} className="text-sm">
      <summary className="cursor-pointer select-none">{label ?? "JSON"} <span className="muted">({text.length} chars)</span></summary>
      <pre className="code mt-1 max-h-96 overflow-auto">{text}</pre>
    </details>
  );
}

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p role="alert" className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800 dark:border-red-800 dark:bg-red-950 dark:text-red-200">
      {error instanceof Error ? error.message : String(error)}
    </p>
  );
}
