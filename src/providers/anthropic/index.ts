/**
 * Anthropic Messages adapter: `POST {baseUrl}/v1/messages` with `x-api-key` and
 * `anthropic-version: 2023-06-01`. A call that came in as Anthropic Messages (`req.anthropic`)
 * sends the client's own body (PII masked in place when the key masks) and `anthropic-beta`;
 * its raw stream can be relayed as is, or with the masked values restored (relay-restore.ts).
 */
import { type CallContext, type ChatProvider } from "../../core/model/provider";
import type { ChatRequest, ChatResult, StreamEvent } from "../../core/model/types";
import { decodeSse } from "../../lib/sse";
import { joinUrl, postUpstream, postUpstreamJson } from "../common/http";
import { classifyAnthropicError } from "./errors";
import { buildAnthropicRequest } from "./request";
import { reported, type BuiltRequest } from "../common/dropped";
import { fromAnthropicResponse } from "./response";
import { readAnthropicStream } from "./stream";
import { AnthropicRawScanner } from "./relay";
import { AnthropicRawRestorer } from "./relay-restore";
import { anthropicJsonTool } from "./structured";
import { checkAnthropicResponse, checkAnthropicTokenCount } from "./wire";

const ANTHROPIC_VERSION = "2023-06-01";

function anthropicHeaders(req: ChatRequest, ctx: CallContext, stream: boolean): Record<string, string> {
  const h: Record<string, string> = { "x-api-key": ctx.apiKey, "anthropic-version": ANTHROPIC_VERSION };
  if (req.anthropic?.beta) h["anthropic-beta"] = req.anthropic.beta;
  if (stream) h.accept = "text/event-stream";
  return h;
}

/**
 * The client's own body when it sent one (only the routed model, capped max_tokens and stream
 * set: nothing of it is left out), else the translation.
 */
function requestBody(req: ChatRequest, opts: { stream: boolean }): BuiltRequest {
  if (!req.anthropic) return buildAnthropicRequest(req, opts);
  const { stream: _, ...own } = req.anthropic.body;
  const body = { ...own, model: req.model, max_tokens: req.max_tokens };
  return { body: opts.stream ? { ...body, stream: true } : body, dropped: [] };
}

async function openStream(req: ChatRequest, ctx: CallContext): Promise<ReadableStream<Uint8Array>> {
  const { body } = await postUpstream(
    joinUrl(ctx.baseUrl, "/v1/messages"),
    anthropicHeaders(req, ctx, true),
    reported(ctx, requestBody(req, { stream: true })),
    ctx,
    classifyAnthropicError,
  );
  return body;
}

/**
 * What Anthropic's count_tokens takes of a Messages body (it refuses anything else): the prompt
 * and what changes its count (`context_management` edits, `output_config.format`, …), not the
 * answer's settings. The account-bound fields (`workspace_id`, `user_profile_id`,
 * `billing_policy`) are the client's account's, not the gateway's key's: never sent.
 */
const COUNT_FIELDS = [
  "model",
  "messages",
  "system",
  "tools",
  "tool_choice",
  "thinking",
  "mcp_servers",
  "context_management",
  "output_config",
  "output_format",
  "cache_control",
  "speed",
  "compaction",
];

export const anthropicChatProvider: ChatProvider = {
  protocol: "anthropic",

  async chat(req: ChatRequest, ctx: CallContext): Promise<ChatResult> {
    const url = joinUrl(ctx.baseUrl, "/v1/messages");
    const sent = reported(ctx, requestBody(req, { stream: false }));
    const body = checkAnthropicResponse(
      await postUpstreamJson(url, anthropicHeaders(req, ctx, false), sent, ctx, classifyAnthropicError),
      ctx.providerId,
    );
    const result = fromAnthropicResponse(body, anthropicJsonTool(req));
    if (req.anthropic) result.vendorBody = body as Record<string, unknown>;
    return result;
  },

  async chatStream(req: ChatRequest, ctx: CallContext): Promise<AsyncIterable<StreamEvent>> {
    return readAnthropicStream(decodeSse(await openStream(req, ctx)), anthropicJsonTool(req));
  },

  openRawStream: openStream,
  rawScanner: () => new AnthropicRawScanner(),
  rawRestorer: (mapping) => new AnthropicRawRestorer(mapping),

  async countTokens(req: ChatRequest, ctx: CallContext): Promise<number> {
    const full = requestBody(req, { stream: false }).body;
    const body = Object.fromEntries(COUNT_FIELDS.filter((k) => full[k] !== undefined).map((k) => [k, full[k]]));
    const answer = await postUpstreamJson(
      joinUrl(ctx.baseUrl, "/v1/messages/count_tokens"),
      anthropicHeaders(req, ctx, false),
      body,
      ctx,
      classifyAnthropicError,
    );
    return checkAnthropicTokenCount(answer, ctx.providerId).input_tokens;
  },
};

export {
  toAnthropicRequest,
  toAnthropicToolChoice,
  anthropicThinkingBudget,
  ANTHROPIC_THINKING_BUDGETS,
} from "./request";
export { fromAnthropicResponse, mapAnthropicStopReason, mapAnthropicUsage } from "./response";
export { readAnthropicStream } from "./stream";
export { AnthropicRawScanner } from "./relay";
export { AnthropicRawRestorer } from "./relay-restore";
export {
  anthropicStructuredOutput,
  anthropicJsonTool,
  anthropicHasNativeJson,
  ANTHROPIC_JSON_TOOL,
} from "./structured";
export { toAnthropicNativeSchema } from "./native-schema";
export { classifyAnthropicError, classifyAnthropicStreamError, mapAnthropicErrorType } from "./errors";
