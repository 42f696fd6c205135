/**
 * An Anthropic upstream's stream relayed to a Messages client byte for byte. Only the event
 * names are looked at; `message_start` and `message_delta` are parsed for the usage. The one
 * event rewritten is `message_delta`: held back until `message_stop`, the call is settled, and
 * it goes out with the call's `cost_krw` / `cost_usd` added to its usage. An upstream `error`
 * event, a cut connection or an end without `message_stop` ends the stream with our own
 * `error` event (our words, never the vendor's); only what was received is billed.
 */
import type { ChatPlan, ChatService, OpenedStream } from "../../core/chat/service";
import type { ChatResult, FinishReason, ToolCall } from "../../core/chat/types";
import { UpstreamError } from "../../core/upstream/error";
import { failureWords, logUpstreamFailure } from "../../core/upstream/words";
import { eventData, SseSplitter } from "../../lib/sse-split";
import { sseStream, type Write } from "../sse-stream";
import { ANTHROPIC_ERROR_TYPES, errorEvent, type AnthropicErrorType } from "./errors";
import { costFields, coreUsage, type WireUsage } from "./from-core";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** The `event:` name of one SSE event (Anthropic always sends it first). */
export function eventName(ev: Uint8Array): string | null {
  const m = /^event:\s?([A-Za-z_]+)/.exec(dec.decode(ev.subarray(0, 48)));
  return m ? m[1]! : null;
}

function json(ev: Uint8Array): any {
  try {
    return JSON.parse(eventData(ev) ?? "null");
  } catch {
    return null;
  }
}

const FINISH: Record<string, FinishReason> = { max_tokens: "length", model_context_window_exceeded: "length", tool_use: "tool_calls", refusal: "content_filter" };

/** What the relayed blocks said (only when needed: failure, a client gone, the cache, no usage). */
function accumulate(events: Uint8Array[], stop: string | null): ChatResult {
  let content = "";
  const calls = new Map<number, ToolCall>();
  for (const ev of events) {
    const e = json(ev);
    if (e?.type === "content_block_start" && e.content_block?.type === "tool_use") calls.set(e.index, { id: e.content_block.id ?? "", type: "function", function: { name: e.content_block.name ?? "", arguments: "" } });
    else if (e?.type === "content_block_start" && e.content_block?.type === "text") content += e.content_block.text ?? "";
    else if (e?.type === "content_block_delta" && e.delta?.type === "text_delta") content += e.delta.text ?? "";
    else if (e?.type === "content_block_delta" && e.delta?.type === "input_json_delta") {
      const c = calls.get(e.index);
      if (c) c.function.arguments += e.delta.partial_json ?? "";
    }
  }
  const toolCalls = [...calls.values()];
  const r: ChatResult = { content: content || (toolCalls.length ? null : ""), finishReason: (stop && FINISH[stop]) || "stop", usage: coreUsage({}) };
  if (toolCalls.length) r.toolCalls = toolCalls;
  return r;
}

export function relayMessagesStream(service: ChatService, plan: ChatPlan, opened: Extract<OpenedStream, { kind: "raw" }>, keepaliveMs: number): ReadableStream<Uint8Array> {
  return sseStream(keepaliveMs, (w, gone) => relay(service, plan, opened, w, gone), () => service.clientLeft(plan, opened));
}

async function relay(service: ChatService, plan: ChatPlan, opened: Extract<OpenedStream, { kind: "raw" }>, write: Write, gone: () => boolean): Promise<void> {
  const splitter = new SseSplitter();
  const forwarded: Uint8Array[] = [];
  let usage: WireUsage = {};
  let delta: any = null;
  let stop: Uint8Array | null = null;
  // Why the stream broke off, in the client's words (the provider's own go to the log).
  const broke: { words: string; type: AnthropicErrorType }[] = [];
  const fail = (e: unknown, type: AnthropicErrorType = "api_error") => {
    logUpstreamFailure(e, { request_id: plan.caller.requestId, provider: opened.candidate.provider.id });
    broke.push({ words: failureWords(e, plan.caller.lang), type });
  };
  const reader = opened.body.getReader();
  try {
    read: for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const ev of splitter.push(value)) {
        const name = eventName(ev);
        if (name === "message_delta") {
          delta = json(ev);
          Object.assign(usage, delta?.usage);
        } else if (name === "message_stop") {
          stop = ev;
          break read;
        } else if (name === "error") {
          const payload = json(ev);
          const type = ANTHROPIC_ERROR_TYPES.find((t) => t === payload?.error?.type) ?? "api_error";
          fail(new UpstreamError("transient", "in-stream error event", undefined, payload), type);
          break read;
        } else {
          if (name === "message_start") usage = { ...json(ev)?.message?.usage };
          write(ev);
          forwarded.push(ev);
        }
      }
    }
  } catch (e) {
    if (!gone()) fail(e);
  }
  reader.cancel().catch(() => {});
  if (!stop && !broke.length && !gone()) fail(new UpstreamError("truncated", "upstream stream ended without message_stop"));
  const c = opened.candidate;
  const left = gone();
  const billed = delta ? coreUsage(usage) : null;
  const needText = !stop || !billed || left || plan.cacheMode !== "off";
  const result = needText ? accumulate(forwarded, delta?.delta?.stop_reason ?? null) : undefined;
  const received = { text: result?.content ?? "", toolCalls: result?.toolCalls ?? [] };
  if (stop && !left) {
    if (result && billed) result.usage = billed;
    const { cost } = await service.finishStream(plan, c, { ending: "complete", usage: billed, ...received, result });
    const final = delta ?? { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: {} };
    write(enc.encode(`event: message_delta\ndata: ${JSON.stringify({ ...final, usage: { ...final.usage, ...costFields(cost) } })}\n\n`));
    write(stop);
    return;
  }
  opened.abort.abort();
  if (left) {
    await service.finishStream(plan, c, { ending: "client_left", usage: billed, ...received });
    return;
  }
  await service.finishStream(plan, c, { ending: "failed", usage: billed, ...received });
  write(errorEvent(broke[0]!.words, broke[0]!.type));
}
