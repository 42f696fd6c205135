/**
 * The provider port: the small contract every upstream adapter implements. Video has its
 * own contract; embeddings are optional.
 */
import type { ChatRequest, ChatResult, StreamEvent } from "./types";

export type Protocol = "openai" | "anthropic" | "gemini";

/** Everything an adapter needs for one upstream call. */
export interface CallContext {
  providerId: string;
  baseUrl: string;
  apiKey: string;
  /** Aborted when the client goes away or the gateway gives up. */
  signal?: AbortSignal;
  /** Max wait for the response headers / first byte. */
  firstByteTimeoutMs: number;
  /** Max silence between two stream chunks. */
  idleTimeoutMs: number;
  /** Whether `service_tier` may be forwarded (only one provider family takes it). */
  forwardServiceTier?: boolean;
}

export interface ChatProvider {
  readonly protocol: Protocol;
  chat(req: ChatRequest, ctx: CallContext): Promise<ChatResult>;
  /**
   * Opens a stream. Resolves once the upstream accepted the request (so a failure before the
   * first byte can still be retried); the iterable then yields typed events and throws an
   * UpstreamError of kind `truncated` if the stream ends without its terminal marker.
   */
  chatStream(req: ChatRequest, ctx: CallContext): Promise<AsyncIterable<StreamEvent>>;
  /**
   * Same-dialect passthrough (OpenAI-compatible upstreams only): the raw SSE body bytes, to be
   * relayed byte for byte. Resolves after the upstream answered 200.
   */
  openRawStream?(req: ChatRequest, ctx: CallContext): Promise<ReadableStream<Uint8Array>>;
}

export interface EmbeddingProvider {
  embed(input: string[], model: string, ctx: CallContext): Promise<{ vectors: number[][]; promptTokens: number }>;
}

/** How an upstream failure is classified; the chat pipeline decides retries from this. */
export type UpstreamErrorKind =
  | "transient" // 5xx, 529, connection errors: retry, then fall back
  | "timeout" // first-byte or idle deadline passed: transient
  | "rate_limited" // 429 (not quota): try another provider; Retry-After kept
  | "rejected" // 4xx: the request is wrong for this upstream; no retry
  | "truncated"; // a stream ended without its terminal marker

export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamErrorKind,
    message: string,
    readonly status?: number,
    /** The vendor's error body (parsed JSON when possible). */
    readonly detail?: unknown,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
  get retryable(): boolean {
    return this.kind === "transient" || this.kind === "timeout" || this.kind === "truncated";
  }
}
