/**
 * The chat completion request as the wire carries it. Only what the Limits table bounds is
 * range-checked (docs/decisions.md #1); other parameters pass through unvalidated, except for the
 * types of what the gateway itself converts (below).
 */
import { t } from "elysia";
import { Type } from "@sinclair/typebox";

/**
 * TypeBox's own integer, not Elysia's `t.Integer`: that one is a Transform that also takes
 * numeric strings, and any Transform in the body schema makes Elysia run a full Decode pass
 * over every request body after validating it (measured on the chat hot path). A JSON body
 * has real numbers, so nothing is lost.
 */
const Int = (o: { minimum: number; maximum: number }) => Type.Integer(o);

export const REASONING_EFFORTS = ["minimal", "none", "low", "medium", "high", "xhigh", "max"] as const;

/**
 * What the gateway reads itself (to convert for Anthropic and Gemini, to estimate, mask and
 * cache) is typed: content parts, tool calls, tools, tool_choice, stop. A wrong type there is
 * a 422 at its `loc`, on every provider alike, never a converter's crash (500) or an
 * upstream's refusal (502). Extra fields inside pass through.
 */
const CacheControl = t.Optional(t.Object({ type: t.String() }));
const TextPart = t.Object(
  { type: t.Literal("text"), text: t.String(), cache_control: CacheControl },
  { additionalProperties: true },
);
const ImagePart = t.Object(
  {
    type: t.Literal("image_url"),
    image_url: t.Object(
      { url: t.String({ minLength: 1 }), detail: t.Optional(t.String()) },
      { additionalProperties: true },
    ),
    cache_control: CacheControl,
  },
  { additionalProperties: true },
);
const Part = t.Union([TextPart, ImagePart]);

const ToolCallSchema = t.Object(
  {
    id: t.String(),
    type: t.Literal("function"),
    function: t.Object({ name: t.String({ minLength: 1 }), arguments: t.String() }, { additionalProperties: true }),
  },
  { additionalProperties: true },
);

const FunctionToolSchema = t.Object(
  {
    type: t.Literal("function"),
    function: t.Object(
      {
        name: t.String({ minLength: 1 }),
        description: t.Optional(t.String()),
        parameters: t.Optional(t.Record(t.String(), t.Any())),
        strict: t.Optional(t.Union([t.Boolean(), t.Null()])),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);

const ToolChoiceSchema = t.Union([
  t.Literal("auto"),
  t.Literal("none"),
  t.Literal("required"),
  t.Object(
    {
      type: t.Literal("function"),
      function: t.Object({ name: t.String({ minLength: 1 }) }, { additionalProperties: true }),
    },
    { additionalProperties: true },
  ),
]);

/**
 * Structured outputs: the gateway converts them for Anthropic and Gemini, so their shape is
 * checked (a `json_schema` without its `json_schema.name` is refused by OpenAI as well).
 */
const JsonSchemaFormat = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 64 }),
    description: t.Optional(t.String()),
    schema: t.Optional(t.Record(t.String(), t.Any())),
    strict: t.Optional(t.Union([t.Boolean(), t.Null()])),
  },
  { additionalProperties: true },
);
/** One object, not a union, so a 422 names the field; `json_schema` for that type: chat-to-core. */
export const ResponseFormatSchema = t.Object(
  {
    type: t.Union([t.Literal("text"), t.Literal("json_object"), t.Literal("json_schema")]),
    json_schema: t.Optional(JsonSchemaFormat),
  },
  { additionalProperties: true },
);

export const ChatMessageSchema = t.Object(
  {
    // `developer` (OpenAI's newer name for system) and `tool` (tool results) are accepted too.
    role: t.Union([
      t.Literal("system"),
      t.Literal("user"),
      t.Literal("assistant"),
      t.Literal("tool"),
      t.Literal("developer"),
    ]),
    content: t.Optional(t.Union([t.String(), t.Array(Part), t.Null()])),
    name: t.Optional(t.String()),
    tool_calls: t.Optional(t.Array(ToolCallSchema)),
    tool_call_id: t.Optional(t.String()),
  },
  { additionalProperties: true },
);

export const ProviderPrefsSchema = t.Object(
  {
    order: t.Optional(t.Array(t.String())),
    only: t.Optional(t.Array(t.String())),
    ignore: t.Optional(t.Array(t.String())),
    sort: t.Optional(t.Union([t.Literal("price"), t.Literal("latency"), t.Literal("throughput")])),
    max_price: t.Optional(
      t.Object({ prompt: t.Optional(t.Number({ minimum: 0 })), completion: t.Optional(t.Number({ minimum: 0 })) }),
    ),
    allow_fallbacks: t.Optional(t.Boolean()),
    hedge: t.Optional(
      t.Boolean({
        description:
          "Hedged request: past the first provider's p95 first-byte time, the next provider is asked too; the first to answer wins. Only on a key whose owner turned hedging on (true elsewhere is ignored, with an x-gateway-warnings entry); false turns it off for this call",
      }),
    ),
    continue_on_failure: t.Optional(
      t.Boolean({
        description:
          "Stream continuation: a stream that breaks mid-answer is continued by the next candidate from the text already sent, as one uninterrupted stream; both parts are billed at their own prices (default false; docs/reliability.md)",
      }),
    ),
  },
  { additionalProperties: true },
);

export const ChatBodySchema = t.Object(
  {
    model: t.String({ minLength: 1, maxLength: 200 }),
    messages: t.Array(ChatMessageSchema, { minItems: 1 }),
    temperature: t.Optional(t.Number({ minimum: 0, maximum: 2 })),
    top_p: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
    max_tokens: t.Optional(Int({ minimum: 1, maximum: 128000 })),
    max_completion_tokens: t.Optional(Int({ minimum: 1, maximum: 128000 })),
    frequency_penalty: t.Optional(t.Number({ minimum: -2, maximum: 2 })),
    presence_penalty: t.Optional(t.Number({ minimum: -2, maximum: 2 })),
    stream: t.Optional(t.Boolean()),
    stop: t.Optional(t.Union([t.String(), t.Array(t.String()), t.Null()])),
    tools: t.Optional(t.Array(FunctionToolSchema)),
    tool_choice: t.Optional(ToolChoiceSchema),
    response_format: t.Optional(t.Union([ResponseFormatSchema, t.Null()])),
    trace_id: t.Optional(t.String({ maxLength: 128 })),
    reasoning_effort: t.Optional(t.Union(REASONING_EFFORTS.map((e) => t.Literal(e)))),
    thinking: t.Optional(t.Boolean()),
    reasoning_mode: t.Optional(t.Union([t.Literal("standard"), t.Literal("pro")])),
    service_tier: t.Optional(t.String()),
    provider: t.Optional(ProviderPrefsSchema),
    plugins: t.Optional(t.Array(t.Object({ id: t.String() }, { additionalProperties: true }))),
  },
  { additionalProperties: true },
);

export type ChatBody = typeof ChatBodySchema.static & Record<string, unknown>;
