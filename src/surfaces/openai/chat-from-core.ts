/**
 * Core outcomes → the OpenAI chat completion wire format (with the gateway's extensions). Each
 * encoder returns the static type of its schema in ./schemas.ts: the schema is the type.
 */
import type { ChatOutcome } from "../../core/chat/plan";
import type { Cost } from "../../core/billing/cost";
import type { Usage } from "../../core/model/types";
import type { UrlCitation } from "../../core/chat/web-search";
import type { ChatCompletion, ChatMessageJson, ChatUsage, CostJson, UrlCitationAnnotation } from "./schemas";

/** Web plugin sources in OpenAI's chat shape: `{type: "url_citation", url_citation: {...}}`. */
export function annotationsJson(cites: readonly UrlCitation[]): UrlCitationAnnotation[] {
  return cites.map((c) => ({
    type: "url_citation",
    url_citation: { url: c.url, title: c.title, start_index: c.start_index, end_index: c.end_index },
  }));
}

export function usageJson(u: Usage): ChatUsage {
  return {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.promptTokens + u.completionTokens,
    prompt_tokens_details: { cached_tokens: u.cachedTokens },
    completion_tokens_details: { reasoning_tokens: u.reasoningTokens },
    ...(u.cacheWriteTokens > 0 ? { cache_creation_input_tokens: u.cacheWriteTokens } : undefined),
  };
}

export function costJson(c: Cost): CostJson {
  return { usd: c.usd, krw: c.krw, fx_rate: c.fx_rate, markup_rate: c.markup_rate };
}

export function completionId(requestId: string): string {
  return `chatcmpl-${requestId.replaceAll("-", "")}`;
}

export function toChatCompletion(
  o: ChatOutcome,
  requestId: string,
  created = Math.floor(Date.now() / 1000),
): ChatCompletion {
  const message: ChatMessageJson = { role: "assistant", content: o.result.content };
  if (o.result.toolCalls?.length) message.tool_calls = o.result.toolCalls;
  if (o.citations?.length) message.annotations = annotationsJson(o.citations);
  return {
    id: completionId(requestId),
    object: "chat.completion",
    created,
    model: o.model,
    provider: o.provider,
    choices: [{ index: 0, message, logprobs: null, finish_reason: o.result.finishReason }],
    usage: usageJson(o.result.usage),
    cost: costJson(o.cost),
    cached: o.cached,
  };
}
