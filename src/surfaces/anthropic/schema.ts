/**
 * The Anthropic Messages request (`POST /v1/messages`, and `/v1/messages/count_tokens`) as the
 * wire carries it. The fields the gateway reads are typed, so a wrong type is a 422 at its
 * `loc` on every provider alike; content blocks are checked by type in to-core.ts. Ranges are
 * Anthropic's own (`temperature` 0–1, `max_tokens` required). Anything else unknown is accepted:
 * an Anthropic upstream receives it (the client's own body), the others have no place for it
 * (unmapped.ts reports it). Messages may be `system` ones anywhere (Anthropic's mid-conversation
 * system messages, which Claude Code sends): their `content` may be absent when they only carry
 * `output_config`, so a missing `content` of a user or assistant turn is to-core's 422.
 */
import { t } from "elysia";
import { Type } from "@sinclair/typebox";
import { ProviderPrefsSchema } from "../openai/chat-schema";

// TypeBox's integer, not Elysia's Transform (see chat-schema.ts).
const Int = (o: { minimum: number; maximum?: number }) => Type.Integer(o);

/** A content block: `text`, `image`, `tool_use`, `tool_result`, `thinking`, ...; checked in to-core. */
const Block = t.Object({ type: t.String({ minLength: 1 }) }, { additionalProperties: true });

const MessageSchema = t.Object(
  {
    role: t.Union([t.Literal("user"), t.Literal("assistant"), t.Literal("system")]),
    content: t.Optional(t.Union([t.String(), t.Array(Block)])),
  },
  { additionalProperties: true },
);

/** A custom tool (`input_schema`) or one of Anthropic's server tools (`type` set, e.g. `web_search_20250305`). */
const ToolSchema = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 128 }),
    type: t.Optional(t.String()),
    description: t.Optional(t.String()),
    input_schema: t.Optional(t.Record(t.String(), t.Any())),
  },
  { additionalProperties: true },
);

const ToolChoiceSchema = t.Object(
  {
    type: t.Union([t.Literal("auto"), t.Literal("any"), t.Literal("tool"), t.Literal("none")]),
    name: t.Optional(t.String()),
    disable_parallel_tool_use: t.Optional(t.Boolean()),
  },
  { additionalProperties: true },
);

const ThinkingSchema = t.Object(
  {
    type: t.Union([t.Literal("enabled"), t.Literal("disabled"), t.Literal("adaptive"), t.Literal("between_tools")]),
    budget_tokens: t.Optional(Int({ minimum: 1024 })),
  },
  { additionalProperties: true },
);

/** Anthropic's effort levels (`output_config.effort`, also per system message). */
export const EFFORTS = ["low", "medium", "high", "xhigh", "max"] as const;
const EffortSchema = t.Union(EFFORTS.map((e) => t.Literal(e)));

/** `output_config`: the effort, and `format` (structured output: a JSON schema the answer follows). */
const OutputConfigSchema = t.Object(
  {
    effort: t.Optional(t.Union([EffortSchema, t.Null()])),
    format: t.Optional(
      t.Union([
        t.Object(
          { type: t.Literal("json_schema"), schema: t.Record(t.String(), t.Any()) },
          { additionalProperties: true },
        ),
        t.Null(),
      ]),
    ),
  },
  { additionalProperties: true },
);

const SystemSchema = t.Union([t.String(), t.Array(Block)]);

/** What count_tokens reads: the prompt without the answer's settings. */
export const CountTokensBodySchema = t.Object(
  {
    model: t.String({ minLength: 1, maxLength: 200 }),
    messages: t.Array(MessageSchema, { minItems: 1 }),
    system: t.Optional(SystemSchema),
    tools: t.Optional(t.Array(ToolSchema)),
    tool_choice: t.Optional(ToolChoiceSchema),
    thinking: t.Optional(ThinkingSchema),
    output_config: t.Optional(OutputConfigSchema),
  },
  { additionalProperties: true },
);

export const MessagesBodySchema = t.Object(
  {
    model: t.String({ minLength: 1, maxLength: 200 }),
    max_tokens: Int({ minimum: 1, maximum: 128000 }),
    messages: t.Array(MessageSchema, { minItems: 1 }),
    system: t.Optional(SystemSchema),
    stop_sequences: t.Optional(t.Array(t.String())),
    stream: t.Optional(t.Boolean()),
    temperature: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
    top_p: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
    top_k: t.Optional(Int({ minimum: 0 })),
    tools: t.Optional(t.Array(ToolSchema)),
    tool_choice: t.Optional(ToolChoiceSchema),
    thinking: t.Optional(ThinkingSchema),
    output_config: t.Optional(OutputConfigSchema),
    metadata: t.Optional(
      t.Object(
        { user_id: t.Optional(t.Union([t.String({ maxLength: 256 }), t.Null()])) },
        { additionalProperties: true },
      ),
    ),
    // Gateway extensions, as on chat: routing preferences and the weighted-policy seed. Never sent upstream.
    provider: t.Optional(ProviderPrefsSchema),
    trace_id: t.Optional(t.String({ maxLength: 128 })),
  },
  { additionalProperties: true },
);

/** The fields that are the gateway's, not Anthropic's: removed from the body an Anthropic upstream gets. */
export const GATEWAY_FIELDS = ["provider", "trace_id"] as const;

export type MessagesBody = typeof MessagesBodySchema.static;
export type CountTokensBody = typeof CountTokensBodySchema.static;
export type MessageParam = typeof MessageSchema.static;
export type RawBlock = { type: string } & Record<string, unknown>;
