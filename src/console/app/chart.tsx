/**
 * uPlot charts: time series (lines, stacked areas or stacked bars) and bars over categories.
 * uPlot draws on a canvas, so each chart is an image named by its title for screen readers;
 * its legend is ours, in text, and shows every series' value without hovering (the window's
 * total, or its last value for rates and latencies), formatted as the axis is.
 */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";

const PALETTE = [
  "#2563eb",
  "#dc2626",
  "#16a34a",
  "#d97706",
  "#7c3aed",
  "#0891b2",
  "#db2777",
  "#65a30d",
  "#475569",
  "#ea580c",
  "#4f46e5",
  "#0d9488",
];
export const color = (i: number) => PALETTE[i % PALETTE.length]!;

export interface Series {
  label: string;
  values: (number | null)[];
}

interface Props {
  title: string;
  /** x values: seconds since the epoch (time axis) or 0..n-1 with `categories`. */
  x: number[];
  series: Series[];
  stacked?: boolean;
  bars?: boolean;
  categories?: string[];
  height?: number;
  /** Formats the y axis and the legend's values (default: numbers as they are). */
  format?: (v: number) => string;
  /** What the legend shows per series: the window's sum (default) or its last non-empty value. */
  legend?: "sum" | "last";
}

const legendValue = (values: (number | null)[], how: "sum" | "last"): number | null => {
  if (how === "sum") return values.reduce<number>((a, v) => a + (v ?? 0), 0);
  for (let i = values.length - 1; i >= 0; i--) if (values[i] != null) return values[i]!;
  return null;
};

/** Running sums, so each stacked series is drawn on top of the ones before it. */
function stack(series: Series[]): Series[] {
  const acc: number[] = [];
  return series.map((s) => ({ label: s.label, values: s.values.map((v, i) => (acc[i] = (acc[i] ?? 0) + (v ?? 0))) }));
}

export function Chart({ title, x, series, stacked, bars, categories, height = 240, format, legend = "sum" }: Props) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el || !x.length) return;
    // Stacked bars: the running sums drawn tallest first, so each shorter one covers its share.
    const sums = stacked ? stack(series) : series;
    const order = stacked && bars ? sums.map((_, i) => sums.length - 1 - i) : sums.map((_, i) => i);
    const drawn = order.map((i) => sums[i]!);
    const dark = document.documentElement.dataset.theme === "dark";
    const axis = { stroke: dark ? "#cbd5e1" : "#334155", grid: { stroke: dark ? "#334155" : "#e2e8f0" } };
    const opts: uPlot.Options = {
      width: Math.max(280, el.clientWidth),
      height,
      // Amounts start at zero (a bar cut at 15 would mislead); categories get half a slot each side.
      scales: {
        // Daily bars get half a day each side, so the first and last bars are whole.
        x: categories
          ? { time: false, range: [-0.5, categories.length - 0.5] }
          : bars
            ? { time: true, range: (_u: uPlot, min: number, max: number) => [min - 43_200, max + 43_200] }
            : { time: true },
        y: { range: (_u: uPlot, _min: number, max: number) => [0, max > 0 ? max * 1.1 : 1] },
      },
      axes: [
        {
          ...axis,
          ...(categories && {
            splits: () => categories.map((_, i) => i),
            values: (_u: uPlot, ticks: number[]) => ticks.map((t) => categories[t] ?? ""),
          }),
        },
        { ...axis, size: 64, ...(format && { values: (_u: uPlot, ticks: number[]) => ticks.map(format) }) },
      ],
      legend: { show: false },
      series: [
        {},
        ...drawn.map((s, j) => ({
          label: s.label,
          stroke: color(order[j]!),
          width: bars ? 0 : 2,
          points: { show: !stacked && !bars },
          ...(stacked && !bars && { fill: color(order[j]!) + "55" }),
          ...(bars && { paths: uPlot.paths.bars!({ size: [0.7, 48] }), fill: color(order[j]!) }),
        })),
      ],
      // Stacked areas: fill each band down to the one below, not to zero.
      bands:
        stacked && !bars ? drawn.slice(1).map((_, i) => ({ series: [i + 2, i + 1] as [number, number] })) : undefined,
    };
    const plot = new uPlot(opts, [x, ...drawn.map((s) => s.values)] as uPlot.AlignedData, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [x, series, stacked, bars, categories, height, format, document.documentElement.dataset.theme]);
  const show = format ?? ((v: number) => v.toLocaleString());
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={title} data-series={series.length} />
      {/* Bars over categories name their values on the axis; their pages list them. */}
      {!categories && (
        <ul class="legend-list" data-testid="legend">
          {series.map((s, i) => {
            const v = legendValue(s.values, legend);
            return (
              <li>
                <span class="swatch" style={{ background: color(i) }} aria-hidden="true" />
                <span class="label">{s.label}</span> <b data-value>{v == null ? "–" : show(v)}</b>
              </li>
            );
          })}
        </ul>
      )}
    </figure>
  );
}

/** Seconds since the epoch of a UTC day `YYYY-MM-DD`. */
export const daySeconds = (d: string) => Date.parse(`${d}T00:00:00Z`) / 1000;
