/**
 * Anthropic Messages API wire shapes (only what the adapter reads or writes). The answers the
 * adapter reads whole are TypeBox schemas, checked on arrival (../common/wire-check.ts).
 */
import { Type as T, type Static } from "@sinclair/typebox";
import { Count, Maybe, wireCheck } from "../common/wire-check";

export interface AnthropicCacheControl {
  type: "ephemeral";
  ttl?: string;
}

export type AnthropicWireBlock =
  | { type: "text"; text: string; cache_control?: AnthropicCacheControl }
  | {
      type: "image";
      source: { type: "base64"; media_type: string; data: string } | { type: "url"; url: string };
      cache_control?: AnthropicCacheControl;
    }
  | { type: "tool_use"; id: string; name: string; input: unknown; cache_control?: AnthropicCacheControl }
  | {
      type: "tool_result";
      tool_use_id: string;
      content: string | AnthropicWireBlock[];
      cache_control?: AnthropicCacheControl;
    };

export interface AnthropicWireMessage {
  role: "user" | "assistant";
  content: AnthropicWireBlock[];
}

export const AnthropicWireUsage = T.Object({
  input_tokens: Count,
  output_tokens: Count,
  cache_creation_input_tokens: Count,
  cache_read_input_tokens: Count,
  /** The cache writes by TTL (their sum is cache_creation_input_tokens). */
  cache_creation: Maybe(T.Object({ ephemeral_5m_input_tokens: Count, ephemeral_1h_input_tokens: Count })),
  output_tokens_details: Maybe(T.Object({ thinking_tokens: Count })),
  /** The server tools Anthropic ran for the call (billed apart: web searches per 1,000). */
  server_tool_use: Maybe(T.Object({ web_search_requests: Count, web_fetch_requests: Count })),
});
export type AnthropicWireUsage = Static<typeof AnthropicWireUsage>;

/**
 * The answer's blocks: text and tool calls are read, every other type (thinking, server tool
 * results, and types Anthropic adds later) passes unread.
 */
const AnthropicWireAnswerBlock = T.Union([
  T.Object({ type: T.Literal("text"), text: T.String() }),
  T.Object({ type: T.Literal("tool_use"), id: T.String(), name: T.String(), input: T.Unknown() }),
  T.Object({ type: T.String({ pattern: "^(?!(text|tool_use)$)" }) }),
]);

export const AnthropicWireResponse = T.Object({
  id: T.Optional(T.String()),
  content: T.Array(AnthropicWireAnswerBlock),
  stop_reason: Maybe(T.String()),
  usage: T.Optional(AnthropicWireUsage),
});
export type AnthropicWireResponse = Static<typeof AnthropicWireResponse>;
export const checkAnthropicResponse = wireCheck("message", AnthropicWireResponse);

/** count_tokens' answer. */
export const checkAnthropicTokenCount = wireCheck("token count", T.Object({ input_tokens: T.Number() }));

/** One decoded stream event (`event:` name equals `type`). */
export interface AnthropicWireStreamEvent {
  type: string;
  index?: number;
  message?: { id?: string; usage?: AnthropicWireUsage };
  content_block?: { type: string; id?: string; name?: string; input?: unknown; text?: string };
  delta?: {
    type?: string;
    text?: string;
    partial_json?: string;
    thinking?: string;
    signature?: string;
    stop_reason?: string | null;
  };
  usage?: AnthropicWireUsage;
  error?: { type?: string; message?: string };
}

export interface AnthropicWireErrorBody {
  type?: "error";
  error?: { type?: string; message?: string };
  request_id?: string;
}
