/**
 * The OpenAI dialect's answer bodies, declared once: the encoders (./chat-from-core.ts,
 * ./embeddings-from-core.ts) return `Static<>` of these schemas, the OpenAPI document shows
 * them, and test/surfaces checks the encoders' output against them. Fields the gateway adds to
 * OpenAI's shapes (`provider`, `cost`, `cached`) are declared here with the rest.
 */
import { Type as T, type Static, type TSchema } from "@sinclair/typebox";
import { named } from "../../lib/named-schema";

export const Nullable = <S extends TSchema>(s: S) => T.Union([s, T.Null()]);

/** What a call cost: USD, KRW, the rate and the markup the KRW amount was computed with. */
export const CostJson = T.Object({ usd: T.Number(), krw: T.Number(), fx_rate: T.Number(), markup_rate: T.Number() });
export type CostJson = Static<typeof CostJson>;

export const ChatUsage = T.Object({
  prompt_tokens: T.Integer(),
  completion_tokens: T.Integer(),
  total_tokens: T.Integer(),
  prompt_tokens_details: T.Object({ cached_tokens: T.Integer() }),
  completion_tokens_details: T.Object({ reasoning_tokens: T.Integer() }),
  cache_creation_input_tokens: T.Optional(T.Integer({ description: "Prompt tokens written to an explicit cache" })),
});
export type ChatUsage = Static<typeof ChatUsage>;

/** A web plugin source in OpenAI's chat shape. */
export const UrlCitationAnnotation = T.Object({
  type: T.Literal("url_citation"),
  url_citation: T.Object({ url: T.String(), title: T.String(), start_index: T.Integer(), end_index: T.Integer() }),
});
export type UrlCitationAnnotation = Static<typeof UrlCitationAnnotation>;

export const ToolCallJson = T.Object({
  id: T.String(),
  type: T.Literal("function"),
  function: T.Object({ name: T.String(), arguments: T.String({ description: "The arguments as a JSON string" }) }),
});

export const FinishReason = T.Union([
  T.Literal("stop"),
  T.Literal("length"),
  T.Literal("tool_calls"),
  T.Literal("content_filter"),
]);

export const ChatMessageJson = T.Object({
  role: T.Literal("assistant"),
  content: Nullable(T.String()),
  tool_calls: T.Optional(T.Array(ToolCallJson)),
  annotations: T.Optional(T.Array(UrlCitationAnnotation)),
});
export type ChatMessageJson = Static<typeof ChatMessageJson>;

export const ChatCompletion = named(
  "ChatCompletion",
  T.Object({
    id: T.String({ description: "`chatcmpl-` and the request id's 32 hex digits" }),
    object: T.Literal("chat.completion"),
    created: T.Integer(),
    model: T.String(),
    provider: Nullable(T.String({ description: "The provider that answered (a gateway extension)" })),
    choices: T.Array(
      T.Object({
        index: T.Integer(),
        message: ChatMessageJson,
        logprobs: T.Null(),
        finish_reason: FinishReason,
      }),
    ),
    usage: ChatUsage,
    cost: CostJson,
    cached: T.Boolean({ description: "Whether the response cache answered" }),
  }),
);
export type ChatCompletion = Static<typeof ChatCompletion>;

/**
 * The embeddings answer. Its encoder writes bytes (the vectors are spooled, never held as one
 * value), so this schema is the contract its output is tested against rather than its type.
 */
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
export type EmbeddingList = Static<typeof EmbeddingList>;
