/**
 * Anthropic Messages adapter: `POST {baseUrl}/v1/messages` with `x-api-key` and
 * `anthropic-version: 2023-06-01`.
 */
import type { CallContext, ChatProvider } from "../../core/chat/provider";
import type { ChatRequest, ChatResult, StreamEvent } from "../../core/chat/types";
import { decodeSse } from "../../lib/sse";
import { joinUrl, postUpstream, postUpstreamJson } from "../shared/http";
import { classifyAnthropicError } from "./errors";
import { toAnthropicRequest } from "./request";
import { fromAnthropicResponse } from "./response";
import { readAnthropicStream } from "./stream";
import { anthropicJsonTool } from "./structured";
import type { AnthropicWireResponse } from "./wire";

export const ANTHROPIC_VERSION = "2023-06-01";

function anthropicHeaders(ctx: CallContext, stream: boolean): Record<string, string> {
  const h: Record<string, string> = { "x-api-key": ctx.apiKey, "anthropic-version": ANTHROPIC_VERSION };
  if (stream) h.accept = "text/event-stream";
  return h;
}

export const anthropicChatProvider: ChatProvider = {
  protocol: "anthropic",

  async chat(req: ChatRequest, ctx: CallContext): Promise<ChatResult> {
    const url = joinUrl(ctx.baseUrl, "/v1/messages");
    const body = await postUpstreamJson(url, anthropicHeaders(ctx, false), toAnthropicRequest(req, { stream: false }), ctx, classifyAnthropicError);
    return fromAnthropicResponse(body as AnthropicWireResponse, anthropicJsonTool(req));
  },

  async chatStream(req: ChatRequest, ctx: CallContext): Promise<AsyncIterable<StreamEvent>> {
    const url = joinUrl(ctx.baseUrl, "/v1/messages");
    const { body } = await postUpstream(url, anthropicHeaders(ctx, true), toAnthropicRequest(req, { stream: true }), ctx, classifyAnthropicError);
    return readAnthropicStream(decodeSse(body), anthropicJsonTool(req));
  },
};

export { toAnthropicRequest, toAnthropicToolChoice, anthropicThinkingBudget, ANTHROPIC_THINKING_BUDGETS } from "./request";
export { fromAnthropicResponse, mapAnthropicStopReason, mapAnthropicUsage } from "./response";
export { readAnthropicStream } from "./stream";
export { anthropicStructuredOutput, anthropicJsonTool, anthropicHasNativeJson, ANTHROPIC_JSON_TOOL } from "./structured";
export { toAnthropicNativeSchema } from "./native-schema";
export { classifyAnthropicError, classifyAnthropicStreamError, mapAnthropicErrorType } from "./errors";
