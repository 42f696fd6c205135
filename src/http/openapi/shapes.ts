/**
 * Response bodies of the gateway's own endpoints, as documentation (the OpenAPI document's
 * component schemas). Nothing validates an answer against them; the OpenAPI test checks that
 * every route names one and that a typed client generated from them compiles.
 */
import { Type as T, type TSchema } from "@sinclair/typebox";
import { named } from "./describe";

const Nullable = <S extends TSchema>(s: S) => T.Union([s, T.Null()]);
const Id = T.String({ format: "uuid" });
const Time = T.String({ format: "date-time" });
const Krw = T.Number({ description: "Korean won" });

export const Health = named("Health", T.Object({ status: T.Literal("ok") }));
export const Readiness = named(
  "Readiness",
  T.Object({ status: T.Union([T.Literal("ready"), T.Literal("unavailable")]), database: T.String() }),
);

export const SignupResult = named("SignupResult", T.Object({ user_id: Id, email: T.String() }));
export const Token = named(
  "AccessToken",
  T.Object({
    access_token: T.String(),
    token_type: T.Literal("bearer"),
    expires_in: T.Integer({ description: "Seconds" }),
    session_expires_at: T.Optional(
      T.String({
        format: "date-time",
        description: "With a console session (refresh cookie): when the sign-in ends at the latest",
      }),
    ),
  }),
);
export const Me = named(
  "Account",
  T.Object({
    user_id: Id,
    email: T.String(),
    balance_krw: Krw,
    held_krw: Krw,
    regulated: T.Boolean(),
    xborder_training_consent: T.Boolean(),
  }),
);

export const KeyRecord = named(
  "ApiKey",
  T.Object({
    id: Id,
    name: T.String(),
    key_prefix: T.String(),
    key: T.Optional(T.String({ description: "The secret: only in the answer that created the key" })),
    kind: T.String({ description: "standard, delegated or byok" }),
    allowed_models: Nullable(T.Array(T.String())),
    monthly_budget_krw: Nullable(Krw),
    monthly_token_limit: Nullable(T.Integer()),
    expires_at: Nullable(Time),
    is_active: T.Boolean(),
    pii_masking_enabled: T.Boolean(),
    response_cache_mode: T.Union([T.Literal("off"), T.Literal("exact"), T.Literal("semantic")]),
    hedge: T.Boolean({ description: "Hedged requests for this key's calls, turned on by its owner (docs/hedging.md)" }),
    scopes: Nullable(T.Array(T.String())),
    ip_allowlist: Nullable(T.Array(T.String())),
    byok_provider: T.Optional(T.String()),
    management_key_id: Nullable(Id),
    created_at: Time,
    last_used_at: Nullable(Time),
  }),
);
const listOf = (name: string, item: TSchema) =>
  named(name, T.Object({ items: T.Array(item), total: T.Integer({ minimum: 0 }) }));
export const KeyList = listOf("ApiKeyList", KeyRecord);
export const KeyUsage = named(
  "ApiKeyUsage",
  T.Object({
    month: T.String({ description: "YYYY-MM (UTC)" }),
    items: T.Array(
      T.Object({
        key_id: Id,
        name: T.String(),
        key_prefix: T.String(),
        spent_krw: Krw,
        held_krw: Krw,
        tokens: T.Integer(),
        requests: T.Integer(),
        monthly_budget_krw: Nullable(Krw),
        monthly_token_limit: Nullable(T.Integer()),
      }),
    ),
    total: T.Integer({ minimum: 0 }),
  }),
);
export const Deleted = named(
  "Deleted",
  T.Object({
    ok: T.Literal(true),
    id: T.Optional(Id),
    deleted_key_ids: T.Optional(T.Array(Id, { description: "With cascade=true: the keys deleted with it" })),
  }),
);

export const MgmtKeyRecord = named(
  "ManagementKey",
  T.Object({
    id: Id,
    name: T.String(),
    key_prefix: T.String(),
    key: T.Optional(T.String({ description: "The secret: only when created" })),
    created_at: Time,
    last_used_at: Nullable(Time),
  }),
);
export const MgmtKeyList = listOf("ManagementKeyList", MgmtKeyRecord);

export const Topup = named("Topup", T.Object({ paid_krw: Krw, fee_krw: Krw, credited_krw: Krw, balance_krw: Krw }));
export const Settings = named(
  "Settings",
  T.Record(T.String(), T.Boolean(), { description: "Operator switches such as `routing.policies_enabled`" }),
);
export const Org = named("Organization", T.Object({ org_id: Id, name: T.String() }));
export const OrgMember = named(
  "OrganizationMember",
  T.Object({
    org_id: Id,
    user_id: Id,
    role: T.Union([T.Literal("owner"), T.Literal("admin"), T.Literal("member")]),
    monthly_budget_krw: Nullable(Krw),
  }),
);

export const Policy = named(
  "RoutingPolicy",
  T.Object({
    id: Id,
    slug: T.String(),
    display_name: T.String(),
    policy_type: T.String(),
    entries: T.Array(T.Object({ model: T.String(), weight: Nullable(T.Integer()), retries: T.Integer() })),
    config: T.Object({}, { additionalProperties: true }),
    org_id: Nullable(Id),
    created_by: Id,
    is_active: T.Boolean(),
    created_at: Time,
    updated_at: Time,
  }),
);
export const PolicyList = listOf("RoutingPolicyList", Policy);
export const PolicyCheck = named(
  "RoutingPolicyCheck",
  T.Object({
    valid: T.Literal(true),
    entries: T.Array(T.Object({ model: T.String(), retries: T.Integer(), weight: T.Optional(T.Integer()) })),
    config: T.Record(T.String(), T.Unknown()),
  }),
);

const Pricing = T.Object(
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
    reasoning_pro: T.Boolean(),
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
        pricing: Nullable(Pricing),
        service_tiers: T.Optional(T.Record(T.String(), Pricing)),
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
    candidates: T.Optional(T.Array(T.String())),
    pricing_krw_per_second: T.Optional(T.Record(T.String(), T.Number())),
    pricing_krw_per_1k_output_tokens: T.Optional(T.Number()),
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
export const ModelList = named("ModelList", T.Object({ object: T.Literal("list"), data: T.Array(Model) }));

const Cost = T.Object({ usd: T.Number(), krw: T.Number(), fx_rate: T.Number(), markup_rate: T.Number() });
export const ChatCompletion = named(
  "ChatCompletion",
  T.Object({
    id: T.String(),
    object: T.Literal("chat.completion"),
    created: T.Integer(),
    model: T.String(),
    provider: T.String(),
    choices: T.Array(
      T.Object({
        index: T.Integer(),
        message: T.Object({
          role: T.Literal("assistant"),
          content: Nullable(T.String()),
          tool_calls: T.Optional(T.Array(T.Unknown())),
          annotations: T.Optional(T.Array(T.Unknown())),
        }),
        logprobs: T.Null(),
        finish_reason: Nullable(T.String()),
      }),
    ),
    usage: T.Object({
      prompt_tokens: T.Integer(),
      completion_tokens: T.Integer(),
      total_tokens: T.Integer(),
      prompt_tokens_details: T.Object({ cached_tokens: T.Integer() }),
      completion_tokens_details: T.Object({ reasoning_tokens: T.Integer() }),
      cache_creation_input_tokens: T.Optional(T.Integer()),
    }),
    cost: T.Optional(Cost),
    cached: T.Boolean(),
  }),
);
export const ResponseObject = named(
  "Response",
  T.Object({
    id: T.String(),
    object: T.Literal("response"),
    created_at: T.Integer(),
    status: T.String(),
    model: T.String(),
    output: T.Array(T.Unknown()),
    usage: Nullable(
      T.Object({
        input_tokens: T.Integer(),
        input_tokens_details: T.Object({ cached_tokens: T.Integer() }),
        output_tokens: T.Integer(),
        output_tokens_details: T.Object({ reasoning_tokens: T.Integer() }),
        total_tokens: T.Integer(),
      }),
    ),
    provider: T.String(),
    cached: T.Boolean(),
    cost: T.Optional(Cost),
  }),
);
export const DeletedResponse = named(
  "DeletedResponse",
  T.Object({ id: T.String(), object: T.Literal("response"), deleted: T.Literal(true) }),
);
export const Feedback = named(
  "Feedback",
  T.Object({
    request_id: T.String(),
    response_id: T.String(),
    rating: T.Integer({ minimum: -1, maximum: 1 }),
    comment: Nullable(T.String()),
    category: Nullable(T.String()),
    model: Nullable(T.String()),
    provider: Nullable(T.String()),
    created_at: Time,
    updated_at: Time,
  }),
);

export const VideoJob = named(
  "VideoJob",
  T.Object({
    job_id: Id,
    status: T.Union([T.Literal("processing"), T.Literal("succeeded"), T.Literal("failed"), T.Literal("canceled")]),
    model: T.String(),
    result_url: Nullable(T.String()),
    cost: Nullable(T.Object({ krw: Krw })),
    error: Nullable(T.Object({ code: T.String(), message: T.String() })),
    assets: T.Array(T.Object({ type: T.Literal("video"), url: T.String() })),
    created_at: Time,
  }),
);

/** A job as the dashboard lists it: the job object plus its key, prompt and stored result. */
export const AccountVideoJob = named(
  "AccountVideoJob",
  T.Composite([
    VideoJob,
    T.Object({
      key_id: T.String({ format: "uuid" }),
      prompt: T.String(),
      content_url: T.Union([T.String(), T.Null()], {
        description: "The stored result for the dashboard (Range supported), when the gateway keeps it",
      }),
    }),
  ]),
);
export const AccountVideoJobs = named(
  "AccountVideoJobs",
  T.Object({
    object: T.Literal("list"),
    data: T.Array(AccountVideoJob),
    has_more: T.Boolean(),
    next_cursor: T.Union([T.String(), T.Null()]),
  }),
);

export const AdminUserList = named(
  "AdminUserList",
  T.Object({
    object: T.Literal("list"),
    data: T.Array(
      T.Object({
        user_id: T.String({ format: "uuid" }),
        email: T.String(),
        balance_krw: T.Number(),
        held_krw: T.Number(),
        industry: T.String(),
        regulated: T.Boolean(),
        xborder_training_consent: T.Boolean(),
        deleted: T.Boolean(),
        deleted_at: Nullable(T.String({ format: "date-time" })),
        created_at: T.String({ format: "date-time" }),
      }),
    ),
    total: T.Integer({ description: "Accounts matching the filter, all pages" }),
    has_more: T.Boolean(),
    next_cursor: Nullable(T.String({ description: "Pass as `cursor` for the next page" })),
  }),
);

export const EmbeddingList = named(
  "EmbeddingList",
  T.Object({
    object: T.Literal("list"),
    data: T.Array(
      T.Object({
        object: T.Literal("embedding"),
        index: T.Integer(),
        embedding: T.Union([
          T.Array(T.Number()),
          T.String({ description: "base64 of the float32 little-endian values (`encoding_format: base64`)" }),
        ]),
      }),
    ),
    model: T.String(),
    usage: T.Object({ prompt_tokens: T.Integer(), total_tokens: T.Integer() }),
  }),
);
