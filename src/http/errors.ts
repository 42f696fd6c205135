/**
 * The single error renderer: GatewayError, our own validation failures and Elysia's
 * (validation, parse, not-found) become one failure, rendered once in the dialect the route
 * declares (./error-dialect.ts). Anything else is a bug: logged with the request id and
 * rendered as a bare 500.
 *
 * The OpenAI dialect (every route but Messages) has the specification's three body shapes
 * (src/surfaces/openai/error-schemas.ts), each also carrying OpenAI's error object at the top
 * level, `error: {message, type, code, param}`, which the OpenAI SDK (and LangChain, the Vercel
 * AI SDK) read for their error's message and code; the compatible envelope already is that
 * object. The Anthropic dialect is Anthropic's envelope (src/surfaces/anthropic/errors.ts) with
 * the same status, headers, message and code. Messages are Korean, or English when the request
 * prefers it (./lang.ts).
 */
import { ValidationError } from "elysia";
import { ValueErrorType } from "@sinclair/typebox/errors";
import { GatewayError, ValidationFailure, text, type Lang, type ValidationIssue } from "../core/errors";
import { isDatabaseUnavailable, isUnstorableValue } from "../lib/db-errors";
import { log } from "../lib/log";
import { upstreamWords } from "../core/upstream/words";
import { koreanIssueMessage } from "./validation-ko";
import type { CompatibleError, StructuredError, ValidationErrorBody } from "../surfaces/openai/error-schemas";
import { anthropicErrorBody, anthropicErrorType } from "../surfaces/anthropic/errors";
import type { ErrorDialect } from "./error-dialect";

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };

/** OpenAI's `error.type` for a structured code, by status (OpenAI's own names for each class). */
export function openaiType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 402) return "insufficient_quota";
  if (status === 403) return "permission_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** OpenAI's `param` for a `loc`: the field path without its location, `messages[0].content`. */
export function paramOf(loc: (string | number)[]): string | null {
  const path = ["body", "query", "params", "header", "headers", "cookie"].includes(String(loc[0])) ? loc.slice(1) : loc;
  if (!path.length) return null;
  let s = "";
  for (const p of path) s += typeof p === "number" ? `[${p}]` : s ? `.${p}` : p;
  return s;
}

export function errorBody(err: GatewayError, lang: Lang = "ko"): StructuredError | CompatibleError {
  const message = err.messageIn(lang);
  const param = err.extras.param ?? null;
  if (err.shape === "envelope") return { error: { message, type: err.errorCode, code: err.errorCode, param } };
  const { action, retryable, providers, upstream, suggestions } = err.extras;
  return {
    detail: {
      error: err.errorCode,
      message,
      // `cond ? {…} : undefined`: spreading `false` would allocate a Boolean (docs/decisions.md #64).
      ...(action ? { action } : undefined),
      ...(retryable !== undefined ? { retryable } : undefined),
      ...(providers ? { providers } : undefined),
      ...(upstream
        ? { upstream: lang === "en" ? { ...upstream, detail: upstreamWords(upstream.reason, "en") } : upstream }
        : undefined),
      ...(suggestions ? { suggestions } : undefined),
    },
    error: { message, type: openaiType(err.status), code: err.errorCode, param },
  };
}

/** An error's headers in every dialect: JSON, its own, and Retry-After when it says when. */
function errorHeaders(err: GatewayError, headers: Record<string, string> = {}): Record<string, string> {
  const h: Record<string, string> = { ...JSON_HEADERS, ...headers, ...err.extras.headers };
  if (err.extras.retryAfter !== undefined) h["retry-after"] = String(Math.max(1, Math.ceil(err.extras.retryAfter)));
  return h;
}

export function gatewayErrorResponse(
  err: GatewayError,
  headers: Record<string, string> = {},
  lang: Lang = "ko",
): Response {
  return new Response(JSON.stringify(errorBody(err, lang)), {
    status: err.status,
    headers: errorHeaders(err, headers),
  });
}

/** The code in OpenAI's error object of a 422 (the list itself has no code). */
export const VALIDATION_CODE = "validation_error";
const VALIDATION_SUMMARY = text("요청 값이 올바르지 않습니다.", "The request has invalid values.");

export function validationBody(issues: ValidationIssue[], lang: Lang = "ko"): ValidationErrorBody {
  const detail = issues.map((i) => ({ loc: i.loc, msg: lang === "en" ? (i.en ?? i.msg) : i.msg, type: i.type }));
  const shown = detail.slice(0, 3).map((i) => `${i.loc.join(".")}: ${i.msg}${/[.!?]$/.test(i.msg) ? "" : "."}`);
  if (detail.length > 3) shown.push(lang === "en" ? `(${detail.length - 3} more)` : `(외 ${detail.length - 3}건)`);
  const message = `${VALIDATION_SUMMARY[lang]} ${shown.join(" ")}`;
  const error = {
    message,
    type: "invalid_request_error",
    code: VALIDATION_CODE,
    param: detail[0] ? paramOf(detail[0].loc) : null,
  };
  return { detail, error };
}

export function validationResponse(issues: ValidationIssue[], lang: Lang = "ko"): Response {
  return new Response(JSON.stringify(validationBody(issues, lang)), { status: 422, headers: JSON_HEADERS });
}

/**
 * A failure in Anthropic's envelope, so the Anthropic SDK raises its own error classes: the
 * status, headers, message and code the OpenAI dialect would send, the type from the status
 * (a structured error's `retryable` makes a 503 `overloaded_error`).
 */
function anthropicErrorResponse(failure: Failure, requestId: string, lang: Lang): Response {
  if (Array.isArray(failure)) {
    const { error } = validationBody(failure, lang);
    const body = anthropicErrorBody(
      anthropicErrorType(422, undefined, error.code),
      error.message,
      error.code,
      requestId,
    );
    return new Response(JSON.stringify(body), { status: 422, headers: JSON_HEADERS });
  }
  const retryable = failure.shape === "envelope" ? undefined : failure.extras.retryable;
  const type = anthropicErrorType(failure.status, retryable, failure.errorCode);
  const body = anthropicErrorBody(type, failure.messageIn(lang), failure.errorCode, requestId);
  return new Response(JSON.stringify(body), { status: failure.status, headers: errorHeaders(failure) });
}

const depth = (path: unknown) =>
  String(path ?? "")
    .split("/")
    .filter(Boolean).length;

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

const DIGITS = /^\d+$/;

/** Elysia's TypeBox failures → the 422 list with `loc` such as ["body","duration_seconds"]. */
export function issuesFromElysia(e: ValidationError): ValidationIssue[] {
  const seen = new Set<string>();
  const where = e.type === "property" ? "query" : e.type;
  return e.all.flatMap(refineUnion).flatMap((v: any) => {
    const loc: (string | number)[] = [
      where,
      ...String(v.path ?? "")
        .split("/")
        .filter(Boolean)
        .map((p: string) => (DIGITS.test(p) ? Number(p) : p)),
    ];
    const key = JSON.stringify(loc);
    if (seen.has(key)) return [];
    seen.add(key);
    const missing = v.value === undefined;
    const en = missing ? "Field required" : String(v.message ?? v.summary ?? "invalid");
    return [
      {
        loc,
        msg: missing ? "필수 항목입니다." : koreanIssueMessage(v, en),
        en,
        type: missing ? "missing" : (ValueErrorType[v.type] ?? String(v.type)),
      },
    ];
  });
}

const NOT_JSON = text("요청 본문이 올바른 JSON이 아닙니다.", "The request body is not valid JSON.");
const NO_ROUTE = text("요청한 경로를 찾을 수 없습니다.", "The requested path was not found.");

/** What went wrong, to be rendered in a route's dialect: a gateway error or a validation failure's issues. */
export type Failure = GatewayError | ValidationIssue[];

/**
 * Renders whatever a handler threw, once, in the dialect its route declares (./error-dialect.ts).
 * `code` is Elysia's error code string when it has one.
 */
export function renderError(
  code: unknown,
  error: unknown,
  requestId: string,
  lang: Lang = "ko",
  dialect: ErrorDialect = "openai",
): Response {
  const failure = failureOf(code, error, requestId);
  if (dialect === "anthropic") return anthropicErrorResponse(failure, requestId, lang);
  return Array.isArray(failure) ? validationResponse(failure, lang) : gatewayErrorResponse(failure, {}, lang);
}

/** Whatever a handler threw, as the failure it means; anything unknown is logged and becomes a 500. */
function failureOf(code: unknown, error: unknown, requestId: string): Failure {
  if (error instanceof GatewayError) return error;
  if (error instanceof ValidationFailure) return error.issues;
  if (error instanceof ValidationError || code === "VALIDATION") return issuesFromElysia(error as ValidationError);
  // Elysia wraps whatever the parse stage throws in a ParseError: the body gate's 401/403, a
  // database outage while it looks the caller up, the body reader's 400/408/413. Rendered
  // as themselves.
  if (code === "PARSE") {
    const cause = (error as { cause?: unknown })?.cause;
    if (cause != null && !(cause instanceof SyntaxError)) return failureOf(undefined, cause, requestId);
    return new GatewayError("invalid_request", NOT_JSON);
  }
  if (code === "NOT_FOUND") return new GatewayError("not_found", NO_ROUTE);
  if (code === "INVALID_COOKIE_SIGNATURE" || code === "INVALID_FILE_TYPE") return new GatewayError("invalid_request");
  if (isUnstorableValue(error))
    return new GatewayError(
      "invalid_request",
      text(
        "저장할 수 없는 값(NUL 문자, 범위를 벗어난 날짜나 숫자 등)이 포함되어 있습니다.",
        "The request contains a value that cannot be stored (a NUL character, an out-of-range date or number, …).",
      ),
    );
  // The database is down or too slow: a transient 503 the client may retry, never a 500.
  if (isDatabaseUnavailable(error)) {
    log.warn("database unavailable", {
      request_id: requestId,
      code: (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code,
    });
    return new GatewayError(
      "service_unavailable",
      text(
        "데이터베이스에 일시적으로 연결할 수 없습니다. 잠시 후 다시 시도하세요.",
        "The database is temporarily unreachable. Try again shortly.",
      ),
    );
  }
  // Elysia writes a value that failed validation into its message with `${value}`, which throws
  // (JSC: "No default value") when a JSON body puts an object with its own non-function
  // toString / valueOf where a scalar belongs: the body failed validation all the same.
  if (error instanceof TypeError && error.message === "No default value")
    return [{ loc: ["body"], msg: "값이 올바르지 않습니다.", en: "Invalid value", type: "invalid" }];
  log.error("unhandled error", { request_id: requestId, error });
  return new GatewayError("internal_error");
}
