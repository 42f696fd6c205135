/** Anthropic Messages response → canonical ChatResult; stop reasons and usage. */
import type { ChatResult, FinishReason, ToolCall, Usage } from "../../core/model/types";
import type { AnthropicWireResponse, AnthropicWireUsage } from "./wire";

/**
 * end_turn, stop_sequence, pause_turn → stop; max_tokens, model_context_window_exceeded →
 * length; tool_use → tool_calls; refusal → content_filter; anything else → stop.
 */
export function mapAnthropicStopReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    default:
      return "stop";
  }
}

/**
 * Anthropic's `input_tokens` excludes cache reads and writes; the gateway's promptTokens
 * includes them: prompt = input + cache_creation + cache_read, cached = cache_read,
 * cacheWrite = cache_creation (of which `cache_creation.ephemeral_1h_input_tokens` were
 * written with a one-hour TTL, priced apart); the server tools it ran (`server_tool_use`:
 * web searches, priced per 1,000, and web fetches) are counted too. Thinking is part of output_tokens;
 * reasoningTokens is `output_tokens_details.thinking_tokens` when reported, else 0.
 */
export function mapAnthropicUsage(u: AnthropicWireUsage | undefined): Usage {
  const input = u?.input_tokens ?? 0;
  const write = u?.cache_creation_input_tokens ?? 0;
  const read = u?.cache_read_input_tokens ?? 0;
  const usage: Usage = {
    promptTokens: input + write + read,
    completionTokens: u?.output_tokens ?? 0,
    cachedTokens: read,
    cacheWriteTokens: write,
    reasoningTokens: u?.output_tokens_details?.thinking_tokens ?? 0,
  };
  const long = u?.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  if (long > 0) usage.cacheWrite1hTokens = long;
  const searches = u?.server_tool_use?.web_search_requests ?? 0;
  if (searches > 0) usage.webSearchRequests = searches;
  const fetches = u?.server_tool_use?.web_fetch_requests ?? 0;
  if (fetches > 0) usage.webFetchRequests = fetches;
  return usage;
}

/**
 * Maps a non-streaming response body (thinking blocks are not surfaced). Pure. `jsonTool`
 * names the forced tool of a structured-output request (structured.ts): its input is the
 * answer, so it becomes the content (any text around it is dropped, the content must parse)
 * and, unless the caller's own tools were called too, the finish reason is `stop`.
 */
export function fromAnthropicResponse(body: AnthropicWireResponse, jsonTool?: string): ChatResult {
  let text: string | null = null;
  let json: string | undefined;
  const toolCalls: ToolCall[] = [];
  for (const block of body.content ?? []) {
    if (block.type === "text") text = (text ?? "") + (block as { text: string }).text;
    else if (block.type === "tool_use") {
      const b = block as { id: string; name: string; input: unknown };
      const args = JSON.stringify(b.input ?? {});
      if (jsonTool !== undefined && b.name === jsonTool) json = args;
      else toolCalls.push({ id: b.id, type: "function", function: { name: b.name, arguments: args } });
    }
  }
  let finishReason = mapAnthropicStopReason(body.stop_reason);
  if (json !== undefined && finishReason === "tool_calls" && toolCalls.length === 0) finishReason = "stop";
  const result: ChatResult = {
    content: json ?? text,
    finishReason,
    usage: mapAnthropicUsage(body.usage),
  };
  if (body.id !== undefined) result.id = body.id;
  if (toolCalls.length > 0) result.toolCalls = toolCalls;
  return result;
}
