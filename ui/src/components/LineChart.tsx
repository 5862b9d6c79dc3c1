// LineChart draws one or more series as lines with recharts (Charts.tsx, loaded as a chunk of
// its own the first time a page shows a chart): series of numbers, or of times (a Date or an ISO
// string), such as run durations or hourly prices; categories with xLabels. Axes are labelled
// in the page's locale, ticks never repeat or clip (recharts drops the ones that do not fit),
// and the y axis starts at zero for values that cannot be negative.
import { lazy, Suspense } from "react";

export type Series = { name: string; points: { x: number | string | Date; y: number }[] };

export type LineChartProps = {
  series: Series[];
  title: string;
  yLabel?: string;
  xLabel?: string;
  // xLabels names the points of series whose x are the indexes 0, 1, 2...: categories.
  xLabels?: string[];
  height?: number;
  timeAxis?: boolean;
  // bars draws bars instead of lines (one value per x, such as each run's duration).
  bars?: boolean;
};

const Impl = lazy(() => import("./Charts"));

export function LineChart(props: LineChartProps) {
  return (
    <Suspense fallback={<figure className="card" role="img" aria-label={props.title + ": loading"}><p className="muted text-sm">Drawing {props.title}…</p></figure>}>
      <Impl {...props} />
    </Suspense>
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
