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
      attempts: Nullable(
        T.Array(
          T.Object({
            provider: T.String(),
            model: T.String(),
            outcome: Nullable(
              T.String({
                description: "ok, retry, fallback, failed, skipped (circuit open), cancelled (hedge lost), continued",
              }),
            ),
            reason: Nullable(T.String({ description: "The failure's kind and reason, e.g. transient/server_error" })),
            status: Nullable(T.Integer({ description: "The upstream's HTTP status" })),
            ms: Nullable(T.Integer()),
          }),
          { description: "Every upstream attempt, in order; null when the first attempt answered (or none was made)" },
        ),
      ),
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

/** One key's calls and spend over a period; `key_id` null for calls made without a key (the console's own). */
const KeyTotal = T.Object({
  key_id: Nullable(T.String()),
  name: Nullable(T.String()),
  deleted: T.Boolean(),
  requests: T.Integer(),
  cost_krw: Krw,
});

export const ActivitySummary = named(
  "ActivitySummary",
  T.Object({
    days: T.Integer(),
    from: Day,
    first_activity: Nullable(Day),
    totals: T.Object({ requests: T.Integer(), cost_krw: Krw, tokens: T.Integer() }),
    month: T.Object({ from: Day, requests: T.Integer(), cost_krw: Krw, by_key: T.Array(KeyTotal) }),
    keys: T.Array(KeyTotal),
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
    by_key: T.Array(T.Object({ date: Day, key_id: Nullable(T.String()), requests: T.Integer(), cost_krw: Krw })),
    by_status: T.Array(T.Object({ date: Day, status: T.Integer(), requests: T.Integer() })),
    latency: T.Array(
      T.Object({ date: Day, provider: T.String(), p50_ms: Nullable(T.Integer()), p95_ms: Nullable(T.Integer()) }),
    ),
    latency_by_modality: T.Array(
      T.Object({ date: Day, modality: T.String(), p50_ms: Nullable(T.Integer()), p95_ms: Nullable(T.Integer()) }),
    ),
    ttft: T.Array(T.Object({ date: Day, p50_ms: Nullable(T.Integer()), p95_ms: Nullable(T.Integer()) })),
  }),
);
