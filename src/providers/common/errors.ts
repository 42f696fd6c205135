/**
 * The one normalisation of a vendor failure into an UpstreamError, for every adapter (chat,
 * embeddings, web search, video): an HTTP error answer (status, retry hints, the vendor's
 * envelope), a transport failure (deadline, connection, a body that broke off) and an answer
 * we cannot read. Vendor errors.ts files add only what is vendor-specific (quota, RetryInfo,
 * envelopes) through {@link VendorErrorReading}.
 */
import { UpstreamError, type UpstreamErrorKind, type UpstreamReason } from "../../core/upstream/error";
import { DeadlineError } from "../../lib/http-deadline";

/**
 * The default kind for an HTTP error status:
 * 5xx and 529 → transient; 408 (request timeout) and 409 (conflict/lock) → transient, as the
 * vendors' own SDKs retry them; 429 → rate_limited; any other 4xx → rejected.
 */
function classifyHttpStatus(status: number): UpstreamErrorKind {
  if (status >= 500) return "transient";
  if (status === 429) return "rate_limited";
  if (status === 408 || status === 409) return "transient";
  return "rejected";
}

/**
 * Reads a retry hint from response headers: `retry-after-ms` (milliseconds, OpenAI SDK
 * convention) wins over `retry-after` (seconds, or an HTTP date). Undefined when absent or
 * unparsable.
 */
function parseRetryAfterHeaders(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get("retry-after-ms");
  if (ms !== null) {
    const v = Number.parseFloat(ms);
    if (Number.isFinite(v) && v >= 0) return Math.round(v);
  }
  const ra = headers.get("retry-after");
  if (ra !== null) {
    const trimmed = ra.trim();
    if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number.parseFloat(trimmed) * 1000);
    const date = Date.parse(trimmed);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  return undefined;
}

/** Parses a protobuf-JSON duration such as `"34.4s"` or `"0.5s"` into milliseconds. */
export function parseDurationMs(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const m = /^(\d+(?:\.\d+)?)s$/.exec(value.trim());
  return m ? Math.round(Number.parseFloat(m[1]!) * 1000) : undefined;
}

/** What a vendor's error envelope says beyond the shared status rule; each part optional. */
export interface VendorErrorReading {
  /** The log's message from the parsed body (the vendor's own words); `upstream answered <status>` without. */
  message?(detail: unknown, status: number): string | undefined;
  /** What the failure means, where the envelope says more than the status. */
  reason?(detail: unknown): UpstreamReason | undefined;
  /** A kind other than the status says (an exhausted account answered as 429 is `rejected`). */
  kind?(status: number, detail: unknown): UpstreamErrorKind | undefined;
  /** A retry hint in the body (Gemini's RetryInfo), read before the Retry-After headers. */
  retryAfterMs?(detail: unknown): number | undefined;
}

/**
 * A vendor's non-2xx answer as an UpstreamError: the kind by {@link classifyHttpStatus} unless
 * the vendor says otherwise, a retry hint for what may be retried (rate limits, transient
 * failures), the parsed body kept as `detail` for the operator.
 */
export function upstreamHttpError(
  status: number,
  headers: Headers,
  bodyText: string,
  vendor: VendorErrorReading = {},
): UpstreamError {
  const detail = parseErrorBody(bodyText);
  const kind = vendor.kind?.(status, detail) ?? classifyHttpStatus(status);
  const retryAfterMs =
    kind === "rate_limited" || kind === "transient"
      ? (vendor.retryAfterMs?.(detail) ?? parseRetryAfterHeaders(headers))
      : undefined;
  const message = (detail !== undefined && vendor.message?.(detail, status)) || `upstream answered ${status}`;
  return new UpstreamError(kind, message, status, detail, retryAfterMs, vendor.reason?.(detail));
}

/** A 2xx answer that is not what the vendor documents (not JSON, or the wrong shape): transient, so retried and fallen back. */
export function badAnswer(message: string, status: number, body: unknown): UpstreamError {
  return new UpstreamError("transient", message, status, body, undefined, "bad_answer");
}

/** Parses an error body as JSON when it is JSON; otherwise returns the text (or undefined if empty). */
function parseErrorBody(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** True when the caller's own signal caused this error (client gone): rethrown untouched. */
function isCallerAbort(err: unknown, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true && (err === signal.reason || (err instanceof Error && err.name === "AbortError"));
}

/**
 * Maps a failure of the transport (not an HTTP error status) to an UpstreamError.
 * `phase` says whether the response had already started: a connection lost before the
 * response is `transient`; a body that breaks off after a 200 is `truncated`.
 * A caller abort is returned unchanged (it is not an upstream failure).
 */
export function toTransportError(err: unknown, phase: "connect" | "body", signal?: AbortSignal): unknown {
  if (err instanceof UpstreamError) return err;
  if (isCallerAbort(err, signal)) return err;
  if (err instanceof DeadlineError) {
    return new UpstreamError("timeout", err.message, undefined, { phase: err.phase, ms: err.ms });
  }
  const message = err instanceof Error ? err.message : String(err);
  if (phase === "connect") return new UpstreamError("transient", `upstream connection failed: ${message}`);
  return new UpstreamError("truncated", `upstream stream broke off: ${message}`);
}

/** The stream ended without its terminal marker. */
export function truncatedError(what: string): UpstreamError {
  return new UpstreamError("truncated", `upstream stream ended without ${what}`);
}
