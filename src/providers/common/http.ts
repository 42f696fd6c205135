/**
 * The one place adapters call `fetch`: deadlines, caller abort, status check, and the
 * translation of every failure into an UpstreamError (or the caller's abort reason).
 */
import type { CallContext } from "../../core/model/provider";
import { UpstreamError } from "../../core/upstream/error";
import { fetchAllWithDeadlines, fetchWithDeadlines, readAllBytes } from "../../lib/http-deadline";
import { badAnswer, toTransportError } from "./errors";

/** Turns a non-2xx response into the vendor's UpstreamError. */
export type ErrorClassifier = (status: number, headers: Headers, bodyText: string) => UpstreamError;

export interface OpenedUpstream {
  response: Response;
  /** The body under the idle deadline; its errors are UpstreamErrors (or the caller's abort reason). */
  body: ReadableStream<Uint8Array>;
}

const utf8 = new TextDecoder();

/** The request headers: JSON, the adapter's own, and the attempt's trace context when traced. */
function withTrace(headers: Record<string, string>, ctx: CallContext): Record<string, string> {
  return ctx.traceparent
    ? { "content-type": "application/json", ...headers, traceparent: ctx.traceparent }
    : { "content-type": "application/json", ...headers };
}

/**
 * POSTs JSON to the upstream and resolves once it answered 2xx (headers in). A non-2xx answer
 * is read in full and thrown as the classifier's UpstreamError.
 */
export async function postUpstream(
  url: string,
  headers: Record<string, string>,
  payload: unknown,
  ctx: CallContext,
  classify: ErrorClassifier,
): Promise<OpenedUpstream> {
  let opened;
  try {
    opened = await fetchWithDeadlines(
      url,
      { method: "POST", headers: withTrace(headers, ctx), body: JSON.stringify(payload) },
      {
        signal: ctx.signal,
        firstByteTimeoutMs: ctx.firstByteTimeoutMs,
        idleTimeoutMs: ctx.idleTimeoutMs,
        mapBodyError: (err) => toTransportError(err, "body", ctx.signal),
      },
    );
  } catch (err) {
    throw toTransportError(err, "connect", ctx.signal);
  }
  const { response, body } = opened;
  if (response.ok) return { response, body };

  let text = "";
  try {
    text = utf8.decode(await readAllBytes(body));
  } catch (err) {
    // The error body itself broke off: still classify by status, but keep a caller abort.
    const mapped = toTransportError(err, "body", ctx.signal);
    if (!(mapped instanceof UpstreamError)) throw mapped;
  }
  throw classify(response.status, response.headers, text);
}

/**
 * POSTs JSON and reads the whole JSON answer (non-streaming calls), under the same deadlines;
 * a non-2xx answer is thrown as the classifier's UpstreamError.
 */
export async function postUpstreamJson(
  url: string,
  headers: Record<string, string>,
  payload: unknown,
  ctx: CallContext,
  classify: ErrorClassifier,
): Promise<unknown> {
  let got;
  try {
    got = await fetchAllWithDeadlines(
      url,
      { method: "POST", headers: withTrace(headers, ctx), body: JSON.stringify(payload) },
      {
        signal: ctx.signal,
        firstByteTimeoutMs: ctx.firstByteTimeoutMs,
        idleTimeoutMs: ctx.idleTimeoutMs,
        mapBodyError: toBodyError,
      },
    );
  } catch (err) {
    if (!(err instanceof BodyError)) throw toTransportError(err, "connect", ctx.signal);
    const mapped = toTransportError(err.cause, "body", ctx.signal);
    // An error answer whose body broke off is still classified by its status (unless the caller left).
    if (err.response && !err.response.ok && mapped instanceof UpstreamError)
      throw classify(err.response.status, err.response.headers, "");
    throw mapped;
  }
  const text = utf8.decode(got.bytes);
  if (!got.response.ok) throw classify(got.response.status, got.response.headers, text);
  return parseJsonBody(text);
}

/** Module-level, so a call makes no closure for it. */
function toBodyError(err: unknown, res?: Response): BodyError {
  return new BodyError(err, res);
}

/** A failure while reading the body (as opposed to connecting): classified as such. */
class BodyError {
  constructor(
    readonly cause: unknown,
    readonly response?: Response,
  ) {}
}

function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw badAnswer("upstream sent a body that is not JSON", 200, text.slice(0, 1000));
  }
}

/** Parses one SSE data payload; a payload that is not JSON means the stream broke off mid-event. */
export function parseStreamJson(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw new UpstreamError("truncated", "upstream stream event is not valid JSON", 200, data.slice(0, 1000));
  }
}

const TRAILING_SLASHES = /\/+$/;

/** Joins a base URL and a path without doubling or dropping the slash. */
export function joinUrl(baseUrl: string, path: string): string {
  return (baseUrl.endsWith("/") ? baseUrl.replace(TRAILING_SLASHES, "") : baseUrl) + path;
}
