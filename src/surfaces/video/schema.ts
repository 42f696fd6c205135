/**
 * The video routes' wire input beyond the submit body (src/core/video/schema.ts): the
 * `Idempotency-Key` header and the dashboard list's `limit` and `cursor` query, each refused
 * with a 422 naming its field.
 */
import { invalid, text } from "../../core/errors";
import { IDEMPOTENCY_KEY_MAX } from "../../core/video/service";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The request's `Idempotency-Key` (null when not sent): 1 to 128 characters. */
export function idempotencyKeyOf(request: Request): string | null {
  const key = request.headers.get("idempotency-key");
  if (key !== null && (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX)) {
    throw invalid(
      ["header", "idempotency-key"],
      text(
        `Idempotency-Key는 1자에서 ${IDEMPOTENCY_KEY_MAX}자 사이여야 합니다.`,
        `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} characters`,
      ),
      "string_too_long",
    );
  }
  return key;
}

/** One page of the account's job list: `limit` 1–200 (default 50), after the `cursor` job. */
export function jobListQuery(query: URLSearchParams): { limit: number; after: string | null } {
  const single = (field: string) => {
    const values = query.getAll(field);
    if (values.length > 1)
      throw invalid(["query", field], { ko: "값은 하나만 보낼 수 있습니다.", en: "Expected a single value" });
    return values[0];
  };
  const rawLimit = single("limit");
  const limit = rawLimit === undefined ? 50 : /^\d{1,3}$/.test(rawLimit) ? Number(rawLimit) : NaN;
  if (!(limit >= 1 && limit <= 200))
    throw invalid(
      ["query", "limit"],
      { ko: "1부터 200까지의 정수여야 합니다.", en: "Expected an integer from 1 to 200" },
      "int_parsing",
    );
  const cursor = single("cursor");
  if (cursor !== undefined && !UUID.test(cursor))
    throw invalid(["query", "cursor"], {
      ko: "이전 페이지의 next_cursor 값이어야 합니다.",
      en: "Expected the next_cursor of a previous page",
    });
  return { limit, after: cursor?.toLowerCase() ?? null };
}
