/** Anthropic Messages API wire shapes (only what the adapter reads or writes). */

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

export interface AnthropicWireUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  /** The cache writes by TTL (their sum is cache_creation_input_tokens). */
  cache_creation?: { ephemeral_5m_input_tokens?: number | null; ephemeral_1h_input_tokens?: number | null } | null;
  output_tokens_details?: { thinking_tokens?: number | null } | null;
}

export interface AnthropicWireResponse {
  id?: string;
  content?: Array<
    | { type: "text"; text: string }
    | { type: "tool_use"; id: string; name: string; input: unknown }
    | { type: "thinking" | "redacted_thinking"; [k: string]: unknown }
  >;
  stop_reason?: string | null;
  usage?: AnthropicWireUsage;
}

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
