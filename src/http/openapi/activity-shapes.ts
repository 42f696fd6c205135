/** Response bodies of the activity endpoints, as documentation (component schemas). */
import { Type as T, type TSchema } from "@sinclair/typebox";
import { named } from "./describe";

const Nullable = <S extends TSchema>(s: S) => T.Union([s, T.Null()]);
const Krw = T.Number({ description: "Korean won (exact, up to 6 decimals)" });
const Day = T.String({ format: "date", description: "UTC day" });

export const ActivityItem = named(
  "ActivityItem",
  T.Object({
    request_id: T.String({ format: "uuid" }),
    created_at: T.String({ format: "date-time" }),
    key_id: Nullable(T.String({ format: "uuid" })),
    model: T.String(),
    provider: Nullable(T.String()),
    modality: T.String({ description: "text, embedding or video" }),
    app: Nullable(T.String({ description: "From the caller's X-Title header" })),
    api: Nullable(
      T.String({
        description: "chat, responses, messages, embeddings or video; null on calls recorded before this was kept",
      }),
    ),
    status: T.Integer({ description: "HTTP status of the call (499: the client hung up)" }),
    error_code: Nullable(T.String({ description: "A failed call's error code" })),
    streamed: Nullable(T.Boolean()),
    prompt_tokens: T.Integer(),
    completion_tokens: T.Integer(),
    cached_tokens: T.Integer(),
    cache_write_tokens: T.Integer(),
    cost_krw: Krw,
    cost_usd: Nullable(T.Number()),
    latency_ms: Nullable(T.Integer()),
    ttft_ms: Nullable(T.Integer({ description: "A stream's time from the request to its first upstream byte" })),
    cache_hit: T.Boolean({ description: "Answered from the response cache" }),
    policy_decision: Nullable(T.String({ description: "A routing-policy call's X-Policy-Decision" })),
  }),
);

export const ActivityPage = named(
  "ActivityPage",
  T.Object({
    object: T.Literal("list"),
    data: T.Array(ActivityItem),
    has_more: T.Boolean(),
    next_cursor: Nullable(T.String({ description: "Pass as cursor for the next page" })),
  }),
);

export const Generation = named(
  "Generation",
  T.Object({
    data: T.Object({
      id: T.String({ format: "uuid", description: "The request id" }),
      created_at: T.String({ format: "date-time" }),
      model: T.String(),
      provider_name: Nullable(T.String()),
      app: Nullable(T.String()),
      api_key_id: Nullable(T.String({ format: "uuid" })),
      status: T.Integer(),
      tokens_prompt: T.Integer(),
      tokens_completion: T.Integer(),
      native_tokens_cached: T.Integer(),
      native_tokens_cache_write: T.Integer(),
      total_cost: Nullable(T.Number({ description: "USD at the call's exchange rate" })),
      total_cost_krw: Krw,
      latency: Nullable(T.Integer({ description: "Milliseconds" })),
      time_to_first_token: Nullable(T.Integer({ description: "Milliseconds (streams)" })),
      streamed: Nullable(T.Boolean()),
      api: Nullable(T.String()),
      error_code: Nullable(T.String()),
      policy_decision: Nullable(T.String()),
      cache_hit: T.Boolean(),
      modality: T.String(),
    }),
  }),
);

export const PolicyDecisions = named(
  "RoutingPolicyDecisions",
  T.Object({
    object: T.Literal("list"),
    data: T.Array(ActivityItem, { description: "The account's latest calls through the policy, newest first" }),
  }),
);

export const ActivitySummary = named(
  "ActivitySummary",
  T.Object({
    days: T.Integer(),
    from: Day,
    totals: T.Object({ requests: T.Integer(), cost_krw: Krw, tokens: T.Integer() }),
    by_model: T.Array(
      T.Object({
        date: Day,
        model: T.String(),
        requests: T.Integer(),
        cost_krw: Krw,
        prompt_tokens: T.Integer(),
        completion_tokens: T.Integer(),
      }),
    ),
    by_status: T.Array(T.Object({ date: Day, status: T.Integer(), requests: T.Integer() })),
    latency: T.Array(
      T.Object({ date: Day, provider: T.String(), p50_ms: Nullable(T.Integer()), p95_ms: Nullable(T.Integer()) }),
    ),
  }),
);
