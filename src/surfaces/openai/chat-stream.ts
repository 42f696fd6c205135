/**
 * The client side of a chat stream. From an OpenAI-compatible upstream the events are relayed
 * byte for byte: only `[DONE]`, an error payload and the usage chunk are looked at (by their
 * bytes), and the usage chunk is rewritten to add `cost`. From other upstreams (or when PII
 * placeholders must be restored) typed events are encoded as OpenAI chunks. Either way the
 * stream ends with the usage+cost event and `[DONE]`, or, after a failure, with the
 * `upstream_error` event (partial text) and `[DONE]`; settlement happens before `[DONE]`.
 * A client that hangs up gets nothing more, but the upstream is read on (the chat service cuts
 * it after STREAM_DRAIN_MS) so the call is billed on its usage (ChatService.clientLeft).
 */
import type { PiiPort } from "../../core/chat/ports";
import type { ChatOutcome, ChatPlan, ChatService, OpenedStream } from "../../core/chat/service";
import type { ChatResult, FinishReason, ToolCall, Usage } from "../../core/chat/types";
import { UpstreamError } from "../../core/upstream/error";
import { failureWords, logUpstreamFailure } from "../../core/upstream/words";
import { classifyOpenAIEvent, eventData, SseSplitter } from "../../lib/sse-split";
import { annotationsJson, costJson } from "./chat-from-core";
import { ChunkEncoder, DONE, errorEvent } from "./chunk-encoder";
import { sseStream, type Write } from "../sse-stream";
import { drainTyped, drainedResult } from "../typed-stream";
import { continuationJson } from "../continuation-json";

export interface StreamMeta {
  id: string;
  created: number;
  keepaliveMs: number;
}

const enc = new TextEncoder();

export function chatEventStream(service: ChatService, plan: ChatPlan, opened: OpenedStream, meta: StreamMeta, pii?: PiiPort): ReadableStream<Uint8Array> {
  const pump = opened.kind === "raw" ? (w: Write, gone: () => boolean) => relayRaw(service, plan, opened, meta, w, gone) : (w: Write, gone: () => boolean) => encodeTyped(service, plan, opened, meta, w, gone, pii);
  return sseStream(meta.keepaliveMs, pump, () => service.clientLeft(plan, opened));
}

function toUsage(u: any): Usage {
  return {
    promptTokens: u?.prompt_tokens ?? 0,
    completionTokens: u?.completion_tokens ?? 0,
    cachedTokens: u?.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWriteTokens: u?.cache_creation_input_tokens ?? 0,
    reasoningTokens: u?.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

/** Rebuilds what the forwarded chunks said (only when needed: failure, cache, missing usage). */
function accumulate(events: Uint8Array[]): ChatResult {
  let content = "";
  let finish: FinishReason = "stop";
  const calls: ToolCall[] = [];
  for (const ev of events) {
    const data = eventData(ev);
    if (!data) continue;
    let chunk: any;
    try {
      chunk = JSON.parse(data);
    } catch {
      continue;
    }
    const choice = chunk?.choices?.[0];
    if (!choice) continue;
    if (typeof choice.delta?.content === "string") content += choice.delta.content;
    for (const tc of choice.delta?.tool_calls ?? []) {
      const i = tc.index ?? 0;
      calls[i] ??= { id: tc.id ?? "", type: "function", function: { name: "", arguments: "" } };
      if (tc.id) calls[i]!.id = tc.id;
      if (tc.function?.name) calls[i]!.function.name += tc.function.name;
      if (tc.function?.arguments) calls[i]!.function.arguments += tc.function.arguments;
    }
    if (choice.finish_reason) finish = choice.finish_reason === "tool_calls" || choice.finish_reason === "length" || choice.finish_reason === "content_filter" ? choice.finish_reason : "stop";
  }
  const r: ChatResult = { content: content || (calls.length ? null : ""), finishReason: finish, usage: toUsage(null) };
  if (calls.length) r.toolCalls = calls.filter(Boolean);
  return r;
}

async function relayRaw(service: ChatService, plan: ChatPlan, opened: Extract<OpenedStream, { kind: "raw" }>, meta: StreamMeta, write: Write, gone: () => boolean): Promise<void> {
  const splitter = new SseSplitter();
  const forwarded: Uint8Array[] = [];
  let usageChunk: any = null;
  let done = false;
  let failure: string | null = null;
  const reader = opened.body.getReader();
  try {
    read: for (;;) {
      const { done: end, value } = await reader.read();
      if (end) break;
      for (const ev of splitter.push(value)) {
        const kind = classifyOpenAIEvent(ev);
        if (kind === "chunk") {
          write(ev);
          forwarded.push(ev);
        } else if (kind === "usage") {
          usageChunk = parseJson(eventData(ev));
          if (usageChunk?.choices?.length) {
            write(ev); // usage riding on a content chunk: relay it, the cost event follows
            forwarded.push(ev);
          }
        } else if (kind === "done") {
          done = true;
          break read;
        } else {
          failure = upstreamFailure(plan, opened, new UpstreamError("transient", "in-stream error event", undefined, parseJson(eventData(ev))));
          break read;
        }
      }
    }
  } catch (e) {
    failure = gone() ? "client disconnected" : upstreamFailure(plan, opened, e);
  }
  reader.cancel().catch(() => {});
  if (!done && !failure) failure = upstreamFailure(plan, opened, new UpstreamError("truncated", "upstream stream ended without its terminal marker"));
  const c = opened.candidate;
  const left = gone();
  const usage = usageChunk ? toUsage(usageChunk.usage) : null;
  const needText = !done || !usage || left || plan.cacheMode !== "off" || !!plan.search?.results.length;
  const result = needText ? accumulate(forwarded) : undefined;
  const received = { text: result?.content ?? "", toolCalls: result?.toolCalls ?? [] };
  if (done && !left) {
    if (result && usage) result.usage = usage;
    const { cost, usage: billed } = await service.finishStream(plan, c, { ending: "complete", usage, ...received, result });
    if (result && !usage) result.usage = billed;
    // The one event the gateway writes itself names the catalog model and the provider that
    // answered (the relayed chunks carry the upstream's own model id).
    const cites = service.citations(plan, result?.content ?? null).citations;
    const head = { id: meta.id, created: meta.created, ...streamHead(forwarded, usageChunk), object: "chat.completion.chunk", model: c.model.id, provider: c.provider.id };
    if (cites) write(enc.encode(`data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta: { annotations: annotationsJson(cites) }, finish_reason: null }] })}\n\n`));
    const final = usageChunk ? { ...usageChunk, model: c.model.id, provider: c.provider.id, choices: [], cost: costJson(cost) } : { ...head, choices: [], usage: { prompt_tokens: billed.promptTokens, completion_tokens: billed.completionTokens, total_tokens: billed.promptTokens + billed.completionTokens }, cost: costJson(cost) };
    write(enc.encode(`data: ${JSON.stringify(final)}\n\n`));
    write(DONE);
    return;
  }
  opened.abort.abort();
  if (left) {
    await service.finishStream(plan, c, { ending: "client_left", usage, ...received });
    return;
  }
  write(errorEvent(failure!, received.text));
  await service.finishStream(plan, c, { ending: "failed", usage, ...received });
  write(DONE);
}

/** The upstream's `id` and `created` on the relayed chunks, which the chunks the gateway adds repeat. */
function streamHead(forwarded: Uint8Array[], usageChunk: any): { id?: string; created?: number } {
  const first = usageChunk ?? (forwarded.length ? parseJson(eventData(forwarded[0]!)) : null);
  return { ...(typeof first?.id === "string" && { id: first.id }), ...(typeof first?.created === "number" && { created: first.created }) };
}

/** An upstream event's JSON payload; null when it is not JSON (the relay never throws on it). */
function parseJson(data: string | null): any {
  try {
    return JSON.parse(data ?? "null");
  } catch {
    return null;
  }
}

/** The client's words for a relayed stream's failure; the provider's own goes to the log. */
function upstreamFailure(plan: ChatPlan, opened: OpenedStream, err: unknown): string {
  logUpstreamFailure(err, { request_id: plan.caller.requestId, provider: opened.candidate.provider.id });
  return failureWords(err, plan.caller.lang);
}

async function encodeTyped(service: ChatService, plan: ChatPlan, opened: Extract<OpenedStream, { kind: "typed" }>, meta: StreamMeta, write: Write, gone: () => boolean, pii?: PiiPort): Promise<void> {
  const c = opened.candidate;
  const e = new ChunkEncoder(meta.id, meta.created, c.model.id, c.provider.id);
  const mapping = plan.mapping;
  const restorer = mapping && pii ? () => pii.streamUnmasker(mapping) : null;
  write(e.delta({ role: "assistant", content: "" }));
  const d = await drainTyped(opened.events, restorer, gone, {
    text: (out) => write(e.delta({ content: out })),
    toolCall: (ev) => {
      const fn: Record<string, string> = {};
      if (ev.name) fn.name = ev.name;
      if (ev.arguments !== undefined) fn.arguments = ev.arguments;
      write(e.delta({ tool_calls: [{ index: ev.index, ...(ev.id && { id: ev.id, type: "function" }), function: fn }] }));
    },
  }, { request_id: plan.caller.requestId, provider: c.provider.id }, plan.caller.lang);
  const received = { usage: d.usage, text: d.text, toolCalls: d.calls.filter(Boolean) };
  if (gone()) {
    opened.abort.abort();
    await service.finishStream(plan, c, { ending: "client_left", ...received });
    return;
  }
  if (!d.failure) {
    const cites = service.citations(plan, d.text).citations;
    if (cites) write(e.delta({ annotations: annotationsJson(cites) }));
    write(e.delta({}, d.finish));
    const { cost, usage: billed, parts } = await service.finishStream(plan, c, { ending: "complete", ...received, result: drainedResult(d) });
    write(e.usage(billed, cost, false, continuationJson(parts)));
    write(DONE);
    return;
  }
  opened.abort.abort();
  write(errorEvent(d.failure, d.text));
  await service.finishStream(plan, c, { ending: "failed", ...received });
  write(DONE);
}

/** A response-cache hit, replayed as a stream. */
export function cachedEventStream(o: ChatOutcome, meta: StreamMeta): ReadableStream<Uint8Array> {
  const e = new ChunkEncoder(meta.id, meta.created, o.model, o.provider);
  return sseStream(
    meta.keepaliveMs,
    async (write) => {
      write(e.delta({ role: "assistant", content: "" }));
      if (o.result.content) write(e.delta({ content: o.result.content }));
      o.result.toolCalls?.forEach((tc, index) => write(e.delta({ tool_calls: [{ index, id: tc.id, type: "function", function: tc.function }] })));
      write(e.delta({}, o.result.finishReason));
      write(e.usage(o.result.usage, o.cost, true));
      write(DONE);
    },
    () => {},
  );
}
