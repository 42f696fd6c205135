/**
 * A chat call's stream (core/chat/call-stream.ts) as OpenAI `chat.completion.chunk` events. A
 * relayed stream (an OpenAI-compatible upstream) is written as the upstream's own bytes, event
 * by event; otherwise (other upstreams, PII restored, a cache hit) the typed events are encoded
 * as chunks. Either way the stream ends as its final event says: the usage+cost event and
 * `[DONE]`, or, after a failure, the `upstream_error` event (partial text) and `[DONE]`; a
 * client that left gets nothing more. The call was settled before any final frame.
 */
import type { CallSink, CallStream, StreamFinal } from "../../core/chat/call-stream";
import type { RawTail } from "../../core/model/relay";
import { annotationsJson, costJson } from "./chat-from-core";
import { ChunkEncoder, DONE, errorEvent } from "./chunk-encoder";
import { sseStream, type Write } from "../sse-stream";
import { continuationJson } from "../continuation-json";

export interface StreamMeta {
  id: string;
  created: number;
  keepaliveMs: number;
}

const enc = new TextEncoder();

export function chatEventStream(stream: CallStream, meta: StreamMeta): ReadableStream<Uint8Array> {
  const pump = stream.head.relayed
    ? (w: Write, gone: () => boolean) => relayed(stream, meta, w, gone)
    : (w: Write, gone: () => boolean) => encoded(stream, meta, w, gone);
  return sseStream(meta.keepaliveMs, pump, () => stream.leave());
}

async function relayed(stream: CallStream, meta: StreamMeta, write: Write, gone: () => boolean): Promise<void> {
  const end = await stream.read({ text: () => {}, toolCall: () => {}, raw: write }, gone);
  if (end.kind === "left") return;
  if (end.kind === "failed") {
    write(errorEvent(end.failure, end.partial, end.code));
    write(DONE);
    return;
  }
  // The frames the gateway writes itself name the catalog model and the provider that answered
  // (the relayed chunks carry the upstream's own model id), with the upstream's id and created.
  const { model, provider } = stream.head;
  const tail: RawTail = end.relay ?? { closing: null, terminal: null };
  const head = {
    id: meta.id,
    created: meta.created,
    ...(tail.id !== undefined ? { id: tail.id } : undefined),
    ...(tail.created !== undefined ? { created: tail.created } : undefined),
    object: "chat.completion.chunk",
    model,
    provider,
  };
  if (end.citations)
    write(
      enc.encode(
        `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta: { annotations: annotationsJson(end.citations) }, finish_reason: null }] })}\n\n`,
      ),
    );
  const u = end.usage;
  const final = tail.closing
    ? { ...tail.closing, model, provider, choices: [], cost: costJson(end.cost) }
    : {
        ...head,
        choices: [],
        usage: {
          prompt_tokens: u.promptTokens,
          completion_tokens: u.completionTokens,
          total_tokens: u.promptTokens + u.completionTokens,
        },
        cost: costJson(end.cost),
      };
  write(enc.encode(`data: ${JSON.stringify(final)}\n\n`));
  write(DONE);
}

async function encoded(stream: CallStream, meta: StreamMeta, write: Write, gone: () => boolean): Promise<void> {
  const { model, provider, cached } = stream.head;
  const e = new ChunkEncoder(meta.id, meta.created, model, provider);
  write(e.delta({ role: "assistant", content: "" }));
  const sink: CallSink = {
    text: (out) => write(e.delta({ content: out })),
    toolCall: (ev) => {
      const fn: Record<string, string> = {};
      if (ev.name) fn.name = ev.name;
      if (ev.arguments !== undefined) fn.arguments = ev.arguments;
      write(
        e.delta({
          tool_calls: [{ index: ev.index, ...(ev.id ? { id: ev.id, type: "function" } : undefined), function: fn }],
        }),
      );
    },
  };
  const end: StreamFinal = await stream.read(sink, gone);
  if (end.kind === "left") return;
  if (end.kind === "failed") {
    write(errorEvent(end.failure, end.partial, end.code));
    write(DONE);
    return;
  }
  if (end.citations) write(e.delta({ annotations: annotationsJson(end.citations) }));
  write(e.delta({}, end.finish));
  write(e.usage(end.usage, end.cost, cached, continuationJson(end.parts)));
  write(DONE);
}
