/**
 * The provider port: the small contract every upstream adapter implements. Video has its
 * own contract; embeddings are optional.
 */
import type { CallWarning } from "../upstream/warnings";
import type { ChatRequest, ChatResult, StreamEvent } from "./types";
import type { RawRestorer, RawScanner } from "./relay";

export type Protocol = "openai" | "anthropic" | "gemini";

/** A client's dialect a stream may be relayed in: a chat protocol, or OpenAI's Responses API. */
export type RelayDialect = Protocol | "responses";

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
  /** W3C trace context of this attempt's span, sent as the `traceparent` header (tracing on). */
  traceparent?: string;
  /**
   * Receives the settings of the request the adapter could not send to this vendor, once it
   * built the request and before it sends it (nothing when every setting was sent).
   */
  warn?: (warnings: CallWarning[]) => void;
}

export interface ChatProvider {
  readonly protocol: Protocol;
  chat(req: ChatRequest, ctx: CallContext): Promise<ChatResult>;
  /**
   * Opens a stream. Resolves once the upstream accepted the request (so a failure before the
   * first byte can still be retried); the iterable then yields typed events and throws an
   * UpstreamError (../upstream/error.ts) of kind `truncated` if the stream ends without its
   * terminal marker.
   */
  chatStream(req: ChatRequest, ctx: CallContext): Promise<AsyncIterable<StreamEvent>>;
  /**
   * Same-dialect passthrough (OpenAI-compatible and Anthropic upstreams): the raw SSE body
   * bytes, relayed byte for byte to a client of the same dialect. Resolves after a 200.
   */
  openRawStream?(req: ChatRequest, ctx: CallContext): Promise<ReadableStream<Uint8Array>>;
  /** A scanner for one raw stream's events (relay.ts): the same usage and finish-reason mapping as `chat`. */
  rawScanner?(req: ChatRequest): RawScanner;
  /**
   * A restorer of a masked call's raw stream (relay.ts): with it, a masked call is relayed as
   * well, its placeholders restored in the events; without it, a masked stream is typed.
   */
  rawRestorer?(mapping: ReadonlyMap<string, string>, req: ChatRequest): RawRestorer;
  /** The provider's own count of the request's input tokens, where it offers one free (Anthropic). */
  countTokens?(req: ChatRequest, ctx: CallContext): Promise<number>;
}

/** One text to embed, or (OpenAI protocol only) its token ids. */
export type EmbeddingInput = string | number[];

export interface EmbeddingOptions {
  /** Vector size to ask for (models with shortened embeddings). */
  dimensions?: number;
  /** The end user's id, forwarded where the protocol takes one. */
  user?: string;
}

/** How the client wants its vectors: JSON numbers, or base64 of float32 little-endian bytes. */
export type EmbeddingEncoding = "float" | "base64";

/**
 * Where an adapter writes the vectors as it reads them, each as the JSON value the client's
 * answer carries (`[0.1,-0.2,...]` for float, `"AAAA..."` for base64): the answer never sits in
 * memory whole (issue 28, #2).
 */
export interface EmbeddingSink {
  readonly encoding: EmbeddingEncoding;
  /** More bytes of the vector being written. */
  write(bytes: Uint8Array): void;
  /** The vector being written is complete; returns its number in arrival order. */
  end(): number;
}

/** The most bytes one vector may take: 32 a value (floats as text), up to 4,096 values when the size is unknown. */
export const maxVectorBytes = (dimensions?: number) => (dimensions ?? 4096) * 32 + 1024;

export interface EmbeddingStreamResult {
  /** For input i, the arrival number (EmbeddingSink.end) of its vector. */
  order: number[];
  /** The provider's count; null when its protocol reports none (Gemini). */
  promptTokens: number | null;
}

export interface EmbeddingResult {
  vectors: number[][];
  /** The provider's count; null when its protocol reports none (Gemini). */
  promptTokens: number | null;
}

export interface EmbeddingProvider {
  readonly protocol: Protocol;
  /** Whether inputs may be token ids rather than text. */
  readonly tokenInputs: boolean;
  /** The vectors as numbers (a few small inputs: the semantic cache). */
  embed(input: EmbeddingInput[], model: string, ctx: CallContext, opts?: EmbeddingOptions): Promise<EmbeddingResult>;
  /** The vectors written to `sink` in its encoding as the answer arrives; memory does not grow with it. */
  embedTo(
    input: EmbeddingInput[],
    model: string,
    ctx: CallContext,
    opts: EmbeddingOptions,
    sink: EmbeddingSink,
  ): Promise<EmbeddingStreamResult>;
}
