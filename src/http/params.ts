/** Path and query parameter checks shared by the routes. */
import { GatewayError, invalid, text } from "../core/errors";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A non-UUID where a UUID is expected is 400 invalid_request (docs/decisions.md #2). */
export function requireUuid(value: string, what = "id"): string {
  if (!UUID.test(value))
    throw new GatewayError(
      "invalid_request",
      text(`${what} 값이 올바른 UUID 형식이 아닙니다.`, `${what} is not a valid UUID.`),
      { param: what },
    );
  return value.toLowerCase();
}

/** The English of each `what` the routes name (Korean, as the default message says it). */
const WHAT_EN: Record<string, string> = {
  리소스: "Resource",
  사용자: "User",
  조직: "Organization",
  "API 키": "API key",
  "관리 키": "Management key",
  요청: "Request",
  "라우팅 정책": "Routing policy",
};

export function notFound(what = "리소스"): GatewayError {
  return new GatewayError("not_found", text(`${what}를 찾을 수 없습니다.`, `${WHAT_EN[what] ?? what} not found.`));
}

/**
 * An optional boolean query flag of the request URL: exactly `true` or `false`; absent is
 * `def`. Anything else (`1`, `yes`, empty, or the parameter repeated, which the router would
 * silently reduce to one value) is 422 naming the field, since guessing could delete too much.
 */
export function queryFlag(request: Request, field: string, def = false): boolean {
  const values = new URL(request.url).searchParams.getAll(field);
  if (!values.length) return def;
  if (values.length === 1 && values[0] === "true") return true;
  if (values.length === 1 && values[0] === "false") return false;
  throw invalid(
    ["query", field],
    values.length > 1
      ? text("값은 하나만 보낼 수 있습니다.", "Expected a single value")
      : text("true 또는 false여야 합니다.", "Expected true or false"),
    "bool_parsing",
  );
}
