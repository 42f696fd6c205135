/**
 * `GET /v1/models` (OpenAI list shape, extended with catalog data) and `GET /v1/models/{id}`,
 * each answer the static type of its schema (src/surfaces/openai/model-schemas.ts).
 * The body is built once per snapshot (and day, and circuit version) and reused until one changes.
 * Models past their retirement date stay listed with their dates and `lifecycle: "retired"`, so a
 * client refused with `model_retired` can see why and what to call instead (docs/catalog.md).
 */
import { Elysia } from "elysia";
import { GatewayError, text } from "../../core/errors";
import { AUTH } from "../security";
import { errors, ok } from "../openapi/describe";
import { Model, ModelList, type ModelPricing } from "../../surfaces/openai/model-schemas";
import { findModel } from "../../core/catalog/resolve";
import {
  getModel,
  getOfferings,
  getProvider,
  type CatalogModel,
  type CatalogOffering,
  type CatalogProvider,
  type CatalogSnapshot,
  type Resolution,
  type TokenPricing,
} from "../../core/catalog/types";
import type { CircuitState } from "../../core/health/breaker";
import {
  modelDates,
  modelStage,
  offeringStage,
  SYSTEM_LIFECYCLE,
  type LifecycleStage,
  type LifecyclePort,
} from "../../core/catalog/lifecycle";

/** The answer bodies, as their schemas declare them (src/surfaces/openai/model-schemas.ts). */
export type ModelView = Model;
export type ModelPricingView = ModelPricing;
export type { ModelList };

/** Whether this deployment may call a provider (src/upstreams.ts). */
export type ProviderAvailability = (provider: CatalogProvider) => boolean;

/** This instance's circuits (src/core/health/tracker.ts); `version` changes with every transition. */
export interface CircuitView {
  state(provider: string, model?: string): CircuitState;
  readonly version: number;
}

const RANK: Record<CircuitState, number> = { closed: 0, half_open: 1, open: 2 };

/** The provider's circuit for this model: the worse of the provider-wide one and the model's own. */
function circuitOf(health: CircuitView | null, provider: string, model: string): CircuitState {
  if (!health) return "closed";
  const a = health.state(provider);
  const b = health.state(provider, model);
  return RANK[a] >= RANK[b] ? a : b;
}

const microsToUsd = (micros: number): number => micros / 1_000_000;

function pricingView(p: TokenPricing): ModelPricingView {
  return {
    input: microsToUsd(p.input),
    output: microsToUsd(p.output),
    cached_input: p.cachedInput === null ? null : microsToUsd(p.cachedInput),
    cache_write: p.cacheWrite === null ? null : microsToUsd(p.cacheWrite),
    ...(p.cacheWrite1h != null && { cache_write_1h: microsToUsd(p.cacheWrite1h) }),
    ...(p.tiers && {
      tiers: p.tiers.map((t) => ({
        above_input_tokens: t.aboveInputTokens,
        input: microsToUsd(t.input),
        output: microsToUsd(t.output),
        cached_input: t.cachedInput === null ? null : microsToUsd(t.cachedInput),
        cache_write: t.cacheWrite === null ? null : microsToUsd(t.cacheWrite),
      })),
    }),
    ...(p.webSearchPer1k !== undefined && { web_search_per_1k: microsToUsd(p.webSearchPer1k) }),
  };
}

const everyProvider: ProviderAvailability = () => true;

function providerAvailable(snapshot: CatalogSnapshot, providerId: string, available: ProviderAvailability): boolean {
  const p = getProvider(snapshot, providerId);
  return !!p && available(p);
}

/**
 * A leaf with an available provider (a retired one: an available provider the simulator serves,
 * catalog/lifecycle.ts), or a routing parent with such a candidate.
 */
function modelAvailable(
  snapshot: CatalogSnapshot,
  model: CatalogModel,
  available: ProviderAvailability,
  lifecycle: LifecyclePort,
  depth = 0,
): boolean {
  if (model.kind === "parent") {
    return (
      depth < 4 &&
      model.candidates.some((id) => {
        const leaf = getModel(snapshot, id);
        return !!leaf && modelAvailable(snapshot, leaf, available, lifecycle, depth + 1);
      })
    );
  }
  const today = lifecycle.today();
  return getOfferings(snapshot, model.id).some(
    (o) => offeringCallable(model, o, today, lifecycle) && providerAvailable(snapshot, o.providerId, available),
  );
}

/** Not retired (with its model or on its own), or served by the simulator. */
function offeringCallable(model: CatalogModel, o: CatalogOffering, today: string, lifecycle: LifecyclePort): boolean {
  return offeringStage(model, o, today) !== "retired" || lifecycle.simulated(o);
}

/** One model as `GET /v1/models` shows it. */
function toModelView(
  snapshot: CatalogSnapshot,
  model: CatalogModel,
  available: ProviderAvailability = everyProvider,
  health: CircuitView | null = null,
  lifecycle: LifecyclePort = SYSTEM_LIFECYCLE,
): ModelView {
  const offerings = getOfferings(snapshot, model.id);
  const today = lifecycle.today();
  const stage = modelStage(model, offerings, today);
  const dates = modelDates(model, offerings);
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
    available: modelAvailable(snapshot, model, available, lifecycle),
    lifecycle: stage,
    deprecated_at: dates.deprecatedAt,
    retires_at: dates.retiresAt,
    successor: dates.successor,
    aliases: [...model.aliases],
    providers: offerings.map((o) => ({
      id: o.providerId,
      available: offeringCallable(model, o, today, lifecycle) && providerAvailable(snapshot, o.providerId, available),
      circuit: circuitOf(health, o.providerId, model.id),
      context_length: o.contextLength,
      max_output: o.maxOutput,
      trains_on_data: getProvider(snapshot, o.providerId)?.trainsOnData ?? false,
      pricing: o.pricing ? pricingView(o.pricing) : null,
      ...(o.serviceTiers && {
        service_tiers: Object.fromEntries(Object.entries(o.serviceTiers).map(([tier, p]) => [tier, pricingView(p!)])),
      }),
      lifecycle: offeringStage(model, o, today),
      deprecated_at: o.deprecatedAt,
      retires_at: o.retiresAt,
      successor: o.successor,
    })),
  };
  if (model.kind === "parent") view.candidates = [...model.candidates];
  if (model.dimensions !== null) view.dimensions = model.dimensions;
  const video = offerings[0]?.videoPricing;
  if (video) {
    view.default_resolution = video.defaultResolution;
    if (video.krwPerSecond) view.pricing_krw_per_second = { ...video.krwPerSecond };
    if (video.krwPer1kOutputTokens !== null) view.pricing_krw_per_1k_output_tokens = video.krwPer1kOutputTokens;
  }
  return view;
}

/** Every callable model (active leaves and routing parents; retired and inactive ids are left out). */
function toModelList(
  snapshot: CatalogSnapshot,
  available: ProviderAvailability = everyProvider,
  health: CircuitView | null = null,
  lifecycle: LifecyclePort = SYSTEM_LIFECYCLE,
): ModelList {
  return {
    object: "list",
    data: snapshot.models
      .filter((m) => m.active && m.kind !== "retired")
      .map((m) => toModelView(snapshot, m, available, health, lifecycle)),
  };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * The models routes. `getSnapshot` is called per request (it throws `catalog_snapshot_stale`
 * when there is no verified catalog; the app's error handler renders it). `available` says
 * which providers this deployment can call (fixed at start), `health` which are unhealthy now:
 * the body is cached per snapshot and circuit version.
 */
export function modelsRoutes(
  getSnapshot: () => CatalogSnapshot,
  available: ProviderAvailability = everyProvider,
  health: CircuitView | null = null,
  lifecycle: LifecyclePort = SYSTEM_LIFECYCLE,
) {
  // Per route instance: two gateways in one process may share a snapshot but not availability.
  const cache = new WeakMap<CatalogSnapshot, { version: number; day: string; body: string }>();
  const listJson = (snapshot: CatalogSnapshot): string => {
    const version = health ? health.version : 0;
    const day = lifecycle.today();
    let hit = cache.get(snapshot);
    if (hit === undefined || hit.version !== version || hit.day !== day) {
      hit = { version, day, body: JSON.stringify(toModelList(snapshot, available, health, lifecycle)) };
      cache.set(snapshot, hit);
    }
    return hit.body;
  };
  return (
    new Elysia()
      .get(
        "/v1/models",
        () => new Response(listJson(getSnapshot()), { headers: { "content-type": "application/json" } }),
        {
          detail: {
            security: AUTH.none,
            tags: ["models"],
            summary: "Every callable model, with providers and prices",
            responses: ok(ModelList),
          },
        },
      )
      // A wildcard, not `:id`: model ids contain slashes (`openai/gpt-4o`), sent as is or encoded.
      .get(
        "/v1/models/*",
        ({ params }) => {
          const snapshot = getSnapshot();
          const id = safeDecode(params["*"]);
          const model = findModel(snapshot, id);
          if (!model || !model.active || model.kind === "retired") {
            throw new GatewayError("not_found", text(`모델을 찾을 수 없습니다: '${id}'.`, `Model not found: '${id}'.`));
          }
          return toModelView(snapshot, model, available, health, lifecycle);
        },
        {
          detail: {
            security: AUTH.none,
            tags: ["models"],
            summary: "One model by id, vendor id or alias",
            parameters: [
              {
                name: "id",
                in: "path",
                required: true,
                description: "The model id; may contain slashes (`openai/gpt-4o`), encoded as %2F or not",
                schema: { type: "string" },
              },
            ],
            responses: { ...ok(Model), ...errors(404) },
          },
        },
      )
  );
}
