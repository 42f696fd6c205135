/**
 * Query-string validation of the statistics endpoints and the usage report. Done here
 * rather than by the router's schema so that every failure names its field: a numeric query
 * value failing a range check in Elysia loses its `loc` (stack-notes §3).
 */
import { invalid, issue, text, ValidationFailure, type Text, type ValidationIssue } from "../errors";
import {
  DAY_MS,
  GRANULARITIES,
  PERIODS,
  RANGES,
  floorDay,
  isoDate,
  type Granularity,
  type Period,
  type Range,
} from "./periods";

export type Query = Record<string, string | string[] | undefined>;

/** Largest usage report: one year of days, both ends included. */
export const REPORT_MAX_DAYS = 366;
/** Default usage report: the last 30 days including today. */
export const REPORT_DEFAULT_DAYS = 30;

export const TOP_MIN = 1;
export const TOP_MAX = 20;
export const TOP_DEFAULT = 8;

class Issues {
  list: ValidationIssue[] = [];
  add(field: string, msg: Text, type = "value_error") {
    this.list.push(issue(["query", field], msg, type));
  }
  throwIfAny() {
    if (this.list.length) throw new ValidationFailure(this.list);
  }
}

/** A single string value; a repeated parameter is an error. */
function single(q: Query, field: string, issues: Issues): string | undefined {
  const v = q[field];
  if (Array.isArray(v)) {
    issues.add(field, text("값은 하나만 보낼 수 있습니다.", "Expected a single value"));
    return undefined;
  }
  return v;
}

function oneOf<T extends string>(q: Query, field: string, allowed: readonly T[], def: T, issues: Issues): T {
  const v = single(q, field, issues);
  if (v === undefined) return def;
  if ((allowed as readonly string[]).includes(v)) return v as T;
  issues.add(
    field,
    text(`다음 중 하나여야 합니다: ${allowed.join(", ")}`, `Expected one of: ${allowed.join(", ")}`),
    "enum",
  );
  return def;
}

export function parsePeriodQuery(q: Query, def: Period): { period: Period } {
  const issues = new Issues();
  const period = oneOf(q, "period", PERIODS, def, issues);
  issues.throwIfAny();
  return { period };
}

export function parseTimeseriesQuery(q: Query): { range: Range; granularity: Granularity; top: number } {
  const issues = new Issues();
  const range = oneOf(q, "range", RANGES, "30d", issues);
  const granularity = oneOf(q, "granularity", GRANULARITIES, "day", issues);
  let top = TOP_DEFAULT;
  const raw = single(q, "top", issues);
  if (raw !== undefined) {
    if (!/^\d{1,9}$/.test(raw.trim()))
      issues.add("top", text("정수여야 합니다.", "Expected an integer"), "int_parsing");
    else {
      top = Number(raw.trim());
      if (top < TOP_MIN || top > TOP_MAX)
        issues.add(
          "top",
          text(`${TOP_MIN}부터 ${TOP_MAX}까지의 정수여야 합니다.`, `Expected an integer from ${TOP_MIN} to ${TOP_MAX}`),
          "range",
        );
    }
  }
  issues.throwIfAny();
  return { range, granularity, top };
}

/** `YYYY-MM-DD` that names a real calendar day → its UTC midnight; null otherwise. */
export function parseIsoDate(s: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return null;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return isoDate(d) === s ? d : null;
}

/**
 * `from` and `to` (UTC days, both included). Defaults: `to` is today, `from` is 29 days
 * before `to`; a lone `from` runs to today (or to `from` + 365 days if that is earlier).
 */
export function parseReportQuery(q: Query, now: Date): { from: string; to: string } {
  const issues = new Issues();
  const day = (field: string): Date | null | undefined => {
    const v = single(q, field, issues);
    if (v === undefined) return undefined;
    const d = parseIsoDate(v);
    if (!d) issues.add(field, text("YYYY-MM-DD 형식의 날짜여야 합니다.", "Expected a date YYYY-MM-DD"), "date_parsing");
    return d;
  };
  const fromQ = day("from");
  const toQ = day("to");
  issues.throwIfAny();
  const today = floorDay(now);
  const maxSpan = (REPORT_MAX_DAYS - 1) * DAY_MS;
  let to: Date;
  if (toQ) to = toQ;
  else if (fromQ)
    to = new Date(Math.max(fromQ.getTime(), Math.min(today.getTime(), fromQ.getTime() + maxSpan))); // a lone future `from` is one day
  else to = today;
  const from = fromQ ?? new Date(to.getTime() - (REPORT_DEFAULT_DAYS - 1) * DAY_MS);
  if (from.getTime() > to.getTime())
    throw invalid(["query", "from"], text("`from`은 `to`보다 늦을 수 없습니다.", "`from` must not be after `to`"));
  if (to.getTime() - from.getTime() > maxSpan)
    throw invalid(
      ["query", "from"],
      text(`기간은 최대 ${REPORT_MAX_DAYS}일입니다.`, `The range may span at most ${REPORT_MAX_DAYS} days`),
    );
  return { from: isoDate(from), to: isoDate(to) };
}
