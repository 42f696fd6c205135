/**
 * OpenAI Chat Completions / Embeddings wire shapes (only the fields the adapter reads or
 * writes). Hand-written from the API reference and recorded captures. The answers the
 * adapter reads whole are TypeBox schemas, checked on arrival (../common/wire-check.ts).
 */
import { Type as T, type Static } from "@sinclair/typebox";
import { Count, Maybe, wireCheck } from "../common/wire-check";

export const OpenAIWireUsage = T.Object({
  prompt_tokens: Count,
  completion_tokens: Count,
  total_tokens: Count,
  prompt_tokens_details: Maybe(T.Object({ cached_tokens: Count })),
  completion_tokens_details: Maybe(T.Object({ reasoning_tokens: Count })),
  /** Cache writes, as compatible upstreams that bill them report it. */
  cache_creation_input_tokens: Count,
});
export type OpenAIWireUsage = Static<typeof OpenAIWireUsage>;

const OpenAIWireToolCall = T.Object({
  id: T.String(),
  function: T.Optional(T.Object({ name: T.Optional(T.String()), arguments: T.Optional(T.String()) })),
});

export const OpenAIWireChatResponse = T.Object({
  id: T.Optional(T.String()),
  choices: T.Array(
    T.Object({
      message: T.Optional(T.Object({ content: Maybe(T.String()), tool_calls: Maybe(T.Array(OpenAIWireToolCall)) })),
      finish_reason: Maybe(T.String()),
    }),
  ),
  usage: Maybe(OpenAIWireUsage),
});
export type OpenAIWireChatResponse = Static<typeof OpenAIWireChatResponse>;
export const checkOpenAIChatResponse = wireCheck("chat completion", OpenAIWireChatResponse);

export interface OpenAIWireChunkToolCall {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

export interface OpenAIWireChunk {
  id?: string;
  choices?: Array<{
    index?: number;
    delta?: {
      role?: string;
      content?: string | null;
      refusal?: string | null;
      tool_calls?: OpenAIWireChunkToolCall[] | null;
    };
    finish_reason?: string | null;
  }>;
  usage?: OpenAIWireUsage | null;
  /** A mid-stream failure (openai-node treats any payload with `error` as one). */
  error?: OpenAIWireErrorBody["error"];
}

export interface OpenAIWireErrorBody {
  error?: { message?: string; type?: string | null; param?: string | null; code?: string | number | null } | string;
}

export const OpenAIWireEmbeddingResponse = T.Object({
  data: T.Array(T.Object({ index: T.Optional(T.Number()), embedding: T.Array(T.Number()) })),
  usage: Maybe(T.Object({ prompt_tokens: Count })),
});
export type OpenAIWireEmbeddingResponse = Static<typeof OpenAIWireEmbeddingResponse>;
export const checkOpenAIEmbeddingResponse = wireCheck("embedding list", OpenAIWireEmbeddingResponse);
