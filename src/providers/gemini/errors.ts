/** Gemini error envelopes (`{"error": {code, message, status, details}}`) → UpstreamError. */
import { UpstreamError, type UpstreamErrorKind, type UpstreamReason } from "../../core/upstream/error";
import { parseDurationMs, upstreamHttpError } from "../common/errors";
import type { GeminiWireErrorBody } from "./wire";

/**
 * HTTP errors by the shared status rule (note: an invalid API key is 400 INVALID_ARGUMENT,
 * hence rejected). A 429's retry hint is `RetryInfo.retryDelay` in the body (e.g. "34.4s"),
 * else the Retry-After headers.
 */
export function classifyGeminiError(status: number, headers: Headers, bodyText: string): UpstreamError {
  return upstreamHttpError(status, headers, bodyText, {
    message: (detail, s) => {
      const err = typeof detail === "object" && detail !== null ? (detail as GeminiWireErrorBody).error : undefined;
      return `upstream ${s}: ${err?.status ?? "error"}: ${err?.message ?? (typeof detail === "string" ? detail.slice(0, 200) : "")}`;
    },
    reason: geminiReason,
    retryAfterMs: geminiRetryDelayMs,
  });
}

/**
 * What Google's status and ErrorInfo say beyond the HTTP status: an invalid API key is a 400
 * INVALID_ARGUMENT whose ErrorInfo reason is API_KEY_INVALID (the rest follows the status).
 */
function geminiReason(detail: unknown): UpstreamReason | undefined {
  if (typeof detail !== "object" || detail === null) return undefined;
  const e = (detail as GeminiWireErrorBody).error;
  if (e?.status === "UNAUTHENTICATED" || e?.status === "PERMISSION_DENIED") return "auth";
  if ((e?.details ?? []).some((d) => d.reason === "API_KEY_INVALID")) return "auth";
  if (e?.status === "NOT_FOUND") return "not_found";
  if (e?.status === "INVALID_ARGUMENT" && /token count|maximum number of tokens|too long/i.test(e.message ?? ""))
    return "context_length";
  return undefined;
}

/** `RetryInfo.retryDelay` from an error body's details, in milliseconds. */
export function geminiRetryDelayMs(detail: unknown): number | undefined {
  if (typeof detail !== "object" || detail === null) return undefined;
  for (const d of (detail as GeminiWireErrorBody).error?.details ?? []) {
    if (d["@type"]?.endsWith("google.rpc.RetryInfo")) return parseDurationMs(d.retryDelay);
  }
  return undefined;
}

/** Status string → kind, for an `error` payload inside a 200 stream. */
function mapGeminiErrorStatus(status: string | undefined, code: number | undefined): UpstreamErrorKind {
  if (status === "RESOURCE_EXHAUSTED" || code === 429) return "rate_limited";
  if (status === "UNAVAILABLE" || status === "INTERNAL" || status === "DEADLINE_EXCEEDED" || status === "ABORTED")
    return "transient";
  if (code !== undefined && code >= 500) return "transient";
  if (status !== undefined || (code !== undefined && code >= 400)) return "rejected";
  return "transient";
}

export function classifyGeminiStreamError(payload: GeminiWireErrorBody): UpstreamError {
  const e = payload.error;
  const kind = mapGeminiErrorStatus(e?.status, e?.code);
  return new UpstreamError(
    kind,
    `upstream stream error: ${e?.status ?? "error"}: ${e?.message ?? ""}`,
    undefined,
    payload,
    kind === "rate_limited" ? geminiRetryDelayMs(payload) : undefined,
    geminiReason(payload),
  );
}
