/** Gemini generateContent response → canonical ChatResult; finish reasons, usage, tool call ids. */
import type { ChatResult, FinishReason, ToolCall, Usage } from "../../core/model/types";
import type { GeminiWireResponse, GeminiWireUsage } from "./wire";

const FILTER_REASONS = new Set([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY",
  "LANGUAGE",
]);

/**
 * STOP → stop (tool_calls when the answer holds function calls: Gemini has no tool finish
 * reason), MAX_TOKENS → length, SAFETY / RECITATION / BLOCKLIST / PROHIBITED_CONTENT / SPII /
 * IMAGE_SAFETY / LANGUAGE → content_filter, anything else → stop (tool_calls with calls).
 */
export function mapGeminiFinishReason(reason: string | undefined, hasToolCalls: boolean): FinishReason {
  if (reason === "MAX_TOKENS") return "length";
  if (reason !== undefined && FILTER_REASONS.has(reason)) return "content_filter";
  return hasToolCalls ? "tool_calls" : "stop";
}

/**
 * promptTokenCount already includes cachedContentTokenCount; tool-use prompt tokens are input
 * too. candidatesTokenCount excludes thoughts, so completion = candidates + thoughts and
 * reasoning = thoughts. Gemini reports no cache writes.
 */
export function mapGeminiUsage(u: GeminiWireUsage | undefined): Usage {
  const thoughts = u?.thoughtsTokenCount ?? 0;
  return {
    promptTokens: (u?.promptTokenCount ?? 0) + (u?.toolUsePromptTokenCount ?? 0),
    completionTokens: (u?.candidatesTokenCount ?? 0) + thoughts,
    cachedTokens: u?.cachedContentTokenCount ?? 0,
    cacheWriteTokens: 0,
    reasoningTokens: thoughts,
  };
}

/** Gemini's Developer API gives function calls no id: the gateway makes one up. */
export function newGeminiToolCallId(): string {
  return `call_${crypto.randomUUID().replace(/-/g, "").slice(0, 24)}`;
}

/** Maps a non-streaming response body (thought parts are not surfaced). */
export function fromGeminiResponse(body: GeminiWireResponse, newId: () => string = newGeminiToolCallId): ChatResult {
  const candidate = body.candidates?.[0];
  let text: string | null = null;
  const toolCalls: ToolCall[] = [];
  for (const part of candidate?.content?.parts ?? []) {
    if (part.functionCall) {
      toolCalls.push({
        id: part.functionCall.id ?? newId(),
        type: "function",
        function: { name: part.functionCall.name ?? "", arguments: JSON.stringify(part.functionCall.args ?? {}) },
      });
    } else if (typeof part.text === "string" && part.thought !== true) {
      text = (text ?? "") + part.text;
    }
  }
  // No candidate at all: the prompt itself was blocked (promptFeedback.blockReason).
  const finishReason = candidate
    ? mapGeminiFinishReason(candidate.finishReason, toolCalls.length > 0)
    : body.promptFeedback?.blockReason
      ? "content_filter"
      : "stop";
  const result: ChatResult = { content: text, finishReason, usage: mapGeminiUsage(body.usageMetadata) };
  if (body.responseId !== undefined) result.id = body.responseId;
  if (toolCalls.length > 0) result.toolCalls = toolCalls;
  return result;
}
