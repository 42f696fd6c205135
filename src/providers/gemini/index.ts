/**
 * Gemini adapter: `POST {baseUrl}/v1beta/models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse`, key in `x-goog-api-key`.
 */
import type { CallContext, ChatProvider } from "../../core/model/provider";
import type { ChatRequest, ChatResult, StreamEvent } from "../../core/model/types";
import { decodeSse } from "../../lib/sse";
import { joinUrl, postUpstream, postUpstreamJson } from "../common/http";
import { classifyGeminiError } from "./errors";
import { buildGeminiRequest } from "./request";
import { reported } from "../common/dropped";
import { fromGeminiResponse } from "./response";
import { readGeminiStream } from "./stream";
import { checkGeminiResponse } from "./wire";

function geminiUrl(ctx: CallContext, model: string, stream: boolean): string {
  const method = stream ? "streamGenerateContent?alt=sse" : "generateContent";
  return joinUrl(ctx.baseUrl, `/v1beta/models/${encodeURIComponent(model)}:${method}`);
}

function geminiHeaders(ctx: CallContext, stream: boolean): Record<string, string> {
  const h: Record<string, string> = { "x-goog-api-key": ctx.apiKey };
  if (stream) h.accept = "text/event-stream";
  return h;
}

export const geminiChatProvider: ChatProvider = {
  protocol: "gemini",

  async chat(req: ChatRequest, ctx: CallContext): Promise<ChatResult> {
    const answer = await postUpstreamJson(
      geminiUrl(ctx, req.model, false),
      geminiHeaders(ctx, false),
      reported(ctx, buildGeminiRequest(req)),
      ctx,
      classifyGeminiError,
    );
    return fromGeminiResponse(checkGeminiResponse(answer, ctx.providerId));
  },

  async chatStream(req: ChatRequest, ctx: CallContext): Promise<AsyncIterable<StreamEvent>> {
    const { body } = await postUpstream(
      geminiUrl(ctx, req.model, true),
      geminiHeaders(ctx, true),
      reported(ctx, buildGeminiRequest(req)),
      ctx,
      classifyGeminiError,
    );
    return readGeminiStream(decodeSse(body));
  },
};

export {
  toGeminiRequest,
  toGeminiToolConfig,
  toGeminiSchema,
  geminiThinkingConfig,
  GEMINI_THINKING_BUDGETS,
} from "./request";
export { fromGeminiResponse, mapGeminiFinishReason, mapGeminiUsage } from "./response";
export { readGeminiStream } from "./stream";
export { classifyGeminiError, classifyGeminiStreamError, geminiRetryDelayMs } from "./errors";
