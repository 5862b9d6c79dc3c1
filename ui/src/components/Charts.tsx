// Charts draws LineChart's series with recharts (see LineChart.tsx, which loads this lazily).
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart as RLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { pageLocale } from "../api";
import type { LineChartProps } from "./LineChart";

const palette = ["#059669", "#2563eb", "#d97706", "#db2777", "#7c3aed", "#0891b2"];

const xNum = (x: number | string | Date) => (typeof x === "number" ? x : (x instanceof Date ? x : new Date(x)).getTime());

// timeFormat picks what a time tick shows from the span of the axis: seconds within a few
// minutes, minutes within two days, else the date (so neighbouring ticks differ).
function timeFormat(span: number): Intl.DateTimeFormat {
  const loc = pageLocale();
  if (span <= 5 * 60e3) return new Intl.DateTimeFormat(loc, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  if (span <= 2 * 86400e3) return new Intl.DateTimeFormat(loc, { hour: "2-digit", minute: "2-digit" });
  return new Intl.DateTimeFormat(loc, { day: "numeric", month: "short" });
}

export default function Charts({ series, title, yLabel, xLabel, xLabels, height = 260, timeAxis, bars }: LineChartProps) {
  const isTime = !xLabels && (timeAxis ?? series.some((s) => s.points.some((p) => typeof p.x !== "number")));
  const rows = new Map<number, Record<string, number>>();
  for (const s of series) for (const p of s.points) {
    const x = xNum(p.x);
    if (!Number.isFinite(x) || !Number.isFinite(p.y)) continue;
    const r = rows.get(x) ?? { x };
    r[s.name] = p.y;
    rows.set(x, r);
  }
  const data = [...rows.values()].sort((a, b) => a.x - b.x);
  if (data.length === 0)
    return (
      <figure className="card" role="img" aria-label={title + ": no data"}>
        <figcaption className="text-sm font-medium">{title}</figcaption>
        <p className="muted text-sm">No data.</p>
      </figure>
    );
  const xs = data.map((d) => d.x);
  const span = Math.max(...xs) - Math.min(...xs);
  const tf = timeFormat(span);
  const nf = new Intl.NumberFormat(pageLocale(), { maximumFractionDigits: 2 });
  const fmtX = (x: number) => (xLabels ? (xLabels[Math.round(x)] ?? "") : isTime ? tf.format(new Date(x)) : nf.format(x));
  const nonNegative = series.every((s) => s.points.every((p) => p.y >= 0));
  // The y ticks get as many decimals as a quarter of the values' range needs, so that ticks a
  // step apart never read the same (0.0025 and 0.005, not 0 and 0.01).
  const ys = series.flatMap((s) => s.points.map((p) => p.y)).filter(Number.isFinite);
  const yStep = ((ys.length ? Math.max(...ys) : 1) - (nonNegative ? 0 : ys.length ? Math.min(...ys) : 0)) / 4;
  const yDigits = yStep > 0 ? Math.min(8, Math.max(0, Math.ceil(-Math.log10(yStep)) + 1)) : 2;
  const yf = new Intl.NumberFormat(pageLocale(), { maximumFractionDigits: yDigits });
  const Chart = bars ? BarChart : RLine;
  return (
    <figure className="card">
      <figcaption className="mb-1 text-sm font-medium">{title}</figcaption>
      <div role="img" aria-label={title} style={{ height }} className="text-zinc-500">
        <ResponsiveContainer width="100%" height="100%">
          <Chart data={data} margin={{ top: 8, right: 16, bottom: xLabel ? 18 : 4, left: 4 }}>
            <CartesianGrid strokeOpacity={0.2} vertical={false} />
            <XAxis dataKey="x" type={bars ? "category" : "number"} domain={["dataMin", "dataMax"]} scale={bars ? "band" : isTime ? "time" : "linear"}
              tickFormatter={fmtX} minTickGap={24} interval="preserveStartEnd" tick={{ fontSize: 11, fill: "currentColor" }} stroke="currentColor"
              label={xLabel ? { value: xLabel, position: "insideBottomRight", offset: -12, fontSize: 11, fill: "currentColor" } : undefined}
              allowDuplicatedCategory={false} />
            <YAxis domain={nonNegative ? [0, "auto"] : ["auto", "auto"]} tickFormatter={(v: number) => yf.format(v)} width={56}
              tick={{ fontSize: 11, fill: "currentColor" }} stroke="currentColor"
              label={yLabel ? { value: yLabel, angle: -90, position: "insideLeft", fontSize: 11, fill: "currentColor", style: { textAnchor: "middle" } } : undefined} />
            <Tooltip labelFormatter={(x) => fmtX(Number(x))} formatter={(v) => yf.format(Number(v))} />
            {series.length > 1 && <Legend wrapperStyle={{ fontSize: 12 }} />}
            {series.map((s, i) =>
              bars ? <Bar key={s.name} dataKey={s.name} maxBarSize={48} fill={palette[i % palette.length]} isAnimationActive={false} />
                : <Line key={s.name} dataKey={s.name} stroke={palette[i % palette.length]} strokeWidth={2} dot={data.length <= 40} isAnimationActive={false} connectNulls />)}
          </Chart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}
