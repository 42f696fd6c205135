/** The shapes of an embeddings call, dialect-neutral: what is asked, what the service needs, what comes back. */
import type { CatalogProvider, CatalogSnapshot } from "../catalog/types";
import type { Ledger } from "../billing/ledger";
import type { Settlements } from "../billing/settlements";
import type { HoldKeeper } from "../billing/hold-keeper";
import type { ChatCaller } from "../chat/plan";
import type { Cost } from "../billing/cost";
import type { UpstreamEndpoint } from "../chat/ports";
import type { EmbeddingEncoding, EmbeddingInput, EmbeddingProvider, Protocol } from "../model/provider";
import type { Spool } from "../../lib/spool";
import type { CallWarning } from "../upstream/warnings";
import type { LifecyclePort, ModelNotice } from "../catalog/lifecycle";
import type { UpstreamError } from "../upstream/error";

export interface EmbeddingCall {
  model: string;
  /** At least one input; each a non-empty text or a non-empty list of token ids. */
  inputs: EmbeddingInput[];
  dimensions?: number;
  user?: string;
  /** How the client wants the vectors; the upstream is asked for the same. */
  encoding: EmbeddingEncoding;
}

export interface EmbeddingOutcome {
  /**
   * The vectors as the client's JSON values, one spool entry each (memory or an unlinked
   * temporary file, never the whole answer in memory); the caller closes it.
   */
  spool: Spool;
  /** For input i, the spool entry of its vector. */
  order: number[];
  /** The catalog id of the model that answered, and its provider. */
  model: string;
  provider: string;
  promptTokens: number;
  cost: Cost;
  /** The settings the answering provider's request left out (CallContext.warn). */
  warnings: CallWarning[];
  /** The model's deprecation (catalog/lifecycle.ts); null when it is active. */
  lifecycle: ModelNotice | null;
}

/** Embeddings calls are observed and identified like chat calls. */
export type EmbeddingCaller = ChatCaller;

export interface EmbeddingDeps {
  catalog(): CatalogSnapshot;
  ledger: Ledger;
  settlements: Settlements;
  keeper?: HoldKeeper;
  embedderFor(protocol: Protocol): EmbeddingProvider | undefined;
  upstreamFor(provider: CatalogProvider, principal: ChatCaller["principal"]): UpstreamEndpoint;
  /** Whether this deployment may call a provider (src/upstreams.ts); unset: every provider. */
  available?(provider: CatalogProvider): boolean;
  /** The day and the simulated offerings (catalog/lifecycle.ts); unset: the system clock, nothing simulated. */
  lifecycle?: LifecyclePort;
  fxMilli: bigint;
  /** Most numbers one call may answer (inputs × dimensions): 400 above, before any hold. */
  maxValues: number;
  holdTtlSeconds: number;
  retryBaseMs: number;
  firstByteTimeoutMs: number;
  idleTimeoutMs: number;
  observe?(providerId: string, outcome: "ok" | UpstreamError["kind"] | "error", ms: number): void;
  sleep?(ms: number): Promise<void>;
}
