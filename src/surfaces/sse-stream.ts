/**
 * The SSE body every streaming surface (chat, Responses) hands to the client: a pump writes
 * frames; this wrapper adds keepalive comments while the upstream is quiet (so proxies and
 * Bun's idle timer do not cut a thinking model) and turns a client disconnect into `gone()`
 * plus an abort of the upstream, so the pump can still settle what was received.
 */
const enc = new TextEncoder();

/** An SSE comment: every SSE client skips it. */
export const KEEPALIVE = enc.encode(": keepalive\n\n");

/** The last frame of every stream the gateway writes (chat and Responses alike). */
export const DONE = enc.encode("data: [DONE]\n\n");

export type Write = (bytes: Uint8Array) => void;

export function sseStream(keepaliveMs: number, pump: (write: Write, gone: () => boolean) => Promise<void>, onCancel: () => void): ReadableStream<Uint8Array> {
  let closed = false;
  let clientGone = false;
  let lastWrite = Date.now();
  let timer: ReturnType<typeof setInterval> | undefined;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const write: Write = (b) => {
        if (closed || clientGone) return;
        try {
          controller.enqueue(b);
          lastWrite = Date.now();
        } catch {
          clientGone = true;
        }
      };
      timer = setInterval(() => {
        if (Date.now() - lastWrite >= keepaliveMs) write(KEEPALIVE);
      }, Math.max(50, Math.floor(keepaliveMs / 3)));
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
      clientGone = true;
      clearInterval(timer);
      onCancel();
    },
  });
}
