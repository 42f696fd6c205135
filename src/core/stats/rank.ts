/** Ranking arithmetic of the public statistics: ordering, top-N, trend and share. */

/** Rounds half away from zero to `digits` decimals (display values only). */
export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  const r = Math.round(Math.abs(x) * f) / f;
  return x < 0 ? -r : r;
}

/**
 * Token change against the previous period in percent, one decimal. Null when the previous
 * period has no tokens for it: there is no earlier data to compare with.
 */
export function trendPct(current: number, previous: number | undefined): number | null {
  if (!previous) return null;
  return round(((current - previous) / previous) * 100, 1);
}

/** `part` as a percentage of `whole`, two decimals (0 when the whole is 0). */
export function sharePct(part: number, whole: number): number {
  return whole > 0 ? round((part / whole) * 100, 2) : 0;
}

/**
 * Sorts descending by `score`, then by `name` so equal scores always come out in the same
 * order, and keeps the first `n`.
 */
export function topBy<T>(
  items: Iterable<T>,
  n: number,
  score: (x: T) => number,
  name: (x: T) => string,
  tie?: (x: T) => number,
): T[] {
  return [...items]
    .sort(
      (a, b) =>
        score(b) - score(a) || (tie ? tie(b) - tie(a) : 0) || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0),
    )
    .slice(0, n);
}

/** The series name that sums everything outside the top models. */
export const OTHERS = "Others";
