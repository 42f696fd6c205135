/**
 * The Messages dialect's answers (`/v1/messages`), as documentation: Anthropic's Message, its
 * token count and its error envelope, which replaces the gateway's error bodies on these routes.
 */
import { Type as T, type TSchema } from "@sinclair/typebox";
import { named, type ErrorStatus } from "./describe";
import { ANTHROPIC_ERROR_TYPES } from "../../surfaces/anthropic/errors";

const Usage = T.Object({
  input_tokens: T.Integer(),
  output_tokens: T.Integer(),
  cache_creation_input_tokens: T.Integer(),
  cache_read_input_tokens: T.Integer(),
});

export const AnthropicMessage = named(
  "AnthropicMessage",
  T.Object({
    id: T.String({
      description: "`msg_` and the request id's 32 hex digits (an Anthropic upstream's own id when relayed)",
    }),
    type: T.Literal("message"),
    role: T.Literal("assistant"),
    model: T.String(),
    content: T.Array(T.Object({ type: T.String() }, { additionalProperties: true }), {
      description: "`text`, `tool_use` (and `thinking` when an Anthropic upstream's answer is relayed)",
    }),
    stop_reason: T.Union([T.String(), T.Null()]),
    stop_sequence: T.Union([T.String(), T.Null()]),
    usage: Usage,
    provider: T.Optional(T.Union([T.String(), T.Null()])),
    cached: T.Optional(T.Boolean()),
  }),
);

export const AnthropicTokenCount = named(
  "AnthropicTokenCount",
  T.Object({
    input_tokens: T.Integer({
      description:
        "Anthropic's count for a model Anthropic answers first, else the gateway's estimate (X-Token-Count-Source says which)",
    }),
  }),
);

const AnthropicError = named(
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

/** Error answers of the Messages routes: Anthropic's envelope with the gateway's statuses. */
export function anthropicErrors(
  ...statuses: ErrorStatus[]
): Record<string, { description: string; content: { "application/json": { schema: TSchema } } }> {
  return Object.fromEntries(
    statuses.map((s) => [
      s,
      {
        description: `Anthropic's error envelope (status ${s}; 402 is \`billing_error\`)`,
        content: { "application/json": { schema: AnthropicError } },
      },
    ]),
  );
}
