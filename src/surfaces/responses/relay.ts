/**
 * OpenAI's Responses stream relayed to a Responses client byte for byte (the call's stream
 * says `relayed`; providers/openai/responses.ts scans it). The one event rewritten is the
 * closing `response.completed` (or `response.incomplete`): held back until the call is
 * settled, then it goes out with the gateway's `provider`, `cached` and `cost` added to its
 * `response`, as the translated Responses stream carries them, and the response `id` is the
 * gateway's (also on `response.created` / `response.in_progress`, so feedback, the usage log
 * and the request id name the same call). OpenAI sends no `[DONE]` after it; the relay adds
 * one, as every Responses stream of the gateway ends (docs/decisions.md #5). An upstream `error` / `response.failed` event, a cut
 * connection or an end without the closing event ends the stream as a translated one does
 * (docs/decisions.md #6): our own `error` event (our words), then `data: [DONE]`; only what was
 * received is billed.
 */
import type { CallStream } from "../../core/chat/call-stream";
import { DONE, sseStream, streamError, type Write } from "../sse-stream";
import { responsesCost } from "./from-core";
import { eventJson } from "../../lib/sse-split";

const enc = new TextEncoder();

export function relayResponsesStream(stream: CallStream, id: string, keepaliveMs: number): ReadableStream<Uint8Array> {
  return sseStream(
    keepaliveMs,
    (w, gone) => relay(stream, id, w, gone),
    () => stream.leave(),
  );
}

const LIFECYCLE = [enc.encode("event: response.created\n"), enc.encode("event: response.in_progress\n")];
const startsWith = (b: Uint8Array, p: Uint8Array) => b.length >= p.length && p.every((x, i) => b[i] === x);

/** `response.created` / `response.in_progress` with the gateway's response id; every other event as it came. */
function withOurId(ev: Uint8Array, id: string): Uint8Array {
  if (!LIFECYCLE.some((p) => startsWith(ev, p))) return ev;
  const data = eventJson(ev);
  if (!data?.response) return ev;
  return enc.encode(
    `event: ${data.type}\ndata: ${JSON.stringify({ ...data, response: { ...data.response, id } })}\n\n`,
  );
}

async function relay(stream: CallStream, id: string, write: Write, gone: () => boolean): Promise<void> {
  const raw = (ev: Uint8Array) => write(withOurId(ev, id));
  const end = await stream.read({ text: () => {}, toolCall: () => {}, raw }, gone);
  if (end.kind === "left") return;
  const next = (end.relay?.sequence ?? -1) + 1;
  if (end.kind === "failed") {
    const data = { type: "error", sequence_number: next, error: streamError(end.failure, end.partial, end.code) };
    write(enc.encode(`event: error\ndata: ${JSON.stringify(data)}\n\n`));
    write(DONE);
    return;
  }
  const closing = end.relay?.closing;
  const type = typeof closing?.type === "string" ? closing.type : "response.completed";
  const response = {
    ...closing?.response,
    id,
    provider: stream.head.provider,
    cached: false,
    cost: responsesCost(end.cost),
  };
  const data = { ...closing, type, sequence_number: closing?.sequence_number ?? next, response };
  write(enc.encode(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`));
  write(DONE);
}
