/**
 * The raw-relay port of a same-dialect stream (an OpenAI-compatible upstream to a chat client,
 * an Anthropic upstream to a Messages client): the upstream's SSE events are handed on byte for
 * byte as they arrive, never re-encoded. The provider's scanner (providers/<vendor>/relay.ts)
 * says what each event is (forwarded, held back, the end of the answer, or the upstream's
 * failure) and keeps what it learned (usage, finish reason, the text when it is asked for)
 * with the same mappings as its non-streaming parser; the core reads the stream with it
 * (chat/relay-events.ts) and bills it (chat/answer-stream.ts).
 */
import type { UpstreamError } from "../upstream/error";
import type { ChatResult, Usage } from "./types";

/**
 * `forward`: relay it as it came; `held`: not relayed (read for what it says; the surface
 * writes its own version, with the cost, from RawTail); `end`: the answer is complete;
 * `failed`: the upstream reported an error (RawScanner.failure).
 */
export type RawVerdict = "forward" | "held" | "end" | "failed";

/** What the surface needs of the upstream's last words to write the stream's final frames. */
export interface RawTail {
  /** The held-back event that closes the answer (OpenAI's usage chunk, Anthropic's `message_delta`), parsed; null when none came. */
  closing: Record<string, any> | null;
  /** The upstream's own `id` and `created`, repeated on the frames the gateway adds. */
  id?: string;
  created?: number;
  /** The terminal event's bytes, relayed last as they came; null when the dialect's terminator is the gateway's own (`[DONE]`). */
  terminal: Uint8Array | null;
  /** The vendor's error type of an in-stream error event. */
  errorType?: string;
  /** The last `sequence_number` relayed (OpenAI's Responses events), for the events the gateway adds. */
  sequence?: number;
}

/** One stream's scanner; it keeps the state of that stream alone. */
export interface RawScanner {
  /** Looks at one complete SSE event (a view of its bytes: scanned, never copied). */
  scan(event: Uint8Array): RawVerdict;
  /** The upstream's own failure, once `scan` said `failed`. */
  readonly failure: UpstreamError | null;
  /** What an end without the terminal event lacked, for the log (`data: [DONE]`, `message_stop`). */
  readonly terminator: string;
  /** The usage the upstream reported, mapped as its non-streaming answer's is; null when none came. */
  usage(): Usage | null;
  /** The answer the forwarded events carried (text, tool calls, finish reason), rebuilt; asked for only when needed. */
  result(): ChatResult;
  tail(): RawTail;
}

/**
 * Puts a masked call's values back into its relayed stream (providers/<vendor>/relay-restore.ts):
 * each upstream event in, the events to relay out in its place (the same bytes when it carries
 * no placeholder; the text of a delta rewritten, or held back until the rest of a placeholder
 * split across deltas arrives; none when all of it is held).
 */
export interface RawRestorer {
  restore(event: Uint8Array): Uint8Array[];
}
