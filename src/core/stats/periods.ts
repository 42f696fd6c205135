/**
 * Time windows of the statistics, all in UTC and aligned to the rollups' hourly buckets.
 * Periods are rolling: `daily` is the last 24 hourly buckets including the current one, so
 * the figures never drop to zero at midnight; the previous period is the same length just
 * before it (for `trend_pct`). Time series use calendar buckets: UTC days, or ISO weeks
 * that start on Monday.
 */

export const PERIODS = ["daily", "weekly", "monthly"] as const;
export type Period = (typeof PERIODS)[number];

export const RANGES = ["30d", "12w", "24w"] as const;
export type Range = (typeof RANGES)[number];

export const GRANULARITIES = ["day", "week"] as const;
export type Granularity = (typeof GRANULARITIES)[number];

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
export const WEEK_MS = 7 * DAY_MS;

const PERIOD_HOURS: Record<Period, number> = { daily: 24, weekly: 7 * 24, monthly: 30 * 24 };

/** A half-open time interval [from, to). */
export interface Window {
  from: Date;
  to: Date;
}

export function floorHour(t: Date): Date {
  return new Date(Math.floor(t.getTime() / HOUR_MS) * HOUR_MS);
}

export function floorDay(t: Date): Date {
  return new Date(Math.floor(t.getTime() / DAY_MS) * DAY_MS);
}

/** Monday 00:00 UTC of the ISO week that contains `t`. */
export function isoWeekStart(t: Date): Date {
  const day = floorDay(t);
  const sinceMonday = (day.getUTCDay() + 6) % 7; // getUTCDay: Sunday = 0
  return new Date(day.getTime() - sinceMonday * DAY_MS);
}

/** The current period (ending with the current hour's bucket) and the one before it. */
export function periodWindows(period: Period, now: Date): { current: Window; previous: Window } {
  const to = new Date(floorHour(now).getTime() + HOUR_MS);
  const len = PERIOD_HOURS[period] * HOUR_MS;
  const from = new Date(to.getTime() - len);
  return { current: { from, to }, previous: { from: new Date(from.getTime() - len), to: from } };
}

/**
 * The buckets of a time series, oldest first, ending with the bucket that contains `now`.
 * `30d` starts 29 days before today; `12w` and `24w` start on the Monday of the ISO week 11
 * (23) weeks before the current one, so by week they are exactly 12 (24) ISO weeks and by
 * day they are the days from that Monday to today. By week, `30d` starts on the Monday on or
 * before its first day, so that every bucket is a whole ISO week (5 or 6 of them).
 */
export function seriesBuckets(range: Range, granularity: Granularity, now: Date): { buckets: Date[]; window: Window } {
  const today = floorDay(now);
  const start =
    range === "30d"
      ? new Date(today.getTime() - 29 * DAY_MS)
      : new Date(isoWeekStart(today).getTime() - (range === "12w" ? 11 : 23) * WEEK_MS);
  const step = granularity === "day" ? DAY_MS : WEEK_MS;
  const first = granularity === "day" ? start : isoWeekStart(start);
  const last = granularity === "day" ? today : isoWeekStart(today);
  const buckets: Date[] = [];
  for (let t = first.getTime(); t <= last.getTime(); t += step) buckets.push(new Date(t));
  return { buckets, window: { from: first, to: new Date(last.getTime() + step) } };
}

/**
 * Covers an hour-aligned window with whole UTC days in the middle and hours at the edges, so
 * a reader touches the daily rollups for the interior and the hourly ones only at the ends.
 */
export function splitWindow(w: Window): { hours: Window[]; days: Window | null } {
  const from = w.from.getTime();
  const to = w.to.getTime();
  const firstDay = Math.ceil(from / DAY_MS) * DAY_MS;
  const lastDay = Math.floor(to / DAY_MS) * DAY_MS;
  if (firstDay >= lastDay) return { hours: to > from ? [w] : [], days: null };
  const hours: Window[] = [];
  if (from < firstDay) hours.push({ from: w.from, to: new Date(firstDay) });
  if (lastDay < to) hours.push({ from: new Date(lastDay), to: w.to });
  return { hours, days: { from: new Date(firstDay), to: new Date(lastDay) } };
}

/** `YYYY-MM-DD` of a UTC date. */
export function isoDate(t: Date): string {
  return t.toISOString().slice(0, 10);
}
