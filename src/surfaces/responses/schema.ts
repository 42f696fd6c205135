/**
 * The Responses request (`POST /v1/responses`) as the wire carries it. What the Limits table
 * bounds is range-checked (docs/decisions.md #1); the accepted-but-ignored fields are declared so
 * the contract is visible; anything else unknown is accepted and ignored (it has no chat
 * equivalent to pass through to). An optional field sent as `null` (several SDKs send that
 * for "not given") counts as absent: `dropNulls` runs before validation, so the schema stays
 * plain and its 422 messages specific.
 */
import { t } from "elysia";
import { ProviderPrefsSchema, REASONING_EFFORTS } from "../openai/chat-schema";

const Effort = t.Union(REASONING_EFFORTS.map((e) => t.Literal(e)));
const Mode = t.Union([t.Literal("standard"), t.Literal("pro")]);

/** A content part: `input_text`, `output_text`, `input_image`, ...; checked in to-core. */
const Part = t.Object({ type: t.String({ minLength: 1 }) }, { additionalProperties: true });

export const InputItemSchema = t.Object(
  {
    // `reasoning` items (sent back by clients that keep encrypted reasoning) are dropped;
    // `item_reference` names a stored output item by `id` (history.ts).
    type: t.Optional(
      t.Union([
        t.Literal("message"),
        t.Literal("function_call"),
        t.Literal("function_call_output"),
        t.Literal("reasoning"),
        t.Literal("item_reference"),
      ]),
    ),
    id: t.Optional(t.String()),
    role: t.Optional(t.Union([t.Literal("user"), t.Literal("assistant"), t.Literal("system"), t.Literal("developer")])),
    content: t.Optional(t.Union([t.String(), t.Array(Part), t.Null()])),
    call_id: t.Optional(t.String()),
    name: t.Optional(t.String()),
    arguments: t.Optional(t.String()),
    output: t.Optional(t.Union([t.String(), t.Array(Part)])),
  },
  { additionalProperties: true },
);

/** Any tool; only flat function tools are kept (to-core drops the rest silently). */
const ToolSchema = t.Object(
  {
    type: t.String({ minLength: 1 }),
    name: t.Optional(t.String()),
    description: t.Optional(t.Union([t.String(), t.Null()])),
    parameters: t.Optional(t.Union([t.Record(t.String(), t.Any()), t.Null()])),
    strict: t.Optional(t.Union([t.Boolean(), t.Null()])),
  },
  { additionalProperties: true },
);

const ToolChoiceSchema = t.Union([
  t.Literal("auto"),
  t.Literal("none"),
  t.Literal("required"),
  t.Object({ type: t.String({ minLength: 1 }), name: t.Optional(t.String()) }, { additionalProperties: true }),
]);

/**
 * `text.format`: the Responses spelling of chat's `response_format` (a flat `json_schema`).
 * One object, not a union, so a 422 names the field; `name` and `schema` are required for
 * `json_schema` (to-core).
 */
const TextFormatSchema = t.Object(
  {
    type: t.Union([t.Literal("text"), t.Literal("json_object"), t.Literal("json_schema")]),
    name: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
    schema: t.Optional(t.Record(t.String(), t.Any())),
    description: t.Optional(t.String()),
    strict: t.Optional(t.Union([t.Boolean(), t.Null()])),
  },
  { additionalProperties: true },
);

export const ResponsesBodySchema = t.Object(
  {
    model: t.String({ minLength: 1, maxLength: 200 }),
    input: t.Union([t.String(), t.Array(InputItemSchema, { minItems: 1 })]),
    instructions: t.Optional(t.String()),
    max_output_tokens: t.Optional(t.Integer({ minimum: 1, maximum: 128000 })),
    temperature: t.Optional(t.Number({ minimum: 0, maximum: 2 })),
    top_p: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
    stream: t.Optional(t.Boolean()),
    tools: t.Optional(t.Array(ToolSchema)),
    tool_choice: t.Optional(ToolChoiceSchema),
    parallel_tool_calls: t.Optional(t.Boolean()),
    metadata: t.Optional(t.Record(t.String(), t.Any())),
    reasoning: t.Optional(
      t.Object({ effort: t.Optional(Effort), mode: t.Optional(Mode) }, { additionalProperties: true }),
    ),
    reasoning_effort: t.Optional(Effort),
    reasoning_mode: t.Optional(Mode),
    service_tier: t.Optional(t.String()),
    // Gateway extensions, as on chat: routing preferences and the weighted-policy seed.
    provider: t.Optional(ProviderPrefsSchema),
    trace_id: t.Optional(t.String({ maxLength: 128 })),
    plugins: t.Optional(t.Array(t.Object({ id: t.String() }, { additionalProperties: true }))),
    // Structured outputs (`text.format`), converted to chat's response_format; other `text`
    // fields (verbosity) are accepted and ignored.
    text: t.Optional(
      t.Object({ format: t.Optional(t.Union([TextFormatSchema, t.Null()])) }, { additionalProperties: true }),
    ),
    // Accepted and ignored (the specification's list); with RESPONSES_STORE=on `store: false`
    // keeps an answer from being stored and `previous_response_id` continues a stored one.
    store: t.Optional(t.Any()),
    previous_response_id: t.Optional(t.Any()),
    include: t.Optional(t.Any()),
    prompt_cache_key: t.Optional(t.Any()),
  },
  { additionalProperties: true },
);

/** Removes top-level optional fields whose value is `null` (everything but model and input). */
export function dropNulls(body: unknown): void {
  if (!body || typeof body !== "object" || Array.isArray(body)) return;
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) if (b[k] === null && k !== "model" && k !== "input") delete b[k];
  const r = b.reasoning as Record<string, unknown> | undefined;
  if (r && typeof r === "object") for (const k of Object.keys(r)) if (r[k] === null) delete r[k];
}

export type ResponsesBody = typeof ResponsesBodySchema.static;
export type InputItem = typeof InputItemSchema.static;
