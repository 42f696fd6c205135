/**
 * Typed upstream events (OpenAI, Gemini, or an Anthropic upstream whose answer needs PII
 * restored) encoded as Anthropic's stream: `message_start`, a `ping`, per block
 * `content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta`) /
 * `content_block_stop`, `message_delta` (stop reason and the final usage, with the call's
 * `cost_krw` / `cost_usd`), `message_stop`. Blocks are opened in the order the upstream produces
 * them, each closed before the next opens. A failure after the first byte ends the stream with
 * Anthropic's `error` event; settlement happens before the last event either way.
 */
import type { PiiPort } from "../../core/chat/ports";
import type { ChatOutcome, ChatPlan, ChatService, Cost, OpenedStream } from "../../core/chat/service";
import { emptyUsage, type FinishReason, type ToolCall, type Usage } from "../../core/chat/types";
import { sseStream, type Write } from "../sse-stream";
import { drainTyped, drainedResult, type ToolCallEvent } from "../typed-stream";
import { errorEvent } from "./errors";
import { continuationJson } from "../continuation-json";
import { costFields, stopReason, usageJson, type MessageHead } from "./from-core";

const enc = new TextEncoder();

export interface MessagesStreamMeta extends MessageHead {
  keepaliveMs: number;
}

/** Writes `event: <type>` / `data: {type, ...}` frames and keeps the open block. */
export class BlockWriter {
  private index = -1;
  private open: { kind: "text" } | { kind: "tool"; upstream: number } | null = null;
  private pinged = false;
  /** Upstream tool-call indexes that got a block. */
  private calls = new Set<number>();

  constructor(private write: Write) {}

  emit(type: string, payload: Record<string, unknown> = {}): void {
    this.write(enc.encode(`event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`));
  }

  start(head: MessageHead, input: Usage | null): void {
    // A translated stream learns its usage at the end: message_delta carries the whole of it.
    const usage = { ...usageJson(input ?? emptyUsage()), output_tokens: 0 };
    this.emit("message_start", { message: { id: head.id, type: "message", role: "assistant", model: head.model, content: [], stop_reason: null, stop_sequence: null, usage } });
  }

  text(delta: string): void {
    if (this.open?.kind !== "text") this.begin({ kind: "text" }, { type: "text", text: "" });
    this.emit("content_block_delta", { index: this.index, delta: { type: "text_delta", text: delta } });
  }

  toolCall(ev: ToolCallEvent, call: ToolCall): void {
    if (!(this.open?.kind === "tool" && this.open.upstream === ev.index)) {
      // A fragment of a call already closed (an upstream interleaving calls) cannot reopen it.
      if (this.calls.has(ev.index)) return;
      this.calls.add(ev.index);
      this.begin({ kind: "tool", upstream: ev.index }, { type: "tool_use", id: call.id, name: call.function.name, input: {} });
    }
    if (ev.arguments) this.emit("content_block_delta", { index: this.index, delta: { type: "input_json_delta", partial_json: ev.arguments } });
  }

  /** Closes the open block; an answer with no block at all gets one empty text block. */
  finish(finish: FinishReason, usage: Usage, cost: Cost, extra?: Record<string, unknown>): void {
    if (this.index < 0) this.begin({ kind: "text" }, { type: "text", text: "" });
    this.close();
    this.emit("message_delta", { delta: { stop_reason: stopReason(finish), stop_sequence: null }, usage: { ...usageJson(usage), ...costFields(cost) }, ...extra });
    this.emit("message_stop");
  }

  private begin(open: NonNullable<BlockWriter["open"]>, block: Record<string, unknown>): void {
    this.close();
    this.open = open;
    this.emit("content_block_start", { index: ++this.index, content_block: block });
    if (!this.pinged) {
      this.pinged = true;
      this.emit("ping");
    }
  }

  private close(): void {
    if (!this.open) return;
    this.open = null;
    this.emit("content_block_stop", { index: this.index });
  }
}

/** A live upstream stream (typed events), encoded as Anthropic's events. */
export function messagesEventStream(service: ChatService, plan: ChatPlan, opened: Extract<OpenedStream, { kind: "typed" }>, meta: MessagesStreamMeta, pii?: PiiPort): ReadableStream<Uint8Array> {
  const c = opened.candidate;
  const pump = async (write: Write, gone: () => boolean) => {
    const w = new BlockWriter(write);
    w.start({ id: meta.id, model: c.model.id }, null);
    const mapping = plan.mapping;
    const restorer = mapping && pii ? () => pii.streamUnmasker(mapping) : null;
    const d = await drainTyped(opened.events, restorer, gone, { text: (t) => w.text(t), toolCall: (ev, call) => w.toolCall(ev, call) }, { request_id: plan.caller.requestId, provider: c.provider.id }, plan.caller.lang);
    const received = { usage: d.usage, text: d.text, toolCalls: d.calls.filter(Boolean) };
    if (gone()) {
      opened.abort.abort();
      await service.finishStream(plan, c, { ending: "client_left", ...received });
      return;
    }
    if (!d.failure) {
      const { cost, usage, parts } = await service.finishStream(plan, c, { ending: "complete", ...received, result: drainedResult(d) });
      w.finish(d.finish, usage, cost, continuationJson(parts));
      return;
    }
    opened.abort.abort();
    await service.finishStream(plan, c, { ending: "failed", ...received });
    write(errorEvent(d.failure));
  };
  return sseStream(meta.keepaliveMs, pump, () => service.clientLeft(plan, opened));
}

/** A response-cache hit, replayed as the same event sequence (billed 0, `cost_krw: 0`). */
export function cachedMessagesStream(o: ChatOutcome, meta: MessagesStreamMeta): ReadableStream<Uint8Array> {
  return sseStream(
    meta.keepaliveMs,
    async (write) => {
      const w = new BlockWriter(write);
      w.start({ id: meta.id, model: o.model }, o.result.usage);
      if (o.result.content) w.text(o.result.content);
      o.result.toolCalls?.forEach((call, index) => w.toolCall({ type: "tool_call", index, id: call.id, name: call.function.name, arguments: call.function.arguments }, call));
      w.finish(o.result.finishReason, o.result.usage, o.cost);
    },
    () => {},
  );
}
