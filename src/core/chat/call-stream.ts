/**
 * What a chat call hands its client dialect (ChatService.run): a JSON answer, or a stream whose
 * events the surface encodes as they arrive and which ends in exactly one final event. The
 * stream's end (drain, truncation, settling once, partial billing, citations, a client that
 * left) is the core's (answer-stream.ts); a surface only writes frames.
 */
import type { ChatOutcome } from "./plan";
import type { Cost } from "../billing/cost";
import type { PartBill } from "./continuation-bill";
import type { RawTail } from "../model/relay";
import type { FinishReason, StreamEvent, ToolCall, Usage } from "../model/types";
import type { UrlCitation } from "./web-search";
import type { CallWarning } from "../upstream/warnings";
import type { ModelNotice } from "../catalog/lifecycle";

/**
 * One call's answer; `decision` is the `X-Policy-Decision` header value of a routing-policy call,
 * `warnings` the settings the answering provider could not take, `lifecycle` the answering
 * model's deprecation (null when it is active).
 */
export type ChatRun = ({ kind: "json"; outcome: ChatOutcome } | { kind: "stream"; stream: CallStream }) & {
  decision: string | null;
  warnings: readonly CallWarning[];
  lifecycle?: ModelNotice | null;
};

export type ToolCallEvent = Extract<StreamEvent, { type: "tool_call" }>;

/** Receives a stream's events as they arrive. */
export interface CallSink {
  /** Text of the answer (PII restored), never empty. */
  text(delta: string): void;
  /** One tool-call fragment; `call` is the accumulated call after it. */
  toolCall(ev: ToolCallEvent, call: ToolCall): void;
  /** One upstream SSE event, to relay byte for byte (only on a stream whose head says `relayed`). */
  raw?(event: Uint8Array): void;
}

export interface StreamHead {
  /** The catalog model and the provider answering. */
  model: string;
  provider: string | null;
  /** The events are the upstream's own SSE bytes, in the client's dialect (`CallSink.raw`). */
  relayed: boolean;
  /** A response-cache hit: nothing is billed, and its usage is known before the first event. */
  cached: boolean;
  usage: Usage | null;
}

/** The cost of one part of a continued stream (continuation.ts). */
export type PartCost = PartBill & { cost: Cost };

/**
 * The one final event of a stream, after the call was settled (or released): `complete` (the
 * answer and its bill), `failed` (the upstream broke off after the first byte: the client's
 * words, the text received, and the partial bill) or `left` (the client hung up: nothing more
 * reaches it). `relay` is what the upstream of a relayed stream said last (model/relay.ts).
 */
export type StreamFinal =
  | {
      kind: "complete";
      finish: FinishReason;
      usage: Usage;
      cost: Cost;
      citations?: UrlCitation[];
      parts?: PartCost[];
      relay?: RawTail;
    }
  | {
      kind: "failed";
      failure: string;
      /** Set when the gateway, not the upstream, ended the stream (`service_unavailable`: the process is stopping). */
      code?: "service_unavailable";
      partial: string;
      usage: Usage;
      cost: Cost;
      relay?: RawTail;
    }
  | { kind: "left"; usage: Usage; cost: Cost };

export interface CallStream {
  readonly head: StreamHead;
  /**
   * Reads the call to its end, handing each event to `sink` as it arrives (nothing is held
   * back but what the relay's scanner holds), settles it, and resolves with its final event.
   * `gone` says whether the client left. Never rejects.
   */
  read(sink: CallSink, gone: () => boolean): Promise<StreamFinal>;
  /** The client hung up: the upstream is read on for its usage for a while, then cut. */
  leave(): void;
}
