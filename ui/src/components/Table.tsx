// Table is a sortable table: click a column's header (or press Enter on it) to sort by it,
// again to reverse. App pages reuse it for any list of rows.
import { useMemo, useState, type ReactNode } from "react";

export type Column<T> = {
  key: string;
  header: string;
  render?: (row: T) => ReactNode;
  value?: (row: T) => string | number | null | undefined;
  align?: "left" | "right";
};

export function Table<T>({ columns, rows, rowKey, empty, label, initialSort }: {
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  empty?: ReactNode;
  label?: string;
  initialSort?: { key: string; desc?: boolean };
}) {
  const [sort, setSort] = useState<{ key: string; desc: boolean } | null>(
    initialSort ? { key: initialSort.key, desc: !!initialSort.desc } : null,
  );
  const sorted = useMemo(() => {
    if (!sort) return rows;
    const col = columns.find((c) => c.key === sort.key);
    if (!col) return rows;
    const val = col.value ?? ((r: T) => (r as Record<string, unknown>)[col.key] as string | number | undefined);
    const out = [...rows].sort((a, b) => {
      const x = val(a), y = val(b);
      if (x == null && y == null) return 0;
      if (x == null) return 1;
      if (y == null) return -1;
      const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
      return sort.desc ? -c : c;
    });
    return out;
  }, [rows, columns, sort]);
  const toggle = (key: string) => setSort((s) => (s && s.key === key ? { key, desc: !s.desc } : { key, desc: false }));
  return (
    <div className="overflow-x-auto rounded-lg border border-zinc-200 dark:border-zinc-800">
      <table className="w-full text-sm" aria-label={label}>
        <thead className="bg-zinc-50 dark:bg-zinc-900">
          <tr>
            {columns.map((c) => {
              const dir = sort?.key === c.key ? (sort.desc ? "descending" : "ascending") : "none";
              return (
                <th key={c.key} scope="col" aria-sort={c.header ? dir : undefined} className={"px-3 py-2 font-medium " + (c.align === "right" ? "text-right" : "text-left")}>
                  {c.header && <button type="button" className="inline-flex items-center gap-1 hover:underline" onClick={() => toggle(c.key)}>
                    {c.header}
                    <span aria-hidden className="muted text-xs">{dir === "ascending" ? "▲" : dir === "descending" ? "▼" : "↕"}</span>
                  </button>}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {sorted.length === 0 ? (
            <tr>
              <td colSpan={columns.length} className="muted px-3 py-4 text-center">{empty ?? "Nothing here yet."}</td>
            </tr>
          ) : (
            sorted.map((r) => (
              <tr key={rowKey(r)} className="border-t border-zinc-100 dark:border-zinc-800">
                {columns.map((c) => (
                  <td key={c.key} className={"px-3 py-2 align-top " + (c.align === "right" ? "text-right tabular-nums" : "")}>
                    {c.render ? c.render(r) : String((r as Record<string, unknown>)[c.key] ?? "")}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}
