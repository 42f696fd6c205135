/**
 * The Responses stream (docs/decisions.md #5): `event: <type>` + `data: <json>` frames, each with
 * `type` and a contiguous `sequence_number`, in OpenAI's order:
 *
 *   response.created → response.in_progress → per output item: output_item.added,
 *   (message) content_part.added, output_text.delta…, output_text.done, content_part.done /
 *   (function call) function_call_arguments.delta…, function_call_arguments.done,
 *   then output_item.done → response.completed → `data: [DONE]`.
 *
 * Items are opened as the upstream produces them and each is finished before the next one
 * opens. `response.completed` carries the full response with `usage` and, since the headers
 * left before the cost was known, the gateway's `cost` object. After a mid-stream failure
 * (docs/decisions.md #6) the last event is `error` with `{code: "upstream_error", message,
 * partial}`, then `[DONE]`; only the received part is billed. The events come from the call's
 * stream (core/chat/call-stream.ts), a live answer or a cache hit alike; the core settles the
 * call before its final event, so this file only writes frames.
 */
import type { CallStream, ToolCallEvent } from "../../core/chat/call-stream";
import type { Cost } from "../../core/billing/cost";
import type { FinishReason, ToolCall, Usage } from "../../core/model/types";
import { DONE, sseStream, streamError, type Write } from "../sse-stream";
import {
  citationAnnotations,
  functionCallItem,
  messageItem,
  outputText,
  responseObject,
  type ResponseHead,
} from "./from-core";
import type { Echo, FunctionCallItem, MessageItem, OwnOutputItem, UrlCitationAnnotation } from "./schemas";
import { itemId } from "./ids";
import { continuationJson } from "../continuation-json";

const enc = new TextEncoder();

export interface ResponsesStreamMeta {
  id: string;
  createdAt: number;
  echo: Echo;
  keepaliveMs: number;
  /** Keeps the finished response (RESPONSES_STORE=on) before `response.completed` tells the client it exists. */
  keep?: (response: ReturnType<typeof responseObject>) => Promise<boolean>;
}

/** Numbers and frames the events of one stream. */
class EventWriter {
  private seq = 0;
  constructor(private write: Write) {}

  emit(type: string, fields: Record<string, unknown>): void {
    const data = JSON.stringify({ type, sequence_number: this.seq++, ...fields });
    this.write(enc.encode(`event: ${type}\ndata: ${data}\n\n`));
  }
}

type Open =
  | { kind: "message"; item: MessageItem; index: number; text: string }
  | { kind: "call"; item: FunctionCallItem; index: number; call: ToolCall };

/** The output items of one stream, opened and finished in order; owns that state alone. */
class OutputWriter {
  readonly items: OwnOutputItem[] = [];
  private open: Open | null = null;
  /** Web plugin sources, attached to the message text when it closes. */
  annotations: UrlCitationAnnotation[] = [];
  /** Function-call items by the upstream's tool-call index. */
  private calls = new Map<number, Extract<Open, { kind: "call" }>>();

  constructor(private writer: EventWriter) {}

  text(delta: string): void {
    if (this.open?.kind !== "message") {
      this.close();
      this.openMessage();
    }
    const m = this.open as Extract<Open, { kind: "message" }>;
    m.text += delta;
    this.writer.emit("response.output_text.delta", {
      item_id: m.item.id,
      output_index: m.index,
      content_index: 0,
      delta,
      logprobs: [],
    });
  }

  toolCall(ev: ToolCallEvent, call: ToolCall): void {
    let c = this.calls.get(ev.index);
    if (!c) {
      this.close();
      const id = itemId("fc");
      c = { kind: "call", item: functionCallItem(id, call, "in_progress"), index: this.items.length, call };
      this.items.push(c.item);
      this.calls.set(ev.index, c);
      this.open = c;
      this.writer.emit("response.output_item.added", { output_index: c.index, item: { ...c.item, arguments: "" } });
    }
    if (call.id) c.item.call_id = call.id;
    c.item.name = call.function.name;
    c.item.arguments = call.function.arguments;
    // A fragment of an already finished call (an upstream interleaving calls) still gets its
    // delta, under its own item id; the final item in response.completed is whole either way.
    if (ev.arguments)
      this.writer.emit("response.function_call_arguments.delta", {
        item_id: c.item.id,
        output_index: c.index,
        delta: ev.arguments,
      });
  }

  /** Finishes the open item; an answer with no output at all gets one empty message. */
  finish(): OwnOutputItem[] {
    if (!this.items.length) this.openMessage();
    this.close();
    return this.items;
  }

  private openMessage(): void {
    const item = messageItem(itemId("msg"), "", "in_progress");
    const m: Open = { kind: "message", item, index: this.items.length, text: "" };
    this.items.push(item);
    this.open = m;
    this.writer.emit("response.output_item.added", { output_index: m.index, item: { ...item, content: [] } });
    this.writer.emit("response.content_part.added", {
      item_id: item.id,
      output_index: m.index,
      content_index: 0,
      part: outputText(""),
    });
  }

  private close(): void {
    const o = this.open;
    if (!o) return;
    this.open = null;
    if (o.kind === "message") {
      const base = { item_id: o.item.id, output_index: o.index, content_index: 0 };
      // As OpenAI does, each source is announced before the text is done (the AI SDK's
      // streamText takes its sources from these events).
      this.annotations.forEach((annotation, annotation_index) =>
        this.writer.emit("response.output_text.annotation.added", { ...base, annotation_index, annotation }),
      );
      this.writer.emit("response.output_text.done", { ...base, text: o.text, logprobs: [] });
      this.writer.emit("response.content_part.done", { ...base, part: outputText(o.text, this.annotations) });
      o.item.status = "completed";
      o.item.content = [outputText(o.text, this.annotations)];
    } else {
      this.writer.emit("response.function_call_arguments.done", {
        item_id: o.item.id,
        output_index: o.index,
        arguments: o.item.arguments,
      });
      o.item.status = "completed";
    }
    this.writer.emit("response.output_item.done", { output_index: o.index, item: { ...o.item } });
  }
}

/** A call's stream (a live answer or a cache hit), encoded as Responses events. */
export function responsesEventStream(stream: CallStream, meta: ResponsesStreamMeta): ReadableStream<Uint8Array> {
  const { model, provider, cached } = stream.head;
  const head: ResponseHead = { id: meta.id, createdAt: meta.createdAt, model, provider, echo: meta.echo };
  const pump = async (write: Write, gone: () => boolean) => {
    const w = new EventWriter(write);
    const out = new OutputWriter(w);
    start(w, head);
    const end = await stream.read({ text: (t) => out.text(t), toolCall: (ev, call) => out.toolCall(ev, call) }, gone);
    if (end.kind === "left") return;
    if (end.kind === "failed") {
      w.emit("error", { error: streamError(end.failure, end.partial, end.code) });
      write(DONE);
      return;
    }
    out.annotations = citationAnnotations(end.citations);
    await complete(w, meta, head, out.finish(), end.usage, end.cost, end.finish, cached, continuationJson(end.parts));
    write(DONE);
  };
  return sseStream(meta.keepaliveMs, pump, () => stream.leave());
}

function start(w: EventWriter, head: ResponseHead): void {
  const response = responseObject(head, { status: "in_progress", output: [], usage: null });
  w.emit("response.created", { response });
  w.emit("response.in_progress", { response });
}

async function complete(
  w: EventWriter,
  meta: ResponsesStreamMeta,
  head: ResponseHead,
  output: OwnOutputItem[],
  usage: Usage,
  cost: Cost,
  finish: FinishReason,
  cached: boolean,
  extra?: ReturnType<typeof continuationJson>,
): Promise<void> {
  const response = { ...responseObject(head, { status: "completed", output, usage, finish, cost, cached }), ...extra };
  // Not kept (the account's quota, the response's size): the completed response says so.
  if (meta.keep && !(await meta.keep(response))) response.store = false;
  w.emit("response.completed", { response });
}
