/** Anthropic error envelopes (HTTP and in-stream `event: error`) → UpstreamError. */
import { UpstreamError, type UpstreamErrorKind, type UpstreamReason } from "../../core/upstream/error";
import { upstreamHttpError } from "../common/errors";
import type { AnthropicWireErrorBody } from "./wire";

/** HTTP errors: the shared status rule (529 overloaded → transient, 429 → rate_limited with retry-after). */
export function classifyAnthropicError(status: number, headers: Headers, bodyText: string): UpstreamError {
  return upstreamHttpError(status, headers, bodyText, {
    message: (detail, s) => {
      const err = envelope(detail);
      return `upstream ${s}: ${err?.type ?? "error"}: ${err?.message ?? (typeof detail === "string" ? detail.slice(0, 200) : "")}`;
    },
    reason: (detail) => anthropicReason(envelope(detail)),
  });
}

function envelope(detail: unknown): { type?: string; message?: string } | undefined {
  return typeof detail === "object" && detail !== null ? (detail as AnthropicWireErrorBody).error : undefined;
}

/** What Anthropic's error type says beyond its status (the rest follows the status). */
function anthropicReason(e: { type?: string; message?: string } | undefined): UpstreamReason | undefined {
  switch (e?.type) {
    case "authentication_error":
    case "permission_error":
      return "auth";
    case "billing_error":
      return "quota";
    case "not_found_error":
      return "not_found";
    case "request_too_large":
      return "too_large";
    case "overloaded_error":
      return "overloaded";
    case "invalid_request_error":
      return /prompt is too long|context (window|length)/i.test(e.message ?? "") ? "context_length" : undefined;
    default:
      return undefined;
  }
}

/**
 * Error type → kind, for errors inside a 200 stream: overloaded_error, api_error and unknown
 * types → transient; rate_limit_error → rate_limited; request, auth, permission, not-found and
 * size errors → rejected.
 */
export function mapAnthropicErrorType(type: string | undefined): UpstreamErrorKind {
  switch (type) {
    case "rate_limit_error":
      return "rate_limited";
    case "invalid_request_error":
    case "authentication_error":
    case "permission_error":
    case "not_found_error":
    case "request_too_large":
    case "billing_error":
      return "rejected";
    default:
      return "transient";
  }
}

/** An `event: error` payload inside a 200 stream. */
export function classifyAnthropicStreamError(payload: { error?: { type?: string; message?: string } }): UpstreamError {
  const e = payload.error;
  return new UpstreamError(
    mapAnthropicErrorType(e?.type),
    `upstream stream error: ${e?.type ?? "error"}: ${e?.message ?? ""}`,
    undefined,
    payload,
    undefined,
    anthropicReason(e),
  );
}
