// LineChart draws one or more series as lines in SVG, with labelled axes: for series such as
// hourly prices. x is a number or a time (a Date or an ISO string); points are drawn in order.
const palette = ["#059669", "#2563eb", "#d97706", "#db2777", "#7c3aed", "#0891b2"];

export type Series = { name: string; points: { x: number | string | Date; y: number }[] };

function xNum(x: number | string | Date): number {
  if (typeof x === "number") return x;
  return (x instanceof Date ? x : new Date(x)).getTime();
}

function ticks(lo: number, hi: number, n: number): number[] {
  if (hi === lo) return [lo];
  const step = Math.pow(10, Math.floor(Math.log10((hi - lo) / n)));
  const best = [1, 2, 5, 10].map((m) => m * step).find((s) => (hi - lo) / s <= n) ?? step * 10;
  const out: number[] = [];
  for (let v = Math.ceil(lo / best) * best; v <= hi + 1e-9; v += best) out.push(Number(v.toFixed(10)));
  return out;
}

export function LineChart({ series, title, yLabel, xLabel, xLabels, width = 640, height = 260, timeAxis }: {
  series: Series[];
  title: string;
  yLabel?: string;
  xLabel?: string;
  // xLabels names the points of series whose x are the indexes 0, 1, 2...: categories.
  xLabels?: string[];
  width?: number;
  height?: number;
  timeAxis?: boolean;
}) {
  const pts = series.flatMap((s) => s.points.map((p) => ({ x: xNum(p.x), y: p.y })));
  const isTime = timeAxis ?? series.some((s) => s.points.some((p) => typeof p.x !== "number"));
  const pad = { l: 52, r: 12, t: 24, b: 34 };
  if (pts.length === 0)
    return (
      <figure className="card" role="img" aria-label={title + ": no data"}>
        <figcaption className="text-sm font-medium">{title}</figcaption>
        <p className="muted text-sm">No data.</p>
      </figure>
    );
  let [x0, x1] = [Math.min(...pts.map((p) => p.x)), Math.max(...pts.map((p) => p.x))];
  let [y0, y1] = [Math.min(...pts.map((p) => p.y)), Math.max(...pts.map((p) => p.y))];
  if (x0 === x1) [x0, x1] = [x0 - 1, x1 + 1];
  if (y0 === y1) [y0, y1] = [y0 - 1, y1 + 1];
  const sx = (x: number) => pad.l + ((x - x0) / (x1 - x0)) * (width - pad.l - pad.r);
  const sy = (y: number) => height - pad.b - ((y - y0) / (y1 - y0)) * (height - pad.t - pad.b);
  const yt = ticks(y0, y1, 5);
  const xt = xLabels
    ? Array.from(new Set(Array.from({ length: 6 }, (_, i) => Math.round(x0 + ((x1 - x0) * i) / 5))))
    : isTime
      ? Array.from({ length: 5 }, (_, i) => x0 + ((x1 - x0) * i) / 4)
      : ticks(x0, x1, 6);
  const fmtX = (x: number) => {
    if (xLabels) return xLabels[Math.round(x)] ?? "";
    if (!isTime) return String(x);
    const d = new Date(x);
    const span = x1 - x0;
    return span <= 600e3 ? d.toISOString().slice(11, 19) : span <= 2 * 86400e3 ? d.toISOString().slice(11, 16) : d.toISOString().slice(5, 10);
  };
  return (
    <figure className="card overflow-x-auto">
      <figcaption className="mb-1 flex flex-wrap items-center gap-3 text-sm">
        <span className="font-medium">{title}</span>
        {series.map((s, i) => (
          <span key={s.name} className="inline-flex items-center gap-1 text-xs">
            <span className="inline-block h-2 w-3 rounded" style={{ background: palette[i % palette.length] }} />
            {s.name}
          </span>
        ))}
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} width="100%" role="img" aria-label={title} className="max-w-full text-zinc-500">
        {yt.map((v) => (
          <g key={"y" + v}>
            <line x1={pad.l} x2={width - pad.r} y1={sy(v)} y2={sy(v)} stroke="currentColor" strokeOpacity={0.15} />
            <text x={pad.l - 6} y={sy(v) + 4} textAnchor="end" fontSize={11} fill="currentColor">{v}</text>
          </g>
        ))}
        {xt.map((v) => (
          <text key={"x" + v} x={sx(v)} y={height - pad.b + 16} textAnchor="middle" fontSize={11} fill="currentColor">{fmtX(v)}</text>
        ))}
        {xLabel && (
          <text x={width - pad.r} y={height - 4} textAnchor="end" fontSize={11} fill="currentColor">{xLabel}</text>
        )}
        {yLabel && (
          <text x={12} y={pad.t - 8} fontSize={11} fill="currentColor">{yLabel}</text>
        )}
        <line x1={pad.l} x2={pad.l} y1={pad.t} y2={height - pad.b} stroke="currentColor" strokeOpacity={0.4} />
        <line x1={pad.l} x2={width - pad.r} y1={height - pad.b} y2={height - pad.b} stroke="currentColor" strokeOpacity={0.4} />
        {series.map((s, i) => (
          <polyline
            key={s.name}
            fill="none"
            stroke={palette[i % palette.length]}
            strokeWidth={2}
            points={s.points.map((p) => `${sx(xNum(p.x)).toFixed(1)},${sy(p.y).toFixed(1)}`).join(" ")}
          >
            <title>{s.name}</title>
          </polyline>
        ))}
      </svg>
    </figure>
  );
}

// ChartSpec is the chart description apps put in their results (vesper's synth.Chart): x labels
// and named series of values, drawn as lines.
export type ChartSpec = { kind?: string; title?: string; x_label?: string; y_label?: string; x: string[]; series: { name: string; values: number[] }[] };

export function isChartSpec(v: unknown): v is ChartSpec {
  const c = v as ChartSpec;
  return !!c && typeof c === "object" && Array.isArray(c.x) && Array.isArray(c.series) && c.series.length > 0 &&
    c.series.every((s) => s && typeof s.name === "string" && Array.isArray(s.values));
}

// findCharts collects the chart descriptions anywhere in a value (a thread's state), up to a depth.
export function findCharts(v: unknown, depth = 8, out: ChartSpec[] = []): ChartSpec[] {
  if (depth < 0 || !v || typeof v !== "object" || out.length >= 12) return out;
  if (isChartSpec(v)) {
    out.push(v);
    return out;
  }
  for (const x of Array.isArray(v) ? v : Object.values(v)) findCharts(x, depth - 1, out);
  return out;
}

export function SpecChart({ spec }: { spec: ChartSpec }) {
  return (
    <LineChart title={spec.title ?? "Chart"} xLabel={spec.x_label} yLabel={spec.y_label} xLabels={spec.x}
      series={spec.series.map((s) => ({ name: s.name, points: s.values.map((y, i) => ({ x: i, y })) }))} />
  );
}
