/**
 * Typed upstream events (OpenAI, Gemini, or an Anthropic upstream whose answer needs PII
 * restored) encoded as Anthropic's stream: `message_start`, a `ping`, per block
 * `content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta`) /
 * `content_block_stop`, `message_delta` (stop reason and the final usage, with the call's
 * `cost_krw` / `cost_usd`), `message_stop`. Blocks are opened in the order the upstream produces
 * them, each closed before the next opens. A failure after the first byte ends the stream with
 * Anthropic's `error` event; the call's stream (core/chat/call-stream.ts) is settled before
 * its final event, so the last frames carry the cost. A cache hit is encoded the same way.
 */
import type { CallStream, ToolCallEvent } from "../../core/chat/call-stream";
import type { Cost } from "../../core/billing/cost";
import { emptyUsage, type FinishReason, type ToolCall, type Usage } from "../../core/model/types";
import { sseStream, type Write } from "../sse-stream";
import { errorEvent } from "./errors";
import { continuationJson } from "../continuation-json";
import { costFields, stopReason, usageJson, type MessageHead } from "./from-core";

const enc = new TextEncoder();

export interface MessagesStreamMeta {
  /** The message id. */
  id: string;
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
    this.emit("message_start", {
      message: {
        id: head.id,
        type: "message",
        role: "assistant",
        model: head.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage,
      },
    });
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
      this.begin(
        { kind: "tool", upstream: ev.index },
        { type: "tool_use", id: call.id, name: call.function.name, input: {} },
      );
    }
    if (ev.arguments)
      this.emit("content_block_delta", {
        index: this.index,
        delta: { type: "input_json_delta", partial_json: ev.arguments },
      });
  }

  /** Closes the open block; an answer with no block at all gets one empty text block. */
  finish(finish: FinishReason, usage: Usage, cost: Cost, extra?: Record<string, unknown>): void {
    if (this.index < 0) this.begin({ kind: "text" }, { type: "text", text: "" });
    this.close();
    this.emit("message_delta", {
      delta: { stop_reason: stopReason(finish), stop_sequence: null },
      usage: { ...usageJson(usage), ...costFields(cost) },
      ...extra,
    });
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

/** A call's stream of typed events (a live answer or a cache hit), encoded as Anthropic's events. */
export function messagesEventStream(stream: CallStream, meta: MessagesStreamMeta): ReadableStream<Uint8Array> {
  const pump = async (write: Write, gone: () => boolean) => {
    const w = new BlockWriter(write);
    w.start({ id: meta.id, model: stream.head.model }, stream.head.usage);
    const end = await stream.read({ text: (t) => w.text(t), toolCall: (ev, call) => w.toolCall(ev, call) }, gone);
    if (end.kind === "left") return;
    // A stream the stopping gateway ended is Anthropic's "overloaded": clients retry it elsewhere.
    if (end.kind === "failed") write(errorEvent(end.failure, end.code ? "overloaded_error" : "api_error", end.code));
    else w.finish(end.finish, end.usage, end.cost, continuationJson(end.parts));
  };
  return sseStream(meta.keepaliveMs, pump, () => stream.leave());
}
