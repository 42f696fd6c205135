/**
 * The verified, immutable catalog the gateway routes and bills from. A `CatalogSnapshot` is
 * built only by `verifyCatalog` and is deep-frozen: hold on to it for the length of a
 * request and every lookup stays consistent even while a reload swaps in a newer one.
 */
import type { Protocol } from "../model/provider";
import type {
  CachingMode,
  Capabilities,
  ChatProtocol,
  Modality,
  ModelKind,
  PricedServiceTier,
  ProviderProtocol,
  ReasoningPro,
  Resolution,
  VideoFamily,
} from "./schema";

export type {
  CachingMode,
  Capabilities,
  ChatProtocol,
  Modality,
  ModelKind,
  PricedServiceTier,
  ProviderProtocol,
  ReasoningPro,
  Resolution,
  VideoFamily,
  VideoProtocol,
} from "./schema";

// The catalog's chat protocols are exactly the provider port's protocols.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const protocolsAgree: Same<ChatProtocol, Protocol> = true;
void protocolsAgree;

export interface CatalogProvider {
  readonly id: string;
  readonly name: string;
  readonly protocol: ProviderProtocol;
  /** `chat` for openai/anthropic/gemini protocols, `video` for the video task APIs. */
  readonly kind: "chat" | "video";
  /** Public base URL; the adapter appends its own path. `baseUrlEnv` overrides it. */
  readonly baseUrl: string;
  readonly credentialEnv: string;
  readonly baseUrlEnv: string;
  /** A training-use provider (needs cross-border training consent). */
  readonly trainsOnData: boolean;
  /** Whether `service_tier` may be forwarded to this provider. */
  readonly serviceTier: boolean;
  /**
   * How prompt caching is billed: `automatic` (cached input discounted, no write price),
   * `explicit` (`cache_control`; cache-read and cache-write prices), `reported` (cached
   * tokens reported, billed at the input price), `none` (video).
   */
  readonly caching: CachingMode;
}

/**
 * Token prices as integers: USD micro-dollars per million tokens (`src/lib/money.ts`).
 * A null `cachedInput` / `cacheWrite` means the provider has no such price: bill those tokens
 * (if any are ever reported) at `input`.
 */
export interface TokenPricing {
  readonly input: number;
  readonly output: number;
  readonly cachedInput: number | null;
  readonly cacheWrite: number | null;
  /** A one-hour-TTL cache write (explicit caching); absent where the catalog has no such price. */
  readonly cacheWrite1h?: number | null;
  /** Long-context tiers (micro-dollars per million tokens), thresholds ascending; absent when none. */
  readonly tiers?: readonly PriceTier[];
  /** Micro-dollars per 1,000 web searches; absent when the catalog has no such price. */
  readonly webSearchPer1k?: number;
}

/** Prices that apply from a prompt of more than `aboveInputTokens` tokens on. */
export interface PriceTier {
  readonly aboveInputTokens: number;
  readonly input: number;
  readonly output: number;
  readonly cachedInput: number | null;
  readonly cacheWrite: number | null;
}

/** Video prices in integer KRW. Exactly one of `krwPerSecond` and `krwPer1kOutputTokens` is set. */
export interface VideoPricing {
  /** The output resolution priced when the request names none or the model fixes it. */
  readonly defaultResolution: Resolution;
  /** KRW per second of output, by output resolution (absent key: resolution not offered). */
  readonly krwPerSecond: Readonly<Partial<Record<Resolution, number>>> | null;
  /** Family G Omni: KRW per 1,000 output tokens reported on completion. */
  readonly krwPer1kOutputTokens: number | null;
  /** Family G Omni: estimated output tokens per second, by resolution (for the hold). */
  readonly estOutputTokensPerSecond: Readonly<Partial<Record<Resolution, number>>> | null;
  /** Family G Omni: the longest output the model may choose (for the hold). */
  readonly maxSeconds: number | null;
}

/** One model at one provider. */
export interface CatalogOffering {
  readonly modelId: string;
  readonly providerId: string;
  /** The model id on the provider's wire. */
  readonly upstreamId: string;
  readonly contextLength: number | null;
  readonly maxOutput: number | null;
  /** Token prices; null for video offerings. */
  readonly pricing: TokenPricing | null;
  /** Prices of the `service_tier` values that cost differently; absent when none. */
  readonly serviceTiers?: Readonly<Partial<Record<PricedServiceTier, TokenPricing>>>;
  /** Video prices; null for text and embedding offerings. */
  readonly videoPricing: VideoPricing | null;
  /** The model's capabilities with this provider's overrides applied. */
  readonly capabilities: Capabilities;
  /** `YYYY-MM-DD` this provider deprecated its upstream id; null when not (the model's own dates are on the model). */
  readonly deprecatedAt: string | null;
  /** `YYYY-MM-DD` from which this provider no longer serves it: routing skips it, a pin is refused. */
  readonly retiresAt: string | null;
  /** What to call instead: `model@provider` or a model id; null when none is named. */
  readonly successor: string | null;
  /** Served on the provider's Responses API only: other dialects are refused (core/chat/responses-native.ts). */
  readonly responsesOnly?: boolean;
}

export interface CatalogModel {
  /** Short id (`gpt-4o-mini`). */
  readonly id: string;
  /** Vendor-namespaced id (`openai/gpt-4o-mini`). */
  readonly vendorId: string;
  readonly name: string;
  /** The model's producer (the stats `maker`). */
  readonly maker: string;
  readonly modality: Modality;
  /** Video constraints row (`K-v3`, `L-fast`, `S-2.0-mini`, `G-omni`, ...); null otherwise. */
  readonly family: VideoFamily | null;
  /** Video family letter (`K`, `L`, `S`, `G`); null otherwise. */
  readonly familyGroup: "K" | "L" | "S" | "G" | null;
  readonly active: boolean;
  readonly kind: ModelKind;
  /** Unix seconds. */
  readonly created: number;
  /** Leaves only; null for parents and retired ids. */
  readonly capabilities: Capabilities | null;
  /** What `reasoning_mode: "pro"` does; null when the model has no pro mode. */
  readonly reasoningPro: ReasoningPro | null;
  /** Parents: leaf candidates in routing order; empty otherwise. */
  readonly candidates: readonly string[];
  /** Retired ids: the current parents to name instead; empty otherwise. */
  readonly replacedBy: readonly string[];
  /** Embedding models: vector size; null otherwise. */
  readonly dimensions: number | null;
  /** `YYYY-MM-DD` the provider deprecated it (answers with a warning from then); null when not. */
  readonly deprecatedAt: string | null;
  /** `YYYY-MM-DD` from which it is refused (`model_retired`); null when no date is announced. */
  readonly retiresAt: string | null;
  /** The active leaf to call instead; null when none is named. */
  readonly successor: string | null;
  /** Other ids that resolve to this model (dated snapshots, `-latest`); empty when none. */
  readonly aliases: readonly string[];
}

/** Where the catalog's generated facts came from; null for a hand-kept file. */
export interface CatalogSource {
  readonly name: string;
  readonly version: string;
  /** `YYYY-MM-DD`. */
  readonly builtAt: string;
}

export interface CatalogSnapshot {
  readonly version: 1;
  /** SHA-256 (hex) of the catalog file text. */
  readonly hash: string;
  /** ISO 8601 time the snapshot was built. */
  readonly loadedAt: string;
  /** The file's `source` record; null when it has none. */
  readonly source: CatalogSource | null;
  /** In file order. */
  readonly providers: readonly CatalogProvider[];
  readonly models: readonly CatalogModel[];
  readonly offerings: readonly CatalogOffering[];
  /** Null-prototype indexes: prefer the `get*` helpers, which return `undefined` when absent. */
  readonly providersById: Readonly<Record<string, CatalogProvider>>;
  readonly modelsById: Readonly<Record<string, CatalogModel>>;
  readonly modelsByVendorId: Readonly<Record<string, CatalogModel>>;
  /** Aliases, bare and behind the model's vendor prefix (`anthropic/<alias>`). */
  readonly modelsByAlias: Readonly<Record<string, CatalogModel>>;
  /** Offerings of each model in default provider order (empty array for parents). */
  readonly offeringsByModel: Readonly<Record<string, readonly CatalogOffering[]>>;
}

export type CatalogProblemKind = "io" | "parse" | "schema" | "reference" | "duplicate" | "hash" | "price" | "protocol";

/** One thing wrong with a catalog file. `path` points into the file (`models[3].candidates[0]`). */
export interface CatalogProblem {
  readonly kind: CatalogProblemKind;
  readonly path: string;
  readonly message: string;
}

export type CatalogVerification =
  | { readonly ok: true; readonly snapshot: CatalogSnapshot; readonly errors: readonly [] }
  | { readonly ok: false; readonly errors: readonly CatalogProblem[] };

export function getModel(snapshot: CatalogSnapshot, id: string): CatalogModel | undefined {
  return snapshot.modelsById[id];
}

export function getModelByVendorId(snapshot: CatalogSnapshot, vendorId: string): CatalogModel | undefined {
  return snapshot.modelsByVendorId[vendorId];
}

/** The model an alias (bare or vendor-prefixed) names; undefined when it is no alias. */
export function getModelByAlias(snapshot: CatalogSnapshot, alias: string): CatalogModel | undefined {
  return snapshot.modelsByAlias[alias];
}

export function getProvider(snapshot: CatalogSnapshot, id: string): CatalogProvider | undefined {
  return snapshot.providersById[id];
}

/** The model's offerings in default provider order; empty when it has none. */
export function getOfferings(snapshot: CatalogSnapshot, modelId: string): readonly CatalogOffering[] {
  return snapshot.offeringsByModel[modelId] ?? [];
}

export function getOffering(
  snapshot: CatalogSnapshot,
  modelId: string,
  providerId: string,
): CatalogOffering | undefined {
  return getOfferings(snapshot, modelId).find((o) => o.providerId === providerId);
}

export function formatProblem(p: CatalogProblem): string {
  return `[${p.kind}] ${p.path || "(file)"}: ${p.message}`;
}
