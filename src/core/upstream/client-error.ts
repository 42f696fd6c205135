/**
 * An upstream failure as the client sees it, for every caller of a vendor (chat and
 * embeddings, web search, video submit): a rate limit is 429 `upstream_rate_limited` with
 * Retry-After, a refusal of the request 502 `upstream_request_rejected` with the provider's
 * status and our words for its reason, anything else 502 `upstream_unavailable` (retryable).
 * A stream that already reached its client ends with words.ts's `failureWords` instead.
 */
import { GatewayError, type Text } from "../errors";
import type { UpstreamError } from "./error";
import { upstreamSummary } from "./words";

/** Messages of a caller that words the failure its own way (web search); the code's table message otherwise. */
export interface FailureMessages {
  rateLimited?: Text;
  rejected?: Text;
  unavailable?: Text;
}

/** Whole seconds to wait, at least one (a missing hint: one second). */
export function retryAfterSeconds(ms: number | undefined): number {
  return Math.max(1, Math.ceil((ms ?? 1000) / 1000));
}

export function upstreamRateLimited(
  retryAfterMs: number | undefined,
  providers: unknown[],
  message?: Text,
): GatewayError {
  return new GatewayError("upstream_rate_limited", message, { retryAfter: retryAfterSeconds(retryAfterMs), providers });
}

export function upstreamRejected(err: UpstreamError, providers: unknown[], message?: Text): GatewayError {
  return new GatewayError("upstream_request_rejected", message, {
    retryable: false,
    upstream: upstreamSummary(err),
    providers,
  });
}

export function upstreamUnavailable(providers: unknown[], message?: Text): GatewayError {
  return new GatewayError("upstream_unavailable", message, { retryable: true, providers });
}

/** The client's error for the failure of one provider's call (`providers` names who was tried). */
export function upstreamClientError(
  err: UpstreamError,
  providers: unknown[],
  messages: FailureMessages = {},
): GatewayError {
  if (err.kind === "rate_limited") return upstreamRateLimited(err.retryAfterMs, providers, messages.rateLimited);
  if (err.kind === "rejected") return upstreamRejected(err, providers, messages.rejected);
  return upstreamUnavailable(providers, messages.unavailable);
}
