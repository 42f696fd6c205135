/** What the chat service needs from the outside, injected by the composition root. */
import type { CatalogProvider, CatalogSnapshot } from "../catalog/types";
import type { LifecyclePort } from "../catalog/lifecycle";
import type { Ledger } from "../billing/ledger";
import type { Settlements } from "../billing/settlements";
import type { HoldKeeper } from "../billing/hold-keeper";
import type { ChatProvider, Protocol } from "../model/provider";
import type { UpstreamError } from "../upstream/error";
import type { ChatMessage, ChatRequest, ChatResult, NativeAnthropic, NativeResponses } from "../model/types";
import type { KeyPrincipal } from "../auth/principal";
import type { PolicyPort } from "../routing/policy-port";
import type { HealthGate } from "../health/tracker";
import type { HedgeOutcome } from "./hedge";

export interface UpstreamEndpoint {
  baseUrl: string;
  apiKey: string;
}

/** A stored answer from the response cache. */
export interface CachedAnswer {
  result: ChatResult;
  model: string;
  provider: string | null;
}

export interface ResponseCachePort {
  /** `stage`: `exact` reads the database only; `similar` embeds the prompt (a paid upstream call). */
  lookup(
    keyId: string,
    mode: "exact" | "semantic",
    model: string,
    req: Omit<ChatRequest, "model">,
    stage: "exact" | "similar",
  ): Promise<CachedAnswer | null>;
  store(
    keyId: string,
    mode: "exact" | "semantic",
    model: string,
    req: Omit<ChatRequest, "model">,
    answer: CachedAnswer,
  ): Promise<void>;
}

/** PII masking: masked messages and the placeholder mapping (null when nothing was found). */
export interface PiiPort {
  /**
   * The request masked: its messages and the client's own Anthropic body alike, with one
   * mapping; the very same request and a null mapping when nothing was found.
   */
  maskRequest<R extends { messages: ChatMessage[]; anthropic?: NativeAnthropic; responses?: NativeResponses }>(
    req: R,
  ): { request: R; mapping: Map<string, string> | null };
  unmask(text: string, mapping: Map<string, string>): string;
  /** A streaming restorer that holds back a possibly split placeholder. */
  streamUnmasker(mapping: Map<string, string>): { push(delta: string): string; flush(): string };
}

export interface ChatDeps {
  catalog(): CatalogSnapshot;
  ledger: Ledger;
  /** Runs settles behind the answer (src/core/billing/settlements.ts). */
  settlements: Settlements;
  providerFor(protocol: Protocol): ChatProvider;
  upstreamFor(provider: CatalogProvider, principal: KeyPrincipal): UpstreamEndpoint;
  /** Whether this deployment may call a provider (src/upstreams.ts); unset: every provider. */
  available?(provider: CatalogProvider): boolean;
  /** The day and the simulated offerings, for deprecation and retirement (catalog/lifecycle.ts); unset: the system clock, nothing simulated. */
  lifecycle?: LifecyclePort;
  fxMilli: bigint;
  holdTtlSeconds: number;
  retryBaseMs: number;
  firstByteTimeoutMs: number;
  idleTimeoutMs: number;
  keepaliveMs?: number;
  cache?: ResponseCachePort;
  pii?: PiiPort;
  policies?: PolicyPort;
  observe?(providerId: string, outcome: "ok" | UpstreamError["kind"] | "error", ms: number): void;
  latencyOf?(providerId: string): number | undefined;
  sleep?(ms: number): Promise<void>;
  /** The web plugin's search engine (unset: none is configured) and its price per search (micro-won). */
  search?: import("./web-search").SearchProvider;
  searchPriceMicro?: bigint;
  /** Keeps the holds of running calls from expiring (src/core/billing/hold-keeper.ts). */
  keeper?: HoldKeeper;
  /** How long a stream the client left is still read for its usage (ms; 0 = cut at once). */
  streamDrainMs?: number;
  /** Circuit breaking (src/core/health); unset: every candidate is always called. */
  health?: HealthGate;
  /** Hedged requests (hedge.ts); unset: never hedged. */
  hedge?: HedgePort;
  /** Keeps the attempt trail of a call that needed more than one attempt (trail.ts); unset: not kept. */
  attemptTrail?: import("./trail").TrailPort;
  /** A stream broken mid-answer was continued (continuation.ts): by whom, for metrics. */
  continued?: (fromProvider: string, toProvider: string, ending: "complete" | "failed" | "client_left") => void;
  /** The streams open in this process, which a shutdown ends when its drain time is up (src/boot/shutdown.ts). */
  streams?: OpenStreams;
}

/** Streams register while open; `add` answers the function that forgets the stream. */
export interface OpenStreams {
  add(stream: { cut(): void }): () => void;
}

/** The hedge delay per provider, and what each race cost: the loser's estimated price (micro-won), how long it had waited. */
export interface HedgePort {
  delayMs(providerId: string): number;
  ended(outcome: HedgeOutcome, loser?: { provider: string; costMicro: bigint; waitedMs: number }): void;
}
