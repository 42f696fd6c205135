/**
 * The Messages dialect's answer bodies, declared once: Anthropic's Message (our own encoding, or
 * an Anthropic upstream's answer relayed as it came), the token count and the error envelope.
 * The encoders (./from-core.ts, ./errors.ts) return `Static<>` of these; the OpenAPI document
 * shows them; test/surfaces checks our answers and relayed ones against them.
 */
import { Type as T, type Static, type TSchema } from "@sinclair/typebox";
import { named } from "../../lib/named-schema";

const Nullable = <S extends TSchema>(s: S) => T.Union([s, T.Null()]);

export const ANTHROPIC_ERROR_TYPES = [
  "invalid_request_error",
  "authentication_error",
  "billing_error",
  "permission_error",
  "not_found_error",
  "request_too_large",
  "rate_limit_error",
  "api_error",
  "overloaded_error",
] as const;
export type AnthropicErrorType = (typeof ANTHROPIC_ERROR_TYPES)[number];

export const AnthropicUsage = T.Object({
  input_tokens: T.Integer({ description: "Prompt tokens neither read from nor written to the cache" }),
  output_tokens: T.Integer(),
  cache_creation_input_tokens: T.Integer(),
  cache_read_input_tokens: T.Integer(),
});
export type AnthropicUsage = Static<typeof AnthropicUsage>;

export const TextBlock = T.Object({ type: T.Literal("text"), text: T.String() });
export const ToolUseBlock = T.Object({
  type: T.Literal("tool_use"),
  id: T.String(),
  name: T.String(),
  input: T.Unknown({ description: "The tool's arguments as an object" }),
});
/** A block only a relayed Anthropic answer has (`thinking`, `redacted_thinking`, server tools' results). */
const RelayedBlock = T.Object(
  { type: T.Intersect([T.String(), T.Not(T.Union([T.Literal("text"), T.Literal("tool_use")]))]) },
  { description: "A block of an Anthropic upstream's own answer, relayed as it came (`thinking`, ...)" },
);

export const ContentBlock = T.Union([TextBlock, ToolUseBlock]);
export type ContentBlock = Static<typeof ContentBlock>;

export const AnthropicMessage = named(
  "AnthropicMessage",
  T.Object({
    id: T.String({
      description: "`msg_` and the request id's 32 hex digits (an Anthropic upstream's own id when relayed)",
    }),
    type: T.Literal("message"),
    role: T.Literal("assistant"),
    model: T.String(),
    content: T.Array(T.Union([TextBlock, ToolUseBlock, RelayedBlock]), {
      description: "`text`, `tool_use` (and `thinking` when an Anthropic upstream's answer is relayed)",
    }),
    stop_reason: Nullable(T.String({ description: "`end_turn`, `max_tokens`, `tool_use`, `refusal`, ..." })),
    stop_sequence: Nullable(T.String()),
    usage: AnthropicUsage,
    provider: T.Optional(Nullable(T.String({ description: "The provider that answered (not on a relayed answer)" }))),
    cached: T.Optional(T.Boolean()),
  }),
);
export type AnthropicMessage = Static<typeof AnthropicMessage>;

export const AnthropicTokenCount = named(
  "AnthropicTokenCount",
  T.Object({
    input_tokens: T.Integer({
      description:
        "Anthropic's count for a model Anthropic answers first, else the gateway's estimate (X-Token-Count-Source says which)",
    }),
  }),
);
export type AnthropicTokenCount = Static<typeof AnthropicTokenCount>;

export const AnthropicError = named(
  "AnthropicError",
  T.Object({
    type: T.Literal("error"),
    error: T.Object({
      type: T.Union(ANTHROPIC_ERROR_TYPES.map((t) => T.Literal(t))),
      message: T.String(),
      code: T.Optional(T.String({ description: "The gateway's error code" })),
    }),
    request_id: T.Optional(T.String()),
  }),
);
export type AnthropicError = Static<typeof AnthropicError>;
