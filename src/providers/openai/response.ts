/** OpenAI Chat Completions response → canonical ChatResult, usage and finish reasons. */
import type { ChatResult, FinishReason, ToolCall, Usage } from "../../core/model/types";
import { badAnswer } from "../common/errors";
import type { OpenAIWireChatResponse, OpenAIWireUsage } from "./wire";

/** stop → stop, length → length, tool_calls / function_call → tool_calls, content_filter → content_filter; unknown → stop. */
export function mapOpenAIFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case "length":
      return "length";
    case "tool_calls":
    case "function_call":
      return "tool_calls";
    case "content_filter":
      return "content_filter";
    default:
      return "stop";
  }
}

/**
 * OpenAI usage is already the gateway's convention: cached ⊂ prompt, reasoning ⊂ completion.
 * A compatible upstream that reports cache writes (`cache_creation_input_tokens`, as this
 * gateway's own answers do) has them counted. The raw relay maps its usage chunk here too.
 */
export function mapOpenAIUsage(u: OpenAIWireUsage | null | undefined): Usage {
  return {
    promptTokens: u?.prompt_tokens ?? 0,
    completionTokens: u?.completion_tokens ?? 0,
    cachedTokens: u?.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWriteTokens: u?.cache_creation_input_tokens ?? 0,
    reasoningTokens: u?.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

/** Maps a non-streaming response body. Pure. */
export function fromOpenAIChatResponse(body: OpenAIWireChatResponse): ChatResult {
  const choice = body.choices[0];
  if (!choice) throw badAnswer("upstream response has no choices", 200, body);
  const msg = choice.message ?? {};
  const toolCalls: ToolCall[] | undefined = msg.tool_calls?.map((tc) => ({
    id: tc.id,
    type: "function",
    function: { name: tc.function?.name ?? "", arguments: tc.function?.arguments ?? "" },
  }));
  const result: ChatResult = {
    content: msg.content ?? null,
    finishReason: mapOpenAIFinishReason(choice.finish_reason),
    usage: mapOpenAIUsage(body.usage),
  };
  if (body.id !== undefined) result.id = body.id;
  if (toolCalls?.length) result.toolCalls = toolCalls;
  return result;
}
