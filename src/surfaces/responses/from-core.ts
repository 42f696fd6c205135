/**
 * Core outcomes → the Responses wire format: the response object (non-streaming, and inside
 * `response.created` / `response.completed`), its output items and usage, each the static type
 * of its schema in ./schemas.ts.
 *
 * `status` is `completed` for every answer that ended normally (the specification's state
 * table); an answer cut by `max_output_tokens` says so in `incomplete_details`.
 */
import type { Cost } from "../../core/billing/cost";
import type { ChatRequest, ChatResult, FinishReason, ToolCall, Usage } from "../../core/model/types";
import type { UrlCitation } from "../../core/chat/web-search";
import { itemId } from "./ids";
import type { ResponsesBody } from "./schema";
import type {
  DeletedResponse,
  Echo,
  FunctionCallItem,
  MessageItem,
  OutputText,
  OwnOutputItem,
  ResponseObject,
  ResponsesUsage,
  UrlCitationAnnotation,
} from "./schemas";
import type { CostJson } from "../openai/schemas";

export function outputText(text: string, annotations: UrlCitationAnnotation[] = []): OutputText {
  return { type: "output_text", text, annotations };
}

export function citationAnnotations(cites: readonly UrlCitation[] | undefined): UrlCitationAnnotation[] {
  return (cites ?? []).map((c) => ({
    type: "url_citation",
    url: c.url,
    title: c.title,
    start_index: c.start_index,
    end_index: c.end_index,
  }));
}

export function messageItem(
  id: string,
  text: string,
  status: MessageItem["status"] = "completed",
  annotations: UrlCitationAnnotation[] = [],
): MessageItem {
  return {
    id,
    type: "message",
    status,
    role: "assistant",
    content: status === "completed" ? [outputText(text, annotations)] : [],
  };
}

export function functionCallItem(
  id: string,
  call: ToolCall,
  status: FunctionCallItem["status"] = "completed",
): FunctionCallItem {
  return {
    id,
    type: "function_call",
    status,
    arguments: call.function.arguments,
    call_id: call.id || `call_${id.slice(3)}`,
    name: call.function.name,
  };
}

/** The output of a finished answer: its text (if any, or if nothing else), then its calls. */
export function outputItems(r: ChatResult, cites?: readonly UrlCitation[]): OwnOutputItem[] {
  const items: OwnOutputItem[] = [];
  const calls = r.toolCalls ?? [];
  if (r.content || !calls.length)
    items.push(messageItem(itemId("msg"), r.content ?? "", "completed", citationAnnotations(cites)));
  for (const c of calls) items.push(functionCallItem(itemId("fc"), c));
  return items;
}

export function responsesUsage(u: Usage): ResponsesUsage {
  return {
    input_tokens: u.promptTokens,
    input_tokens_details: { cached_tokens: u.cachedTokens },
    output_tokens: u.completionTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens },
    total_tokens: u.promptTokens + u.completionTokens,
  };
}

export function responsesCost(c: Cost): CostJson {
  return { usd: c.usd, krw: c.krw, fx_rate: c.fx_rate, markup_rate: c.markup_rate };
}

/** How a response relates to stored ones: kept or not, and the response it continued. */
export interface Storage {
  store: boolean;
  previousId: string | null;
}

/** The echo of a request as converted: the tools kept (flat), the effective cap and effort. */
export function echoOf(
  body: ResponsesBody,
  req: Omit<ChatRequest, "model">,
  storage: Storage = { store: false, previousId: null },
): Echo {
  const tools = (req.tools ?? []).map((t) => ({
    type: "function" as const,
    name: t.function.name,
    description: t.function.description ?? null,
    parameters: t.function.parameters ?? null,
    strict: t.function.strict ?? null,
  }));
  const effort = req.reasoning_effort;
  return {
    instructions: body.instructions ?? null,
    max_output_tokens: req.max_tokens,
    temperature: body.temperature ?? null,
    top_p: body.top_p ?? null,
    tools,
    tool_choice: tools.length ? (body.tool_choice ?? "auto") : "auto",
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    reasoning: { effort: effort ?? null, summary: null },
    service_tier: body.service_tier ?? null,
    metadata: body.metadata ?? {},
    text: { format: body.text?.format ?? { type: "text" } },
    store: storage.store,
    previous_response_id: storage.previousId,
  };
}

export interface ResponseHead {
  id: string;
  createdAt: number;
  model: string;
  provider: string | null;
  echo: Echo;
}

export interface ResponseTail {
  status: "in_progress" | "completed";
  output: OwnOutputItem[];
  usage: Usage | null;
  finish?: FinishReason;
  cached?: boolean;
  cost?: Cost;
}

export function responseObject(h: ResponseHead, t: ResponseTail): ResponseObject {
  return {
    id: h.id,
    object: "response" as const,
    created_at: h.createdAt,
    status: t.status,
    background: false,
    error: null,
    incomplete_details:
      t.finish === "length"
        ? { reason: "max_output_tokens" }
        : t.finish === "content_filter"
          ? { reason: "content_filter" }
          : null,
    ...h.echo,
    model: h.model,
    output: t.output,
    truncation: "disabled",
    usage: t.usage ? responsesUsage(t.usage) : null,
    user: null,
    // Gateway extensions, as on chat: who answered, and whether the cache did.
    provider: h.provider,
    cached: t.cached ?? false,
    ...(t.cost && { cost: responsesCost(t.cost) }),
  };
}

/** The receipt of a stored response's deletion. */
export function deletedResponse(id: string): DeletedResponse {
  return { id, object: "response", deleted: true };
}
