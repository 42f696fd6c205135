/**
 * Core outcomes → Anthropic's Message object (non-streaming, and the stream's `message_start`),
 * its stop reason and usage, each the static type of its schema in ./schemas.ts. Anthropic's `input_tokens` excludes cache reads and writes; the
 * core's promptTokens includes them.
 */
import type { Cost } from "../../core/billing/cost";
import type { ChatResult, FinishReason, Usage } from "../../core/model/types";
import type { AnthropicMessage, AnthropicTokenCount, AnthropicUsage, ContentBlock } from "./schemas";

export type StopReason = "end_turn" | "max_tokens" | "tool_use" | "refusal" | "stop_sequence";

/** A message id: `msg_` and the request id's 32 hex digits (the same id as the usage event). */
export function messageId(requestId: string): string {
  return `msg_${requestId.replace(/-/g, "")}`;
}

export function stopReason(f: FinishReason): StopReason {
  if (f === "length") return "max_tokens";
  if (f === "tool_calls") return "tool_use";
  if (f === "content_filter") return "refusal";
  return "end_turn";
}

export function usageJson(u: Usage): AnthropicUsage {
  return {
    input_tokens: Math.max(0, u.promptTokens - u.cachedTokens - u.cacheWriteTokens),
    output_tokens: u.completionTokens,
    cache_creation_input_tokens: u.cacheWriteTokens,
    cache_read_input_tokens: u.cachedTokens,
  };
}

/** The cost as the stream's last usage carries it (an extension: SDKs keep unknown usage fields). */
export function costFields(cost: Cost): { cost_krw: number; cost_usd: number } {
  return { cost_krw: cost.krw, cost_usd: cost.usd };
}

/** Tool arguments (a JSON string) as Anthropic's `input` object; anything else becomes {}. */
export function toolInput(args: string): Record<string, unknown> {
  try {
    const v = JSON.parse(args || "{}");
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

export function contentBlocks(r: Pick<ChatResult, "content" | "toolCalls">): ContentBlock[] {
  const out: ContentBlock[] = [];
  if (r.content || !r.toolCalls?.length) out.push({ type: "text", text: r.content ?? "" });
  for (const c of r.toolCalls ?? [])
    out.push({ type: "tool_use", id: c.id, name: c.function.name, input: toolInput(c.function.arguments) });
  return out;
}

export interface MessageHead {
  id: string;
  model: string;
}

export function messageObject(
  head: MessageHead,
  r: Pick<ChatResult, "content" | "toolCalls" | "finishReason" | "usage">,
  extra: { provider: string | null; cached: boolean },
): AnthropicMessage {
  return {
    id: head.id,
    type: "message",
    role: "assistant",
    model: head.model,
    content: contentBlocks(r),
    stop_reason: stopReason(r.finishReason),
    stop_sequence: null,
    usage: usageJson(r.usage),
    provider: extra.provider,
    cached: extra.cached,
  };
}

/** count_tokens' answer. */
export function tokenCountJson(tokens: number): AnthropicTokenCount {
  return { input_tokens: tokens };
}
