/**
 * The model catalog as the OpenAI dialect's `GET /v1/models` answers it (OpenAI's list shape,
 * extended with catalog data), declared once: the encoder (src/http/routes/models.ts) returns
 * `Static<>` of these schemas and the OpenAPI document shows them.
 */
import { Type as T, type Static } from "@sinclair/typebox";
import { named } from "../../lib/named-schema";
import { Nullable } from "./schemas";

export const ModelPricing = T.Object(
  {
    input: T.Number(),
    output: T.Number(),
    cached_input: Nullable(T.Number()),
    cache_write: Nullable(T.Number()),
    cache_write_1h: T.Optional(T.Number()),
    tiers: T.Optional(
      T.Array(
        T.Object({
          above_input_tokens: T.Integer(),
          input: T.Number(),
          output: T.Number(),
          cached_input: Nullable(T.Number()),
          cache_write: Nullable(T.Number()),
        }),
        { description: "Long-context prices, from a prompt of more than `above_input_tokens` tokens on" },
      ),
    ),
    web_search_per_1k: T.Optional(T.Number({ description: "USD per 1,000 web searches" })),
  },
  { description: "USD per million tokens" },
);
export const Model = named(
  "Model",
  T.Object({
    id: T.String(),
    object: T.Literal("model"),
    created: T.Integer(),
    owned_by: T.String(),
    vendor_id: T.String(),
    name: T.String(),
    maker: T.String(),
    modality: T.String(),
    kind: T.String(),
    family: Nullable(T.String()),
    capabilities: T.Unknown(),
    reasoning_pro: T.Boolean({ description: 'Whether `reasoning_mode: "pro"` is available' }),
    available: T.Boolean({
      description: "Whether this deployment can answer the model (some provider configured, or the simulator on)",
    }),
    providers: T.Array(
      T.Object({
        id: T.String(),
        available: T.Boolean({ description: "Whether this provider is configured on this deployment (or simulated)" }),
        circuit: T.Union([T.Literal("closed"), T.Literal("half_open"), T.Literal("open")], {
          description:
            "This instance's circuit for the provider and model: `open` = unhealthy, skipped without a call until its cool-down ends; `half_open` = probe calls are testing it; `closed` = healthy",
        }),
        context_length: Nullable(T.Integer()),
        max_output: Nullable(T.Integer()),
        trains_on_data: T.Boolean(),
        pricing: Nullable(ModelPricing),
        service_tiers: T.Optional(
          T.Record(T.String(), ModelPricing, {
            description: "Prices of the `service_tier` values that cost more or less (others are refused)",
          }),
        ),
        lifecycle: T.Union([T.Literal("active"), T.Literal("deprecated"), T.Literal("retired")], {
          description:
            "This provider's own stage of the model today: a `retired` offering is skipped by routing and a pin to it is refused (400 `model_retired`), except where the simulator serves it",
        }),
        deprecated_at: Nullable(
          T.String({ format: "date", description: "The day this provider deprecated its upstream id" }),
        ),
        retires_at: Nullable(
          T.String({ format: "date", description: "From this day on this provider no longer serves it" }),
        ),
        successor: Nullable(T.String({ description: "What to call instead: `model@provider` or a model id" })),
      }),
    ),
    candidates: T.Optional(T.Array(T.String(), { description: "Routing parents: candidate leaves in order" })),
    pricing_krw_per_second: T.Optional(
      T.Record(T.String(), T.Number(), { description: "Video: KRW per second of output by resolution" }),
    ),
    pricing_krw_per_1k_output_tokens: T.Optional(
      T.Number({ description: "Family G Omni video: KRW per 1,000 output tokens" }),
    ),
    default_resolution: T.Optional(T.String()),
    dimensions: T.Optional(
      T.Integer({ description: "Embedding models: the vector size (the most `dimensions` may ask for)" }),
    ),
    lifecycle: T.Union([T.Literal("active"), T.Literal("deprecated"), T.Literal("retired")], {
      description:
        "Today: `deprecated` answers with `Deprecation`/`Sunset` headers and an `x-gateway-warnings` entry; `retired` is refused with 400 `model_retired` (except where the simulator serves it)",
    }),
    deprecated_at: Nullable(T.String({ format: "date", description: "The day the provider deprecated the model" })),
    retires_at: Nullable(T.String({ format: "date", description: "From this day on the model is refused" })),
    successor: Nullable(T.String({ description: "The model to call instead" })),
    aliases: T.Array(T.String(), { description: "Other ids that call this model (dated snapshots, `-latest`)" }),
  }),
);
export type Model = Static<typeof Model>;
export type ModelPricing = Static<typeof ModelPricing>;

export const ModelList = named("ModelList", T.Object({ object: T.Literal("list"), data: T.Array(Model) }));
export type ModelList = Static<typeof ModelList>;
