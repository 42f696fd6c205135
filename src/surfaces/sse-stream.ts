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

export function sseStream(
  keepaliveMs: number,
  pump: (write: Write, gone: () => boolean) => Promise<void>,
  onLeave: () => void,
): ReadableStream<Uint8Array> {
  let closed = false;
  let clientGone = false;
  let lastWrite = Date.now();
  let timer: ReturnType<typeof setInterval> | undefined;
  const leave = () => {
    if (clientGone) return;
    clientGone = true;
    clearInterval(timer);
    onLeave();
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const write: Write = (b) => {
        if (closed || clientGone) return;
        try {
          controller.enqueue(b);
          lastWrite = Date.now();
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
        });
    },
    cancel() {
      leave();
    },
  });
}
