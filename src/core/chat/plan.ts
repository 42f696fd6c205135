/** The shapes a chat call passes through: caller, options, the core's plan of it, outcome, cost. */
import type { KeyPrincipal } from "../auth/principal";
import type { Lang } from "../errors";
import type { CallWarning } from "../upstream/warnings";
import type { PolicyExecution } from "../routing/execution";
import type { Candidate, ProviderPrefs } from "../routing/candidates";
import type { ChatRequest, ChatResult, StreamEvent, ToolCall, Usage } from "../model/types";
import type { PromptSize } from "./estimate";
import type { AttemptRecord, CallTrace } from "../model/trace";
import type { Continuation } from "./continuation";
import type { SearchResult, UrlCitation, WebPluginOptions } from "./web-search";
import type { RelayDialect } from "../model/provider";
import type { RawRestorer, RawScanner } from "../model/relay";
import type { Cost } from "../billing/cost";
import type { PendingHold } from "./hold";

export interface ChatCaller {
  /** The id the call is held, charged and recorded under. */
  requestId: string;
  /**
   * The client named the call (X-Request-Id): its hold goes to the database before the cache,
   * a lease or a provider is asked, so a reused id is refused (409) before anything answers.
   */
  clientChosen?: boolean;
  principal: KeyPrincipal;
  /** The calling app (X-Title / HTTP-Referer), for statistics. */
  app: string | null;
  signal?: AbortSignal;
  /** Observes the call (the request's log line and trace); absent, nothing is observed. */
  trace?: CallTrace;
  /** The language of a stream's failure event (Accept-Language); Korean when absent. */
  lang?: Lang;
  /** The client API the call came in by (recorded on its usage event). */
  api?: ClientApi;
}

export type ClientApi = "chat" | "responses" | "messages";

export interface ChatOptions {
  model: string;
  request: Omit<ChatRequest, "model">;
  prefs?: ProviderPrefs;
  traceId?: string;
  reasoningMode?: "standard" | "pro";
  /** The web plugin's options, when the request carries it. */
  web?: WebPluginOptions | null;
  stream: boolean;
  /**
   * `reasoning_effort` is a hint (Anthropic's `thinking`, which clients such as Claude Code send
   * whatever the model): left out for an offering that does not reason, rather than refused there.
   */
  reasoningHint?: boolean;
  /**
   * The client's dialect, for a stream: an upstream speaking it (and able to) sends its raw SSE
   * bytes for relaying, unless PII must be restored; absent, the stream is typed events always.
   */
  relay?: RelayDialect;
}

/** The state of one call inside the core, from its hold to its settle; it never leaves the core. */
export interface ChatPlan {
  caller: ChatCaller;
  requested: string;
  candidates: Candidate[];
  /** The request as the client meant it (for the cache). */
  request: Omit<ChatRequest, "model">;
  /** The request as it leaves for the provider (PII masked). */
  upstream: Omit<ChatRequest, "model">;
  mapping: Map<string, string> | null;
  /** The whole hold (model and web search): no charge of the call exceeds it. */
  holdMicro: bigint;
  holdTokens: number;
  /** What the request sends, as the hold counted it (the estimate of a stream the client left). */
  prompt: PromptSize;
  /** A Messages client's own body as the hold measured it: what an Anthropic upstream was sent. */
  native?: PromptSize;
  byok: boolean;
  cacheMode: "off" | "exact" | "semantic";
  startedAt: number;
  /** A routing-policy call: how it runs (null for ordinary models). */
  policy: PolicyExecution | null;
  /** When the answering stream opened, for latency measurement. */
  opened?: { at: number; ttftMs: number };
  /** The call asked for a stream (set as it opens), and a failure's code: for the usage record. */
  streamed?: boolean;
  errorCode?: string;
  /** The client left an open stream: the upstream is cut when this fires (AnswerStream.leave). */
  drain?: ReturnType<typeof setTimeout>;
  /** Set once the stream's end is being billed. */
  ended?: boolean;
  /** The process is stopping and ended this open stream itself (AnswerStream.cut, src/boot/shutdown.ts). */
  cut?: boolean;
  /** The web plugin's sources and their price (charged with the call). */
  search: { results: SearchResult[]; priceMicro: bigint } | null;
  /**
   * A hold still on its way while the upstream call starts (ChatService.prepare; raced with
   * the call by raceHold, hold.ts). Null when the hold was awaited first.
   */
  pendingHold: PendingHold | null;
  /** See ChatOptions.reasoningHint. */
  reasoningHint?: boolean;
  /** Hedged requests on (the key's setting, unless the request turned it off; hedge.ts). */
  hedge?: boolean;
  /**
   * A hedge race's cancelled loser whose upstream request was in flight: its input as the hold
   * estimates it, at its price, charged with the answer (docs/hedging.md, "Money").
   */
  hedgeLoser?: { provider: string; micro: bigint };
  /** The gateway's own warnings for this call, whichever provider answers (a hedge ignored). */
  notes?: CallWarning[];
  /** Stream continuation asked for (`provider.continue_on_failure`): the parts of the answer (continuation.ts). */
  continuation?: Continuation;
  /** What each provider's request left out, by provider id (warnings.ts). */
  warnings?: Map<string, CallWarning[]>;
  /** Every upstream attempt so far (trail.ts), kept with the usage event when there was more than one. */
  attempts?: AttemptRecord[];
}

export interface ChatOutcome {
  result: ChatResult;
  model: string;
  provider: string | null;
  cost: Cost;
  cached: boolean;
  /** Web plugin sources as `url_citation` annotations. */
  citations?: UrlCitation[];
}

export type Prepared = { kind: "cached"; outcome: ChatOutcome } | { kind: "plan"; plan: ChatPlan };

/**
 * How a stream that reached the client ended, for its bill: `complete` (the upstream finished
 * and the client read it), `failed` (the upstream broke off: only what was received is billed)
 * or `client_left` (the client hung up: the usage if it was still read, else the input as the
 * hold estimated it plus the output received).
 */
export interface StreamEnd {
  ending: "complete" | "failed" | "client_left";
  usage: Usage | null;
  /** Everything the upstream sent (delivered, or read after the client left). */
  text: string;
  toolCalls: readonly ToolCall[];
  /** The finished answer of a complete stream (for the response cache). */
  result?: ChatResult;
}

/** `attempt`: the upstream attempt that opened the stream (traced calls only). */
export type OpenedStream =
  | {
      kind: "raw";
      candidate: Candidate;
      body: ReadableStream<Uint8Array>;
      scanner: RawScanner;
      /** A masked call's: puts the values back into the relayed events. */
      restorer?: RawRestorer;
      abort: AbortController;
      attempt?: AttemptRecord;
    }
  | {
      kind: "typed";
      candidate: Candidate;
      events: AsyncIterable<StreamEvent>;
      abort: AbortController;
      attempt?: AttemptRecord;
    };
