/**
 * The single error renderer: GatewayError, our own validation failures and Elysia's
 * (validation, parse, not-found) all become one of the specification's three body shapes.
 * Anything else is a bug: logged with the request id and rendered as a bare 500.
 */
import { ValidationError } from "elysia";
import { ValueErrorType } from "@sinclair/typebox/errors";
import { GatewayError, ValidationFailure, type ValidationIssue } from "../core/errors";
import { isDatabaseUnavailable, isUnstorableValue } from "../lib/db-errors";
import { log } from "../lib/log";

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };

export function errorBody(err: GatewayError): unknown {
  if (err.shape === "envelope") return { error: { message: err.message, type: err.errorCode } };
  const { action, retryable, providers, upstream, suggestions } = err.extras;
  return {
    detail: {
      error: err.errorCode,
      message: err.message,
      ...(action && { action }),
      ...(retryable !== undefined && { retryable }),
      ...(providers && { providers }),
      ...(upstream && { upstream }),
      ...(suggestions && { suggestions }),
    },
  };
}

export function gatewayErrorResponse(err: GatewayError, headers: Record<string, string> = {}): Response {
  const h: Record<string, string> = { ...JSON_HEADERS, ...headers, ...err.extras.headers };
  if (err.extras.retryAfter !== undefined) h["retry-after"] = String(Math.max(1, Math.ceil(err.extras.retryAfter)));
  return new Response(JSON.stringify(errorBody(err)), { status: err.status, headers: h });
}

export function validationResponse(issues: ValidationIssue[]): Response {
  return new Response(JSON.stringify({ detail: issues }), { status: 422, headers: JSON_HEADERS });
}

const depth = (path: unknown) => String(path ?? "").split("/").filter(Boolean).length;

/**
 * A failed union (every nullable field is one) is reported by TypeBox at the union's own
 * path. When one variant got further into the value (e.g. the array variant of a nullable
 * list, failing at one element), report that variant's errors instead, so `loc` names the
 * bad element: ["body","ip_allowlist",2] rather than ["body","ip_allowlist"]. Between
 * variants that got equally far, the one wrong in fewer places is what the client meant (an
 * `image_url` part missing its `image_url`, not a `text` part with the wrong type).
 */
function refineUnion(v: any): any[] {
  if (v?.type !== ValueErrorType.Union || !Array.isArray(v.errors)) return [v];
  let best: any[] | null = null;
  let bestDepth = depth(v.path);
  let bestPlaces = Infinity;
  for (const variant of v.errors) {
    const errs = [...(variant as Iterable<any>)];
    if (!errs.length) continue;
    const d = Math.min(...errs.map((x) => depth(x.path)));
    const places = new Set(errs.map((x) => x.path)).size;
    if (d > bestDepth || (best && d === bestDepth && places < bestPlaces)) {
      best = errs;
      bestDepth = d;
      bestPlaces = places;
    }
  }
  return best ? best.flatMap(refineUnion) : [v];
}

/** Elysia's TypeBox failures → the 422 list with `loc` such as ["body","duration_seconds"]. */
export function issuesFromElysia(e: ValidationError): ValidationIssue[] {
  const seen = new Set<string>();
  const where = e.type === "property" ? "query" : e.type;
  return e.all.flatMap(refineUnion).flatMap((v: any) => {
    const loc: (string | number)[] = [where, ...String(v.path ?? "").split("/").filter(Boolean).map((p: string) => (/^\d+$/.test(p) ? Number(p) : p))];
    const key = JSON.stringify(loc);
    if (seen.has(key)) return [];
    seen.add(key);
    const missing = v.value === undefined;
    return [{ loc, msg: missing ? "Field required" : String(v.message ?? v.summary ?? "invalid"), type: missing ? "missing" : (ValueErrorType[v.type] ?? String(v.type)) }];
  });
}

/** Renders whatever a handler threw. `code` is Elysia's error code string when it has one. */
export function renderError(code: unknown, error: unknown, requestId: string): Response {
  if (error instanceof GatewayError) return gatewayErrorResponse(error);
  if (error instanceof ValidationFailure) return validationResponse(error.issues);
  if (error instanceof ValidationError || code === "VALIDATION") return validationResponse(issuesFromElysia(error as ValidationError));
  // Elysia wraps whatever the parse stage throws in a ParseError: the body gate's 401/403, a
  // database outage while it looks the caller up, the body reader's 400/408/413. Rendered
  // as themselves.
  if (code === "PARSE") {
    const cause = (error as { cause?: unknown })?.cause;
    if (cause != null && !(cause instanceof SyntaxError)) return renderError(undefined, cause, requestId);
    return gatewayErrorResponse(new GatewayError("invalid_request", "요청 본문이 올바른 JSON이 아닙니다."));
  }
  if (code === "NOT_FOUND") return gatewayErrorResponse(new GatewayError("not_found", "요청한 경로를 찾을 수 없습니다."));
  if (code === "INVALID_COOKIE_SIGNATURE" || code === "INVALID_FILE_TYPE") return gatewayErrorResponse(new GatewayError("invalid_request"));
  if (isUnstorableValue(error)) return gatewayErrorResponse(new GatewayError("invalid_request", "저장할 수 없는 값(NUL 문자, 범위를 벗어난 날짜나 숫자 등)이 포함되어 있습니다."));
  // The database is down or too slow: a transient 503 the client may retry, never a 500.
  if (isDatabaseUnavailable(error)) {
    log.warn("database unavailable", { request_id: requestId, code: (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code });
    return gatewayErrorResponse(new GatewayError("service_unavailable", "데이터베이스에 일시적으로 연결할 수 없습니다. 잠시 후 다시 시도하세요."));
  }
  // Elysia writes a value that failed validation into its message with `${value}`, which throws
  // (JSC: "No default value") when a JSON body puts an object with its own non-function
  // toString / valueOf where a scalar belongs: the body failed validation all the same.
  if (error instanceof TypeError && error.message === "No default value") return validationResponse([{ loc: ["body"], msg: "Invalid value", type: "invalid" }]);
  log.error("unhandled error", { request_id: requestId, error });
  return gatewayErrorResponse(new GatewayError("internal_error"));
}
