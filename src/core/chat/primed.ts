/**
 * A stream's first byte, awaited before it counts as answered: a hedge race is won by the
 * first stream with content on the wire, not by the first to send headers. The element read
 * here is handed on first, so the client sees the stream unchanged; a failure or an abort
 * while waiting for it fails the attempt, before anything reached the client.
 */
import type { OpenedStream } from "./plan";
import type { StreamEvent } from "../model/types";

export async function primed(s: OpenedStream): Promise<OpenedStream> {
  if (s.kind === "typed") {
    const it = s.events[Symbol.asyncIterator]();
    const head = await it.next();
    return { ...s, events: replay(head, it) };
  }
  const reader = s.body.getReader();
  const head = await reader.read();
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      if (head.done) c.close();
      else c.enqueue(head.value);
    },
    async pull(c) {
      const next = await reader.read();
      if (next.done) c.close();
      else c.enqueue(next.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { ...s, body };
}

async function* replay(head: IteratorResult<StreamEvent>, it: AsyncIterator<StreamEvent>): AsyncGenerator<StreamEvent> {
  if (head.done) return;
  yield head.value;
  try {
    for (let next = await it.next(); !next.done; next = await it.next()) yield next.value;
  } finally {
    await it.return?.();
  }
}
