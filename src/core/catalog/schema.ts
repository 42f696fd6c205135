/**
 * The shape of `src/core/catalog/catalog.json`, as one TypeBox schema. The schema is the type:
 * `CatalogFile` is derived from it. Structural rules live here; rules that relate one entry to
 * another (references, uniqueness, caching cases) live in `verify.ts`.
 */
import { Type, type Static, type TLiteral, type TUnion } from "@sinclair/typebox";

const strict = { additionalProperties: false } as const;

export const CHAT_PROTOCOLS = ["openai", "anthropic", "gemini"] as const;
export const VIDEO_PROTOCOLS = ["video-kling", "video-ltx", "video-seedance", "video-veo"] as const;
export const MODALITIES = ["text", "embedding", "video"] as const;
export const MODEL_KINDS = ["leaf", "parent", "retired"] as const;
/** How a provider bills prompt caching (the specification's three cases, plus video's none). */
export const CACHING_MODES = ["automatic", "explicit", "reported", "none"] as const;
export const RESOLUTIONS = ["480p", "720p", "1080p", "1440p", "4k"] as const;
export const REASONING_EFFORTS = ["minimal", "none", "low", "medium", "high", "xhigh", "max"] as const;
/**
 * Video families, split where the specification's constraints table has separate rows.
 * `K-v3` is every Family K V3 model; `K-v2` is V2.5 and V2.6 (5 or 10 seconds).
 */
export const VIDEO_FAMILIES = [
  "K-v3",
  "K-v2",
  "L-fast",
  "L-pro",
  "S-2.0",
  "S-2.0-fast",
  "S-2.0-mini",
  "S-1.5-pro",
  "S-1.0-pro",
  "S-1.0-pro-fast",
  "G",
  "G-omni",
] as const;

/** A union of string literals whose static type is the union of the values. */
function literals<const T extends readonly string[]>(values: T): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(values.map((v) => Type.Literal(v))) as unknown as TUnion<TLiteral<T[number]>[]>;
}

/** Short model ids and provider ids: no `/` and no `@`, so the call forms stay unambiguous. */
const ModelId = Type.String({ pattern: "^[a-z0-9][a-z0-9._-]*$", maxLength: 100 });
const ProviderId = Type.String({ pattern: "^[a-z0-9][a-z0-9-]*$", maxLength: 40 });
const VendorId = Type.String({ pattern: "^[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9._-]*$", maxLength: 140 });
/** A model id, or one provider's offering of it (`deepseek-v4-flash@deepseek`). */
const OfferingRef = Type.String({ pattern: "^[a-z0-9][a-z0-9._-]*(@[a-z0-9][a-z0-9-]*)?$", maxLength: 141 });
const EnvName = Type.String({ pattern: "^[A-Z][A-Z0-9_]*$" });
/** USD per million tokens, as the providers publish it (at most 6 decimals; checked in verify). */
const UsdPerMTok = Type.Number({ minimum: 0 });
const Krw = Type.Integer({ minimum: 1 });
/** A calendar day, `YYYY-MM-DD` (UTC); verify checks it is a real date. */
const Day = Type.String({ pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$" });
const NullableDay = Type.Union([Day, Type.Null()]);

/** A partial map from output resolution to a positive integer. */
const ResolutionMap = () =>
  Type.Object(
    {
      "480p": Type.Optional(Krw),
      "720p": Type.Optional(Krw),
      "1080p": Type.Optional(Krw),
      "1440p": Type.Optional(Krw),
      "4k": Type.Optional(Krw),
    },
    strict,
  );

export const ProviderSchema = Type.Object(
  {
    id: ProviderId,
    name: Type.String({ minLength: 1 }),
    protocol: literals([...CHAT_PROTOCOLS, ...VIDEO_PROTOCOLS]),
    /** The adapter appends its own path (`/v1/chat/completions`, `/v1/messages`, `/v1beta/models/...`). */
    base_url: Type.String({ pattern: "^https?://[^\\s]+[^/\\s]$" }),
    credential_env: EnvName,
    base_url_env: EnvName,
    /** A training-use provider: callers need cross-border training consent. */
    trains_on_data: Type.Boolean(),
    /** Whether `service_tier` may be forwarded (only the OpenAI family). */
    service_tier: Type.Boolean(),
    caching: literals(CACHING_MODES),
  },
  strict,
);

export const CapabilitiesSchema = Type.Object(
  { tools: Type.Boolean(), json_mode: Type.Boolean(), reasoning: Type.Boolean(), vision: Type.Boolean() },
  strict,
);

/** What `reasoning_mode: "pro"` does for a model: switch to another leaf, or raise the effort. */
export const ReasoningProSchema = Type.Union([
  Type.Object({ variant: ModelId }, strict),
  Type.Object({ effort: literals(REASONING_EFFORTS) }, strict),
]);

export const ModelSchema = Type.Object(
  {
    id: ModelId,
    vendor_id: VendorId,
    name: Type.String({ minLength: 1 }),
    maker: Type.String({ pattern: "^[a-z0-9][a-z0-9-]*$" }),
    modality: literals(MODALITIES),
    /** Video family (constraints row); null for text and embedding models. */
    family: Type.Union([literals(VIDEO_FAMILIES), Type.Null()]),
    active: Type.Boolean(),
    kind: literals(MODEL_KINDS),
    /** Unix seconds, shown as `created` in `GET /v1/models`. */
    created: Type.Integer({ minimum: 0 }),
    /** Leaves: chat capabilities (video models: all false). */
    capabilities: Type.Optional(CapabilitiesSchema),
    reasoning_pro: Type.Union([ReasoningProSchema, Type.Null()]),
    /** Parents: leaf candidates in routing order. */
    candidates: Type.Optional(Type.Array(ModelId, { minItems: 1 })),
    /** Retired ids: the current parents to name instead. */
    replaced_by: Type.Optional(Type.Array(ModelId, { minItems: 1 })),
    /** Embedding models: vector size. */
    dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Leaves: the day the provider deprecated the model (it answers, with a warning). */
    deprecated_at: Type.Optional(NullableDay),
    /** Leaves: the day the provider stops serving it (refused from that day on). */
    retires_at: Type.Optional(NullableDay),
    /** Leaves: the active leaf to call instead, named in the warning and the refusal. */
    successor: Type.Optional(Type.Union([ModelId, Type.Null()])),
    /**
     * Leaves: other ids clients send for this model (dated snapshots, `-latest` forms). Each
     * resolves to the model, also behind the vendor prefix (`anthropic/<alias>`) and with `@provider`.
     */
    aliases: Type.Optional(Type.Array(ModelId)),
  },
  strict,
);

/**
 * A long-context price tier: from a prompt of more than `above_input_tokens` tokens on, every
 * token of the call is priced here instead (USD per million tokens, like the base prices).
 */
export const PriceTierSchema = Type.Object(
  {
    above_input_tokens: Type.Integer({ minimum: 1 }),
    input: UsdPerMTok,
    output: UsdPerMTok,
    cached_input: Type.Union([UsdPerMTok, Type.Null()]),
    cache_write: Type.Union([UsdPerMTok, Type.Null()]),
  },
  strict,
);

export const TokenPricingSchema = Type.Object(
  {
    input: UsdPerMTok,
    output: UsdPerMTok,
    /** Price of a cached prompt token; null where the provider has no caching (embeddings). */
    cached_input: Type.Union([UsdPerMTok, Type.Null()]),
    /** Price of a prompt token written to an explicit cache; null where there is none. */
    cache_write: Type.Union([UsdPerMTok, Type.Null()]),
    /**
     * Explicit caching: the price of a cache write with a one-hour TTL (`cache_control.ttl:
     * "1h"`), where the provider offers it; `cache_write` is the five-minute price.
     */
    cache_write_1h: Type.Optional(Type.Union([UsdPerMTok, Type.Null()])),
    /** Long-context tiers, thresholds strictly ascending. */
    tiers: Type.Optional(Type.Array(PriceTierSchema, { minItems: 1 })),
    /** USD per 1,000 web searches, where the provider bills its search tool per call. */
    web_search_per_1k: Type.Optional(Type.Number({ minimum: 0 })),
  },
  strict,
);

/** `service_tier` values with a price of their own (the others are `auto` and `default`). */
export const PRICED_SERVICE_TIERS = ["priority", "flex"] as const;

/**
 * Video prices in KRW. Either per second of output by resolution, or (Family G Omni) per 1,000
 * output tokens with an estimate of tokens per second to size the hold.
 */
export const VideoPricingSchema = Type.Object(
  {
    /** The output resolution priced when the request names none or the model fixes/normalizes it. */
    default_resolution: literals(RESOLUTIONS),
    krw_per_second: Type.Optional(ResolutionMap()),
    krw_per_1k_output_tokens: Type.Optional(Krw),
    est_output_tokens_per_second: Type.Optional(ResolutionMap()),
    /** Longest output the model may choose, for sizing a token-priced hold. */
    max_seconds: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  strict,
);

export const OfferingSchema = Type.Object(
  {
    model: ModelId,
    provider: ProviderId,
    /** The model id this provider expects on the wire. */
    upstream_id: Type.String({ minLength: 1, maxLength: 200 }),
    context_length: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
    max_output: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
    /** Token prices (text and embedding); null for video. */
    pricing: Type.Union([TokenPricingSchema, Type.Null()]),
    /**
     * Prices of the `service_tier` values that cost differently (providers with `service_tier`
     * only). A tier without a price here is refused, never forwarded.
     */
    service_tiers: Type.Optional(
      Type.Object({ priority: Type.Optional(TokenPricingSchema), flex: Type.Optional(TokenPricingSchema) }, strict),
    ),
    video_pricing: Type.Optional(VideoPricingSchema),
    /** Per-provider capability overrides, where a host differs from the model's defaults. */
    capabilities: Type.Optional(Type.Partial(CapabilitiesSchema)),
    /**
     * Text and embedding offerings: the day this provider deprecated its upstream id (answers
     * through it carry the deprecation headers). The model's own dates are on the model.
     */
    deprecated_at: Type.Optional(NullableDay),
    /** The day this provider stops serving its upstream id: from then on routing skips it and a pin is refused. */
    retires_at: Type.Optional(NullableDay),
    /**
     * Served on the provider's Responses API only (OpenAI's `-codex` and `-pro` models): only a
     * Responses call, relayed as the client's body, may use it (docs/responses.md).
     */
    responses_only: Type.Optional(Type.Boolean()),
    /** What to call instead: another offering (`model@provider`) or a model id. */
    successor: Type.Optional(Type.Union([OfferingRef, Type.Null()])),
  },
  strict,
);

/** Where the generated facts and prices came from (written by the sync command). */
export const CatalogSourceSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    version: Type.String({ minLength: 1, maxLength: 100 }),
    built_at: Day,
  },
  strict,
);

export const CatalogFileSchema = Type.Object(
  {
    version: Type.Literal(1),
    source: Type.Optional(CatalogSourceSchema),
    providers: Type.Array(ProviderSchema, { minItems: 1 }),
    models: Type.Array(ModelSchema, { minItems: 1 }),
    offerings: Type.Array(OfferingSchema),
  },
  strict,
);

export type CatalogFile = Static<typeof CatalogFileSchema>;
export type ProviderEntry = Static<typeof ProviderSchema>;
export type ModelEntry = Static<typeof ModelSchema>;
export type OfferingEntry = Static<typeof OfferingSchema>;
export type Capabilities = Static<typeof CapabilitiesSchema>;
export type ReasoningPro = Static<typeof ReasoningProSchema>;
export type TokenPricingEntry = Static<typeof TokenPricingSchema>;
export type PriceTierEntry = Static<typeof PriceTierSchema>;
export type CatalogSourceEntry = Static<typeof CatalogSourceSchema>;
export type VideoPricingEntry = Static<typeof VideoPricingSchema>;

export type ChatProtocol = (typeof CHAT_PROTOCOLS)[number];
export type VideoProtocol = (typeof VIDEO_PROTOCOLS)[number];
export type ProviderProtocol = ChatProtocol | VideoProtocol;
export type Modality = (typeof MODALITIES)[number];
export type ModelKind = (typeof MODEL_KINDS)[number];
export type CachingMode = (typeof CACHING_MODES)[number];
export type Resolution = (typeof RESOLUTIONS)[number];
export type PricedServiceTier = (typeof PRICED_SERVICE_TIERS)[number];
export type VideoFamily = (typeof VIDEO_FAMILIES)[number];
