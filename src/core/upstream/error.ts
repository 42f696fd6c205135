/**
 * What went wrong with a call to a vendor (chat, embeddings, web search, video), in one type
 * every adapter throws and every use case reads: its kind decides retries and fallback, its
 * reason what the client is told (words.ts), its status and detail what the operator logs.
 */

/** How an upstream failure is classified; retries and fallback are decided from this. */
export type UpstreamErrorKind =
  | "transient" // 5xx, 529, connection errors, an answer we cannot read: retry, then fall back
  | "timeout" // first-byte or idle deadline passed: transient
  | "rate_limited" // 429 (not quota): try another provider; Retry-After kept
  | "rejected" // 4xx: the request is wrong for this upstream; no retry
  | "truncated"; // a stream ended without its terminal marker

/**
 * What an upstream failure means, as far as the vendor's error says (vendor errors.ts files
 * set it where they know better than the status): the client is told this, in our words,
 * never the vendor's body (see words.ts).
 */
export type UpstreamReason =
  | "invalid_request"
  | "context_length"
  | "content_policy"
  | "auth"
  | "quota"
  | "not_found"
  | "too_large"
  | "rate_limited"
  | "overloaded"
  | "server_error"
  | "timeout"
  | "truncated"
  | "connection"
  | "bad_answer";

export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamErrorKind,
    /** For logs: may quote the vendor's own message. Clients get words.ts instead. */
    message: string,
    readonly status?: number,
    /** The vendor's error body (parsed JSON when possible): for the operator's log only. */
    readonly detail?: unknown,
    readonly retryAfterMs?: number,
    readonly reason?: UpstreamReason,
  ) {
    super(message);
  }
  get retryable(): boolean {
    return this.kind === "transient" || this.kind === "timeout" || this.kind === "truncated";
  }
}

/**
 * Any failure of an upstream step as an UpstreamError: a thrown UpstreamError as it is, anything
 * else (a bug in an adapter, a failure the adapter did not classify) as transient.
 */
export function asUpstreamError(e: unknown): UpstreamError {
  return e instanceof UpstreamError ? e : new UpstreamError("transient", e instanceof Error ? e.message : String(e));
}
