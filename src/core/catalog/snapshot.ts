/**
 * Snapshot building: a verified catalog file → the deep-frozen `CatalogSnapshot` with its
 * indexes and integer prices. Only ever called on a file that passed every check in verify.ts.
 */
import { usdToMicros } from "../../lib/money";
import {
  CHAT_PROTOCOLS,
  RESOLUTIONS,
  type CatalogFile,
  type Capabilities,
  type ModelEntry,
  type OfferingEntry,
  type ProviderEntry,
  type PriceTierEntry,
  type TokenPricingEntry,
  type VideoPricingEntry,
} from "./schema";
import type {
  CatalogModel,
  CatalogOffering,
  CatalogProvider,
  CatalogSnapshot,
  PriceTier,
  TokenPricing,
  VideoPricing,
} from "./types";

const CHAT = new Set<string>(CHAT_PROTOCOLS);

/** Which family letter a constraints row belongs to (`K-v3` → `K`). */
export function familyGroup(family: ModelEntry["family"]): CatalogModel["familyGroup"] {
  return family === null ? null : (family[0] as "K" | "L" | "S" | "G");
}

export function buildSnapshot(file: CatalogFile, hash: string, now: Date): CatalogSnapshot {
  const providers = file.providers.map(toProvider);
  const models = file.models.map(toModel);
  const modelById = new Map(models.map((m) => [m.id, m]));
  const offerings = file.offerings.map((o) => toOffering(o, modelById.get(o.model)!));

  const providersById = index(providers, (p) => p.id);
  const modelsById = index(models, (m) => m.id);
  const modelsByVendorId = index(models, (m) => m.vendorId);
  const modelsByAlias: Record<string, CatalogModel> = Object.create(null);
  for (const m of models) {
    for (const alias of m.aliases) {
      modelsByAlias[alias] = m;
      modelsByAlias[vendorAlias(m, alias)] = m;
    }
  }
  const offeringsByModel: Record<string, CatalogOffering[]> = Object.create(null);
  for (const m of models) offeringsByModel[m.id] = [];
  for (const o of offerings) offeringsByModel[o.modelId]!.push(o);

  return deepFreeze({
    version: 1 as const,
    hash,
    loadedAt: now.toISOString(),
    source: file.source
      ? { name: file.source.name, version: file.source.version, builtAt: file.source.built_at }
      : null,
    providers,
    models,
    offerings,
    providersById,
    modelsById,
    modelsByVendorId,
    modelsByAlias,
    offeringsByModel,
  });
}

/** An alias behind the model's vendor prefix: `claude-sonnet-4-5-20250929` → `anthropic/claude-sonnet-4-5-20250929`. */
export function vendorAlias(m: { readonly vendorId: string }, alias: string): string {
  return `${m.vendorId.slice(0, m.vendorId.indexOf("/"))}/${alias}`;
}

/** A null-prototype index, so ids such as `constructor` or `__proto__` never hit Object.prototype. */
function index<T>(items: readonly T[], key: (item: T) => string): Record<string, T> {
  const out: Record<string, T> = Object.create(null);
  for (const item of items) out[key(item)] = item;
  return out;
}

function toProvider(p: ProviderEntry): CatalogProvider {
  return {
    id: p.id,
    name: p.name,
    protocol: p.protocol,
    kind: CHAT.has(p.protocol) ? "chat" : "video",
    baseUrl: p.base_url,
    credentialEnv: p.credential_env,
    baseUrlEnv: p.base_url_env,
    trainsOnData: p.trains_on_data,
    serviceTier: p.service_tier,
    caching: p.caching,
  };
}

const NO_CAPABILITIES: Capabilities = { tools: false, json_mode: false, reasoning: false, vision: false };

function toModel(m: ModelEntry): CatalogModel {
  return {
    id: m.id,
    vendorId: m.vendor_id,
    name: m.name,
    maker: m.maker,
    modality: m.modality,
    family: m.family,
    familyGroup: familyGroup(m.family),
    active: m.active,
    kind: m.kind,
    created: m.created,
    capabilities: m.kind === "leaf" ? { ...(m.capabilities ?? NO_CAPABILITIES) } : null,
    reasoningPro: m.reasoning_pro === null ? null : { ...m.reasoning_pro },
    candidates: [...(m.candidates ?? [])],
    replacedBy: [...(m.replaced_by ?? [])],
    dimensions: m.dimensions ?? null,
    deprecatedAt: m.deprecated_at ?? null,
    retiresAt: m.retires_at ?? null,
    successor: m.successor ?? null,
    aliases: [...(m.aliases ?? [])],
  };
}

function toOffering(o: OfferingEntry, m: CatalogModel): CatalogOffering {
  return {
    modelId: o.model,
    providerId: o.provider,
    upstreamId: o.upstream_id,
    contextLength: o.context_length,
    maxOutput: o.max_output,
    pricing: o.pricing === null ? null : toTokenPricing(o.pricing),
    ...(o.service_tiers && {
      serviceTiers: Object.fromEntries(Object.entries(o.service_tiers).map(([tier, p]) => [tier, toTokenPricing(p)])),
    }),
    videoPricing: o.video_pricing ? toVideoPricing(o.video_pricing) : null,
    capabilities: { ...(m.capabilities ?? NO_CAPABILITIES), ...o.capabilities },
    deprecatedAt: o.deprecated_at ?? null,
    retiresAt: o.retires_at ?? null,
    successor: o.successor ?? null,
    ...(o.responses_only && { responsesOnly: true }),
  };
}

function toTokenPricing(p: TokenPricingEntry): TokenPricing {
  return {
    input: usdToMicros(p.input),
    output: usdToMicros(p.output),
    cachedInput: p.cached_input === null ? null : usdToMicros(p.cached_input),
    cacheWrite: p.cache_write === null ? null : usdToMicros(p.cache_write),
    ...(p.cache_write_1h != null && { cacheWrite1h: usdToMicros(p.cache_write_1h) }),
    ...(p.tiers && { tiers: p.tiers.map(toPriceTier) }),
    ...(p.web_search_per_1k !== undefined && { webSearchPer1k: usdToMicros(p.web_search_per_1k) }),
  };
}

function toPriceTier(t: PriceTierEntry): PriceTier {
  return {
    aboveInputTokens: t.above_input_tokens,
    input: usdToMicros(t.input),
    output: usdToMicros(t.output),
    cachedInput: t.cached_input === null ? null : usdToMicros(t.cached_input),
    cacheWrite: t.cache_write === null ? null : usdToMicros(t.cache_write),
  };
}

function toVideoPricing(v: VideoPricingEntry): VideoPricing {
  const copy = (map: VideoPricingEntry["krw_per_second"]) =>
    map === undefined
      ? null
      : Object.fromEntries(RESOLUTIONS.filter((r) => map[r] !== undefined).map((r) => [r, map[r]!]));
  return {
    defaultResolution: v.default_resolution,
    krwPerSecond: copy(v.krw_per_second),
    krwPer1kOutputTokens: v.krw_per_1k_output_tokens ?? null,
    estOutputTokensPerSecond: copy(v.est_output_tokens_per_second),
    maxSeconds: v.max_seconds ?? null,
  };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
