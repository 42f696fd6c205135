/**
 * OpenAI's Responses API as an upstream (`POST {baseUrl}/v1/responses`), for a call that came
 * in as a Responses call (ChatRequest `responses`): the client's own body with only `model`,
 * `max_output_tokens` (the capped cap), `stream` and `store: false` set; its answer read for
 * the bill (usage: input incl. cached, output incl. reasoning) and kept as the vendor body; its
 * stream scanned for the relay (core/model/relay.ts): every event is forwarded as it came but
 * the closing one (`response.completed` / `response.incomplete`), which the surface writes
 * again with the call's cost. OpenAI's Responses stream has no `[DONE]`.
 */
import type { RawScanner, RawTail, RawVerdict } from "../../core/model/relay";
import { UpstreamError } from "../../core/upstream/error";
import {
  emptyUsage,
  type ChatRequest,
  type ChatResult,
  type FinishReason,
  type ToolCall,
  type Usage,
} from "../../core/model/types";
import { eventJson } from "../../lib/sse-split";
import { badAnswer } from "../common/errors";
import { classifyOpenAIStreamError } from "./errors";

type Obj = Record<string, any>;

/** The body sent: the client's own, with the routed model, the capped cap, `stream` and `store: false`. */
export function responsesBody(req: ChatRequest, stream: boolean): Obj {
  const { stream: _, ...own } = req.responses!.body;
  const body: Obj = { ...own, model: req.model, store: false };
  if (req.max_tokens) body.max_output_tokens = req.max_tokens;
  return stream ? { ...body, stream: true } : body;
}

/** Responses usage → the gateway's: cached ⊂ input, reasoning ⊂ output. */
function mapResponsesUsage(u: Obj | null | undefined): Usage {
  return {
    promptTokens: u?.input_tokens ?? 0,
    completionTokens: u?.output_tokens ?? 0,
    cachedTokens: u?.input_tokens_details?.cached_tokens ?? 0,
    cacheWriteTokens: 0,
    reasoningTokens: u?.output_tokens_details?.reasoning_tokens ?? 0,
  };
}

/** A response object's text, function calls and finish reason (its usage too), as the core reads answers. */
export function fromResponsesObject(body: Obj): ChatResult {
  if (!Array.isArray(body?.output)) throw badAnswer("upstream response has no output", 200, body);
  let content = "";
  const calls: ToolCall[] = [];
  for (const item of body.output as Obj[]) {
    if (item?.type === "message" && Array.isArray(item.content))
      for (const p of item.content) if (p?.type === "output_text" && typeof p.text === "string") content += p.text;
    if (item?.type === "function_call")
      calls.push({
        id: item.call_id ?? "",
        type: "function",
        function: { name: item.name ?? "", arguments: item.arguments ?? "" },
      });
  }
  const finish: FinishReason = calls.length
    ? "tool_calls"
    : body.incomplete_details?.reason === "max_output_tokens"
      ? "length"
      : body.incomplete_details?.reason === "content_filter"
        ? "content_filter"
        : "stop";
  const result: ChatResult = {
    content: content || (calls.length ? null : ""),
    finishReason: finish,
    usage: mapResponsesUsage(body.usage),
  };
  if (typeof body.id === "string") result.id = body.id;
  if (calls.length) result.toolCalls = calls;
  return result;
}

/** The `type` of one Responses SSE event (from its `data:` JSON); null when it has none. */
export function responsesEventType(ev: Uint8Array): { type: string | null; data: Obj | null } {
  const data = eventJson(ev) as Obj | null;
  return { type: typeof data?.type === "string" ? data.type : null, data };
}

const CLOSING = new Set(["response.completed", "response.incomplete"]);

export class ResponsesRawScanner implements RawScanner {
  readonly terminator = "response.completed";
  failure: UpstreamError | null = null;
  private closing: Obj | null = null;
  private first: Obj | null = null;
  private text = "";
  private readonly calls = new Map<number, ToolCall>();
  private errorType: string | undefined;
  private sequence: number | undefined;

  scan(ev: Uint8Array): RawVerdict {
    const { type, data } = responsesEventType(ev);
    if (typeof data?.sequence_number === "number" && type !== "error") this.sequence = data.sequence_number;
    if (type && CLOSING.has(type)) {
      this.closing = data;
      return "end";
    }
    if (type === "error" || type === "response.failed") {
      const err = type === "error" ? data : data?.response?.error;
      this.errorType = typeof err?.code === "string" ? err.code : undefined;
      this.failure = classifyOpenAIStreamError({
        error: { message: err?.message ?? "upstream error", type: err?.type, code: err?.code },
      });
      return "failed";
    }
    if (type === "response.created") this.first = data?.response ?? null;
    else if (type === "response.output_text.delta" && typeof data?.delta === "string") this.text += data.delta;
    else if (type === "response.output_item.added" && data?.item?.type === "function_call") {
      const it = data.item;
      this.calls.set(data.output_index ?? this.calls.size, {
        id: it.call_id ?? "",
        type: "function",
        function: { name: it.name ?? "", arguments: "" },
      });
    } else if (type === "response.function_call_arguments.delta" && typeof data?.delta === "string") {
      const c = this.calls.get(data.output_index);
      if (c) c.function.arguments += data.delta;
    }
    return "forward";
  }

  usage(): Usage | null {
    const u = this.closing?.response?.usage;
    return u ? mapResponsesUsage(u) : null;
  }

  result(): ChatResult {
    if (this.closing?.response) return fromResponsesObject(this.closing.response);
    const calls = [...this.calls.values()];
    const r: ChatResult = {
      content: this.text || (calls.length ? null : ""),
      finishReason: calls.length ? "tool_calls" : "stop",
      usage: emptyUsage(),
    };
    if (calls.length) r.toolCalls = calls;
    return r;
  }

  /** The closing event (re-written with the cost by the surface); no terminator of OpenAI's own follows it. */
  tail(): RawTail {
    const r = this.closing?.response ?? this.first;
    return {
      closing: this.closing,
      terminal: null,
      ...(typeof r?.id === "string" ? { id: r.id } : undefined),
      ...(typeof r?.created_at === "number" ? { created: r.created_at } : undefined),
      ...(this.errorType ? { errorType: this.errorType } : undefined),
      ...(this.sequence !== undefined ? { sequence: this.sequence } : undefined),
    };
  }
}
