/**
 * The query of `GET /v1/activity`: filters, page size and the opaque cursor. Read from the URL
 * itself (a repeated parameter is refused, not silently reduced); every bad field at once (422).
 */
import { issue, ValidationFailure, type ValidationIssue } from "../../core/errors";
import type { ActivityFilter } from "../../db/repos/activity";

const ACTIVITY_PAGE_DEFAULT = 50;
const ACTIVITY_PAGE_MAX = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The cursor names the last row of a page; base64url so clients treat it as opaque. */
export const encodeCursor = (id: string | number) => Buffer.from(`ae:${id}`).toString("base64url");
function decodeCursor(cursor: string): number | null {
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(cursor)) return null;
  const m = /^ae:([1-9]\d{0,15})$/.exec(Buffer.from(cursor, "base64url").toString("latin1"));
  return m ? Number(m[1]) : null;
}

/** A date (`2026-01-31`, UTC midnight; as `to` the whole day is included) or an RFC 3339 time. */
function instant(v: string, opts: { endOfDay: boolean }): Date | null {
  if (DATE_ONLY.test(v)) {
    const d = new Date(`${v}T00:00:00Z`);
    if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== v) return null;
    return opts.endOfDay ? new Date(d.getTime() + 86_400_000) : d;
  }
  if (!DATE_TIME.test(v)) return null;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? null : d;
}

export function parseActivityQuery(q: URLSearchParams, userId: string): ActivityFilter {
  const issues: ValidationIssue[] = [];
  const bad = (field: string, ko: string, en: string, type = "value_error") =>
    issues.push(issue(["query", field], { ko, en }, type));
  const one = (field: string): string | undefined => {
    const v = q.getAll(field);
    if (v.length > 1) return void bad(field, "값은 하나만 보낼 수 있습니다.", "Expected a single value");
    return v[0];
  };
  const out: ActivityFilter = { userId, limit: ACTIVITY_PAGE_DEFAULT };
  const limit = one("limit");
  if (limit !== undefined) {
    const n = /^\d{1,4}$/.test(limit) ? Number(limit) : NaN;
    if (n >= 1 && n <= ACTIVITY_PAGE_MAX) out.limit = n;
    else
      bad(
        "limit",
        `1부터 ${ACTIVITY_PAGE_MAX}까지의 정수여야 합니다.`,
        `Expected an integer from 1 to ${ACTIVITY_PAGE_MAX}`,
        "int_parsing",
      );
  }
  const cursor = one("cursor");
  if (cursor !== undefined) {
    const id = decodeCursor(cursor);
    if (id === null)
      bad("cursor", "이전 페이지의 next_cursor 값이어야 합니다.", "Expected the next_cursor of a previous page");
    else out.afterId = id;
  }
  const key = one("key_id");
  if (key !== undefined) {
    if (UUID.test(key)) out.keyId = key.toLowerCase();
    else bad("key_id", "올바른 UUID 형식이 아닙니다.", "Expected a UUID", "uuid_parsing");
  }
  const request = one("request_id");
  if (request !== undefined) {
    if (UUID.test(request.trim())) out.requestId = request.trim().toLowerCase();
    else bad("request_id", "올바른 UUID 형식이 아닙니다.", "Expected a UUID", "uuid_parsing");
  }
  const model = one("model");
  if (model !== undefined) {
    if (model.length >= 1 && model.length <= 200) out.model = model;
    else bad("model", "1~200자여야 합니다.", "Expected 1 to 200 characters", "string_too_long");
  }
  const status = one("status");
  if (status === "success" || status === "error") out.status = status;
  else if (status !== undefined) {
    const n = /^\d{3}$/.test(status) ? Number(status) : NaN;
    if (n >= 100 && n <= 599) out.status = n;
    else
      bad(
        "status",
        "HTTP 상태 코드(100~599), success 또는 error여야 합니다.",
        "Expected an HTTP status (100 to 599), success or error",
      );
  }
  for (const field of ["from", "to"] as const) {
    const v = one(field);
    if (v === undefined) continue;
    const d = instant(v, { endOfDay: field === "to" });
    if (d) out[field] = d;
    else
      bad(
        field,
        "YYYY-MM-DD 날짜나 RFC 3339 시각이어야 합니다.",
        "Expected a YYYY-MM-DD date or an RFC 3339 date-time",
        "datetime_parsing",
      );
  }
  if (out.from && out.to && out.from >= out.to) bad("to", "from보다 뒤여야 합니다.", "Expected a time after from");
  if (issues.length) throw new ValidationFailure(issues);
  return out;
}

/** `days` of the summary: 1 to 90, default 30. */
export function parseSummaryDays(q: URLSearchParams): number {
  const v = q.getAll("days");
  if (!v.length) return 30;
  const n = v.length === 1 && /^\d{1,3}$/.test(v[0]!) ? Number(v[0]) : NaN;
  if (n >= 1 && n <= 90) return n;
  throw new ValidationFailure([
    issue(
      ["query", "days"],
      { ko: "1부터 90까지의 정수여야 합니다.", en: "Expected an integer from 1 to 90" },
      "int_parsing",
    ),
  ]);
}
