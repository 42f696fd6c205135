/**
 * The SSE body every streaming surface (chat, Responses, Messages) hands to the client: a pump
 * writes frames; this wrapper adds keepalive comments while the upstream is quiet (so proxies
 * and Bun's idle timer do not cut a thinking model) and turns a client disconnect (the body
 * cancelled, or a write that fails) into `gone()` plus one `onLeave` call, which the pump hands
 * to the call's stream (CallStream.leave: the upstream is read on for its usage, then billed).
 */
const enc = new TextEncoder();

/** An SSE comment: every SSE client skips it. */
export const KEEPALIVE = enc.encode(": keepalive\n\n");

/** The last frame of every stream the gateway writes (chat and Responses alike). */
export const DONE = enc.encode("data: [DONE]\n\n");

export type Write = (bytes: Uint8Array) => void;

/**
 * The error object of a failed stream's last event (chat and Responses alike): the
 * specification's `{code: "upstream_error", message, partial}`, plus OpenAI's `type` and
 * `param`, so the OpenAI SDK's stream iterator throws an error with our message, code and type.
 * `code` is `service_unavailable` when the gateway itself ended the stream (a shutdown).
 */
export function streamError(message: string, partial: string, code = "upstream_error") {
  return { code, message, partial, type: "server_error", param: null };
}

/** What holds something for a stream's body (the call's slot, http/call-slots.ts) hears of it. */
export interface BodyObserver {
  /** The first bytes were handed to the client's side. */
  firstByte(): void;
  /** The body is over for the client: closed, failed, or the client left (once). */
  ended(): void;
}

/** A live SSE body as its holder sees it, without reading it through a second stream. */
export interface SseHandle {
  /** Told at once of what already happened (a first write, the end). */
  observe(o: BodyObserver): void;
  /** Ends the client's stream now, without its final event, as if the client had left. */
  stop(): void;
}

const handles = new WeakMap<ReadableStream<Uint8Array>, SseHandle>();

/** The handle of a body sseStream made (none for any other body). */
export function sseHandleOf(body: ReadableStream<Uint8Array> | null): SseHandle | undefined {
  return body ? handles.get(body) : undefined;
}

export function sseStream(
  keepaliveMs: number,
  pump: (write: Write, gone: () => boolean) => Promise<void>,
  onLeave: () => void,
): ReadableStream<Uint8Array> {
  let closed = false;
  let clientGone = false;
  let lastWrite = Date.now();
  let timer: ReturnType<typeof setInterval> | undefined;
  let observer: BodyObserver | undefined;
  let wrote = false;
  let over = false;
  let ctl: ReadableStreamDefaultController<Uint8Array> | undefined;
  const ended = () => {
    if (over) return;
    over = true;
    observer?.ended();
  };
  const leave = () => {
    if (clientGone) return;
    clientGone = true;
    clearInterval(timer);
    ended();
    onLeave();
  };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      ctl = controller;
      const write: Write = (b) => {
        if (closed || clientGone) return;
        try {
          controller.enqueue(b);
          lastWrite = Date.now();
          if (!wrote) {
            wrote = true;
            observer?.firstByte();
          }
        } catch {
          leave();
        }
      };
      timer = setInterval(
        () => {
          if (Date.now() - lastWrite >= keepaliveMs) write(KEEPALIVE);
        },
        Math.max(50, Math.floor(keepaliveMs / 3)),
      );
      pump(write, () => clientGone)
        .catch(() => {})
        .finally(() => {
          clearInterval(timer);
          if (!closed && !clientGone) {
            closed = true;
            try {
              controller.close();
            } catch {}
          }
          ended();
        });
    },
    cancel() {
      leave();
    },
  });
  handles.set(stream, {
    observe(o) {
      observer = o;
      if (wrote) o.firstByte();
      if (over) o.ended();
    },
    stop() {
      if (closed || clientGone) return;
      closed = true;
      try {
        ctl?.close();
      } catch {}
      leave();
    },
  });
  return stream;
}
