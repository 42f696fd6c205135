/** Path parameter checks shared by the routes. */
import { GatewayError } from "../core/errors";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A non-UUID where a UUID is expected is 400 invalid_request (decisions.md #2). */
export function requireUuid(value: string, what = "id"): string {
  if (!UUID.test(value)) throw new GatewayError("invalid_request", `${what} 값이 올바른 UUID 형식이 아닙니다.`);
  return value.toLowerCase();
}

export function notFound(what = "리소스"): GatewayError {
  return new GatewayError("not_found", `${what}를 찾을 수 없습니다.`);
}
