/**
 * The routing-policy config DSL (`config` of a policy) as one TypeBox schema: validated on
 * create and patch (422 with `loc` on a mismatch), documented in docs/routing-policies.md.
 * Every key is optional; keys that belong to another policy type are accepted and inert, so
 * changing `policy_type` never makes a stored config invalid. Unknown keys are refused, so a
 * typo (`hard_category`) is a 422 instead of a silently ignored setting.
 */
import { Type, type Static } from "@sinclair/typebox";
import { CATEGORIES } from "./classify";

const Category = Type.Union(CATEGORIES.map((c) => Type.Literal(c)));
const ModelId = Type.String({ minLength: 1, maxLength: 100 });
const ProviderIds = Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 20 });

/** Provider preferences, the same shape as a chat request's `provider` object. */
export const RoutingPrefsSchema = Type.Object(
  {
    order: Type.Optional(ProviderIds),
    only: Type.Optional(ProviderIds),
    ignore: Type.Optional(ProviderIds),
    sort: Type.Optional(Type.Union([Type.Literal("price"), Type.Literal("latency"), Type.Literal("throughput")])),
    max_price: Type.Optional(
      Type.Object(
        { prompt: Type.Optional(Type.Number({ minimum: 0 })), completion: Type.Optional(Type.Number({ minimum: 0 })) },
        { additionalProperties: false },
      ),
    ),
    allow_fallbacks: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const LimitsSchema = Type.Object(
  {
    /** The most one call may cost, in KRW (the worst case is checked before the hold). */
    max_cost_krw: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 10_000_000 })),
    /** How many times a call may move on to the next entry or tier (0 = the first only). */
    max_escalations: Type.Optional(Type.Integer({ minimum: 0, maximum: 9 })),
    /** Wall-clock budget of the whole call, in milliseconds. */
    deadline_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
  },
  { additionalProperties: false },
);

export const ResponseCheckSchema = Type.Object(
  {
    /** Refuse an answer with no text (whitespace only) and no tool call. Default true. */
    empty: Type.Optional(Type.Boolean()),
    /** Refuse an answer that opens with a refusal ("I can't help with that", "죄송하지만 ..."). Default true. */
    refusal: Type.Optional(Type.Boolean()),
    /** Refuse an answer cut by `max_tokens` (finish_reason `length`). Default true. */
    truncated: Type.Optional(Type.Boolean()),
    /** Refuse an answer that is not JSON when the request asked for JSON (`response_format`). Default true. */
    invalid_json: Type.Optional(Type.Boolean()),
    /** Refuse an answer shorter than this many characters. Default 0. */
    min_chars: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
    /** Refuse an answer that lacks any of these substrings (case-insensitive). */
    must_include: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 20 })),
  },
  { additionalProperties: false },
);

export const SynthesisSchema = Type.Union([
  ModelId,
  Type.Object(
    {
      model: ModelId,
      /** Extra instructions for the merge (appended to the built-in ones). */
      instructions: Type.Optional(Type.String({ maxLength: 2000 })),
    },
    { additionalProperties: false },
  ),
]);

export const LatencyConfigSchema = Type.Object(
  {
    /** What "fast" means: time to first token, total time, or their mean (default). */
    metric: Type.Optional(Type.Union([Type.Literal("ttft"), Type.Literal("total"), Type.Literal("blend")])),
    /** Share of calls sent to a random other entry so a recovered model is measured again. Default 0.05. */
    exploration: Type.Optional(Type.Number({ minimum: 0, maximum: 0.5 })),
  },
  { additionalProperties: false },
);

export const PolicyConfigSchema = Type.Object(
  {
    // cascade
    response_check: Type.Optional(ResponseCheckSchema),
    judge_model: Type.Optional(ModelId),
    hard_categories: Type.Optional(Type.Array(Category, { maxItems: CATEGORIES.length })),
    // parallel
    deep_categories: Type.Optional(Type.Array(Category, { maxItems: CATEGORIES.length })),
    synthesis: Type.Optional(SynthesisSchema),
    // latency
    latency: Type.Optional(LatencyConfigSchema),
    // common
    routing_prefs: Type.Optional(RoutingPrefsSchema),
    limits: Type.Optional(LimitsSchema),
  },
  { additionalProperties: false },
);

export type PolicyConfig = Static<typeof PolicyConfigSchema>;
export type ResponseCheck = Static<typeof ResponseCheckSchema>;
export type PolicyLimits = Static<typeof LimitsSchema>;
export type RoutingPrefs = Static<typeof RoutingPrefsSchema>;

/** The models a config names (judge, synthesis), with their JSON path for error messages. */
export function configModels(config: PolicyConfig): { path: string; model: string }[] {
  const out: { path: string; model: string }[] = [];
  if (config.judge_model) out.push({ path: "config.judge_model", model: config.judge_model });
  if (config.synthesis !== undefined) {
    out.push(
      typeof config.synthesis === "string"
        ? { path: "config.synthesis", model: config.synthesis }
        : { path: "config.synthesis.model", model: config.synthesis.model },
    );
  }
  return out;
}
