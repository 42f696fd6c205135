/** Path and query parameter checks shared by the routes. */
import { GatewayError, invalid } from "../core/errors";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A non-UUID where a UUID is expected is 400 invalid_request (docs/decisions.md #2). */
export function requireUuid(value: string, what = "id"): string {
  if (!UUID.test(value)) throw new GatewayError("invalid_request", `${what} 값이 올바른 UUID 형식이 아닙니다.`);
  return value.toLowerCase();
}

export function notFound(what = "리소스"): GatewayError {
  return new GatewayError("not_found", `${what}를 찾을 수 없습니다.`);
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
  throw invalid(["query", field], values.length > 1 ? "Expected a single value" : "Expected true or false", "bool_parsing");
}
