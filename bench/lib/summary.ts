/** Percentiles, medians across repeats and the "added over a baseline" arithmetic. */

/** The q-quantile (0..1) of ascending `sorted`, nearest rank. */
export function quantile(sorted: readonly number[], q: number): number {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

export interface Dist {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function dist(samples: number[]): Dist {
  const s = [...samples].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return {
    n: s.length,
    p50: quantile(s, 0.5),
    p90: quantile(s, 0.9),
    p99: quantile(s, 0.99),
    max: s[s.length - 1] ?? NaN,
    mean,
  };
}

/** The median (mean of the middle two for an even count). */
export function median(xs: number[]): number {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

/** Median of the per-repeat values, with the spread (min..max) as the noise figure. */
export interface Robust {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

export function robust(runs: number[]): Robust {
  const v = runs.filter((x) => Number.isFinite(x));
  return { median: median(v), min: v.length ? Math.min(...v) : NaN, max: v.length ? Math.max(...v) : NaN, runs };
}

export const r2 = (x: number) => (Number.isFinite(x) ? Math.round(x * 100) / 100 : null);
export const r3 = (x: number) => (Number.isFinite(x) ? Math.round(x * 1000) / 1000 : null);
