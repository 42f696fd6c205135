/**
 * Canonical chat types: what the gateway core speaks. Client dialects (OpenAI chat,
 * Responses) convert into these; provider adapters convert out of them.
 */

import type { DroppedSetting } from "../upstream/warnings";

export type Role = "system" | "user" | "assistant" | "tool";

export interface TextPart {
  type: "text";
  text: string;
  /**
   * Explicit prompt-caching breakpoint (Anthropic-style); passed to providers that honour it.
   * `ttl` `5m` (default) or `1h`, priced apart (routing/priced-options.ts).
   */
  cache_control?: CacheControl;
}
export interface ImagePart {
  type: "image_url";
  image_url: { url: string; detail?: string };
  cache_control?: CacheControl;
}
export interface CacheControl {
  type: "ephemeral";
  ttl?: string;
}
export type ContentPart = TextPart | ImagePart;

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: Role;
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

export interface FunctionTool {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ToolChoice = "auto" | "none" | "required" | { type: "function"; function: { name: string } };

export type ReasoningEffort = "minimal" | "none" | "low" | "medium" | "high" | "xhigh" | "max";

/** A chat request as the core hands it to a provider adapter. */
export interface ChatRequest {
  /** The provider's own model id (already resolved from the catalog). */
  model: string;
  messages: ChatMessage[];
  max_tokens: number;
  temperature?: number;
  top_p?: number;
  stop?: string | string[];
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  response_format?: Record<string, unknown>;
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  parallel_tool_calls?: boolean;
  logit_bias?: Record<string, number>;
  reasoning_effort?: ReasoningEffort;
  service_tier?: string;
  /** Other client parameters the gateway passes through unvalidated (OpenAI-compatible only). */
  passthrough?: Record<string, unknown>;
  /**
   * Settings of the client's dialect the fields above cannot say (the Messages dialect's
   * `context_management`, `top_k`, its `anthropic-beta` header, …): an adapter that builds its
   * body from this request reports them as dropped (x-gateway-warnings); one that sends the
   * client's own body (`anthropic`) does not, it carries them.
   */
  unmapped?: DroppedSetting[];
  /**
   * The client's own Anthropic Messages call (the Messages dialect): an Anthropic upstream gets
   * `body` as sent, with only `model`, `max_tokens` and `stream` set, instead of the translation
   * of the fields above (thinking signatures, `top_k`, every `cache_control` survive), and the
   * client's `anthropic-beta` header. PII masking masks it in place (chat/pii-native.ts); it is
   * dropped (see `withMessages`) whenever the gateway rewrites the messages otherwise (web
   * search results, a stream continuation, a parallel policy's merge).
   */
  anthropic?: NativeAnthropic;
  /**
   * The client's own Responses call (the Responses dialect, gateway fields removed): an
   * upstream that speaks OpenAI's Responses API (chat/responses-native.ts) gets `body` as sent, with
   * only `model`, `max_output_tokens`, `stream` and `store: false` set, instead of the
   * translation (reasoning items and their `encrypted_content`, `reasoning`, `text.verbosity`,
   * `include` survive). Masked in place (chat/pii-responses.ts); dropped like `anthropic`, and for
   * every other upstream (chat/service.ts).
   */
  responses?: NativeResponses;
}

export interface NativeResponses {
  body: Record<string, unknown>;
}

export interface NativeAnthropic {
  body: Record<string, unknown>;
  beta?: string;
}

/** The request with other messages, without a client's own Anthropic body (it says other ones). */
export function withMessages<
  R extends { messages: ChatMessage[]; anthropic?: NativeAnthropic; responses?: NativeResponses },
>(req: R, messages: ChatMessage[]): R {
  const { anthropic: _, responses: _r, ...rest } = req;
  return { ...rest, messages } as R;
}

/** The request without reasoning: no effort, and no `thinking` in a client's own Anthropic body. */
export function withoutReasoning<
  R extends { reasoning_effort?: ReasoningEffort; anthropic?: NativeAnthropic; responses?: NativeResponses },
>(req: R): R {
  const { reasoning_effort: _, ...rest } = req;
  if (rest.responses) {
    const { reasoning: _x, ...body } = rest.responses.body;
    return { ...rest, responses: { body } } as R;
  }
  if (!rest.anthropic) return rest as R;
  const { thinking: _t, ...body } = rest.anthropic.body;
  return { ...rest, anthropic: { ...rest.anthropic, body } } as R;
}

export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter";

/** Token usage in the gateway's convention (OpenAI's): prompt tokens include cached ones. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens served from the provider's prompt cache (a subset of promptTokens). */
  cachedTokens: number;
  /** Prompt tokens written to an explicit cache (a subset of promptTokens). */
  cacheWriteTokens: number;
  /** Of cacheWriteTokens, those written with a one-hour TTL (billed at their own price). */
  cacheWrite1hTokens?: number;
  /** Web searches the provider ran for the call (Anthropic's `server_tool_use`), priced per 1,000. */
  webSearchRequests?: number;
  /** Web fetches the provider ran for the call (their content is billed as input tokens). */
  webFetchRequests?: number;
  /** Reasoning tokens (a subset of completionTokens). */
  reasoningTokens: number;
}

export function emptyUsage(): Usage {
  return { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
}

export interface ChatResult {
  /** The upstream's completion id, when it gives one. */
  id?: string;
  content: string | null;
  toolCalls?: ToolCall[];
  finishReason: FinishReason;
  usage: Usage;
  /**
   * The upstream's own answer body, as parsed (Anthropic adapter): the same dialect's surface
   * may return it as is (a masked call's with its text and tool inputs restored, chat/pii-native.ts).
   * Never cached.
   */
  vendorBody?: Record<string, unknown>;
}

/** One typed stream event from an adapter (cross-dialect streams). */
export type StreamEvent =
  | { type: "text"; text: string }
  | { type: "tool_call"; index: number; id?: string; name?: string; arguments?: string }
  | { type: "finish"; reason: FinishReason }
  | { type: "usage"; usage: Usage };
