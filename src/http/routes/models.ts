/**
 * `GET /v1/models` (OpenAI list shape, extended with catalog data) and `GET /v1/models/{id}`.
 * The body is built once per snapshot and reused until a reload swaps the snapshot.
 */
import { Elysia } from "elysia";
import { GatewayError, text } from "../../core/errors";
import { findModel } from "../../core/catalog/resolve";
import {
  getOfferings,
  getProvider,
  type CatalogModel,
  type CatalogSnapshot,
  type Resolution,
  type TokenPricing,
} from "../../core/catalog/types";

/** USD per million tokens, as numbers (display values of the integer micro-dollar prices). */
export interface ModelPricingView {
  input: number;
  output: number;
  cached_input: number | null;
  cache_write: number | null;
  /** A one-hour-TTL cache write (`cache_control.ttl: "1h"`), where priced. */
  cache_write_1h?: number;
}

export interface ModelProviderView {
  id: string;
  context_length: number | null;
  max_output: number | null;
  trains_on_data: boolean;
  pricing: ModelPricingView | null;
  /** Prices of the `service_tier` values that cost more or less (others are refused). */
  service_tiers?: Record<string, ModelPricingView>;
}

export interface ModelView {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
  vendor_id: string;
  name: string;
  maker: string;
  modality: CatalogModel["modality"];
  kind: CatalogModel["kind"];
  family: CatalogModel["family"];
  capabilities: CatalogModel["capabilities"];
  /** Whether `reasoning_mode: "pro"` is available. */
  reasoning_pro: boolean;
  providers: ModelProviderView[];
  /** Routing parents: candidate leaves in order. */
  candidates?: string[];
  /** Video: KRW per second of output by resolution. */
  pricing_krw_per_second?: Partial<Record<Resolution, number>>;
  /** Family G Omni: KRW per 1,000 output tokens. */
  pricing_krw_per_1k_output_tokens?: number;
  default_resolution?: Resolution;
}

export interface ModelList {
  object: "list";
  data: ModelView[];
}

const microsToUsd = (micros: number): number => micros / 1_000_000;

function pricingView(p: TokenPricing): ModelPricingView {
  return {
    input: microsToUsd(p.input),
    output: microsToUsd(p.output),
    cached_input: p.cachedInput === null ? null : microsToUsd(p.cachedInput),
    cache_write: p.cacheWrite === null ? null : microsToUsd(p.cacheWrite),
    ...(p.cacheWrite1h != null && { cache_write_1h: microsToUsd(p.cacheWrite1h) }),
  };
}

/** One model as `GET /v1/models` shows it. */
export function toModelView(snapshot: CatalogSnapshot, model: CatalogModel): ModelView {
  const offerings = getOfferings(snapshot, model.id);
  const view: ModelView = {
    id: model.id,
    object: "model",
    created: model.created,
    owned_by: model.maker,
    vendor_id: model.vendorId,
    name: model.name,
    maker: model.maker,
    modality: model.modality,
    kind: model.kind,
    family: model.family,
    capabilities: model.capabilities,
    reasoning_pro: model.reasoningPro !== null,
    providers: offerings.map((o) => ({
      id: o.providerId,
      context_length: o.contextLength,
      max_output: o.maxOutput,
      trains_on_data: getProvider(snapshot, o.providerId)?.trainsOnData ?? false,
      pricing: o.pricing ? pricingView(o.pricing) : null,
      ...(o.serviceTiers && { service_tiers: Object.fromEntries(Object.entries(o.serviceTiers).map(([tier, p]) => [tier, pricingView(p!)])) }),
    })),
  };
  if (model.kind === "parent") view.candidates = [...model.candidates];
  const video = offerings[0]?.videoPricing;
  if (video) {
    view.default_resolution = video.defaultResolution;
    if (video.krwPerSecond) view.pricing_krw_per_second = { ...video.krwPerSecond };
    if (video.krwPer1kOutputTokens !== null) view.pricing_krw_per_1k_output_tokens = video.krwPer1kOutputTokens;
  }
  return view;
}

/** Every callable model (active leaves and routing parents; retired and inactive ids are left out). */
export function toModelList(snapshot: CatalogSnapshot): ModelList {
  return {
    object: "list",
    data: snapshot.models.filter((m) => m.active && m.kind !== "retired").map((m) => toModelView(snapshot, m)),
  };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const cache = new WeakMap<CatalogSnapshot, string>();

function listJson(snapshot: CatalogSnapshot): string {
  let body = cache.get(snapshot);
  if (body === undefined) {
    body = JSON.stringify(toModelList(snapshot));
    cache.set(snapshot, body);
  }
  return body;
}

/**
 * The models routes. `getSnapshot` is called per request (it throws `catalog_snapshot_stale`
 * when there is no verified catalog; the app's error handler renders it).
 */
export function modelsRoutes(getSnapshot: () => CatalogSnapshot) {
  return new Elysia()
    .get(
      "/v1/models",
      () => new Response(listJson(getSnapshot()), { headers: { "content-type": "application/json" } }),
    )
    .get("/v1/models/*", ({ params }) => {
      const snapshot = getSnapshot();
      const id = safeDecode(params["*"]);
      const model = findModel(snapshot, id);
      if (!model || !model.active || model.kind === "retired") {
        throw new GatewayError("not_found", text(`모델을 찾을 수 없습니다: '${id}'.`, `Model not found: '${id}'.`));
      }
      return toModelView(snapshot, model);
    });
}
