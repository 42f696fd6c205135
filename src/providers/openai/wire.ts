/**
 * OpenAI Chat Completions / Embeddings wire shapes (only the fields the adapter reads or
 * writes). Hand-written from the API reference and recorded captures.
 */

export interface OpenAIWireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
  /** Cache writes, as compatible upstreams that bill them report it. */
  cache_creation_input_tokens?: number | null;
}

export interface OpenAIWireToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface OpenAIWireChatResponse {
  id?: string;
  choices?: Array<{
    index?: number;
    message?: { role?: string; content?: string | null; refusal?: string | null; tool_calls?: OpenAIWireToolCall[] | null };
    finish_reason?: string | null;
  }>;
  usage?: OpenAIWireUsage | null;
}

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
    delta?: { role?: string; content?: string | null; refusal?: string | null; tool_calls?: OpenAIWireChunkToolCall[] | null };
    finish_reason?: string | null;
  }>;
  usage?: OpenAIWireUsage | null;
  /** A mid-stream failure (openai-node treats any payload with `error` as one). */
  error?: OpenAIWireErrorBody["error"];
}

export interface OpenAIWireErrorBody {
  error?: { message?: string; type?: string | null; param?: string | null; code?: string | number | null } | string;
}

export interface OpenAIWireEmbeddingResponse {
  data?: Array<{ index?: number; embedding?: number[] }>;
  usage?: { prompt_tokens?: number; total_tokens?: number };
}
