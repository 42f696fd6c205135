/**
 * An Anthropic upstream's stream relayed to a Messages client byte for byte (the call's stream
 * says `relayed`; providers/anthropic/relay.ts scans it). The one event rewritten is
 * `message_delta`: held back until `message_stop`, then, the call settled, it goes out with
 * the call's `cost_krw` / `cost_usd` added to its usage, followed by the upstream's own
 * `message_stop`. An upstream `error` event, a cut connection or an end without
 * `message_stop` ends the stream with our own `error` event (our words, never the vendor's,
 * with the vendor's error type when it is one of Anthropic's); only what was received is billed.
 */
import type { CallStream } from "../../core/chat/call-stream";
import { sseStream, type Write } from "../sse-stream";
import { ANTHROPIC_ERROR_TYPES, errorEvent } from "./errors";
import { costFields } from "./from-core";

const enc = new TextEncoder();

export function relayMessagesStream(stream: CallStream, keepaliveMs: number): ReadableStream<Uint8Array> {
  return sseStream(
    keepaliveMs,
    (w, gone) => relay(stream, w, gone),
    () => stream.leave(),
  );
}

async function relay(stream: CallStream, write: Write, gone: () => boolean): Promise<void> {
  const end = await stream.read({ text: () => {}, toolCall: () => {}, raw: write }, gone);
  if (end.kind === "left") return;
  if (end.kind === "failed") {
    const type = end.code
      ? "overloaded_error" // the stopping gateway ended it: clients retry an overloaded answer elsewhere
      : (ANTHROPIC_ERROR_TYPES.find((t) => t === end.relay?.errorType) ?? "api_error");
    write(errorEvent(end.failure, type, end.code));
    return;
  }
  const final = end.relay?.closing ?? {
    type: "message_delta",
    delta: { stop_reason: "end_turn", stop_sequence: null },
    usage: {},
  };
  write(
    enc.encode(
      `event: message_delta\ndata: ${JSON.stringify({ ...final, usage: { ...final.usage, ...costFields(end.cost) } })}\n\n`,
    ),
  );
  if (end.relay?.terminal) write(end.relay.terminal);
}
