/**
 * Writes a prepared list of server-sent-event frames as a streaming response, obeying
 * `[sim:chunk_ms]` (pause between frames) and `[sim:drop]` / `[sim:drop@PROVIDER]` (reset the connection after N
 * content frames, with no finish, usage or terminator, as a real broken upstream does).
 */
import { directiveInt, type Directives } from "./directives.ts";
import { keepOpen } from "./directive-effects.ts";
import type { SimContext } from "./routes.ts";

/** One frame's exact bytes (framing included) and whether it carries reply content. */
export interface SseFrame {
  text: string;
  /** Content frames (text pieces, tool-argument pieces) are what `[sim:drop=N]` counts. */
  content: boolean;
}

const encoder = new TextEncoder();

// How long a dropping stream waits before the reset, so the frames already queued reach the
// socket first (Bun discards queued bytes when a stream errors in the same tick).
const DROP_FLUSH_MS = 10;

export function sseResponse(
  ctx: SimContext,
  frames: readonly SseFrame[],
  directives: Directives,
  headers: Record<string, string>,
): Response {
  const chunkMs = directiveInt(directives, "chunk_ms") ?? 0;
  // `drop@PROVIDER` wins over a plain `drop`: one provider breaks, the next one does not.
  const dropAfter = directiveInt(directives, `drop@${ctx.provider}`) ?? directiveInt(directives, "drop");
  const init = { status: 200, headers: { "cache-control": "no-cache", ...headers } };

  if (chunkMs === 0 && dropAfter === undefined) {
    // The common (benchmark) case: queue everything at once; each frame is still its own
    // write, as an upstream flushes each event.
    return new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const f of frames) controller.enqueue(encoder.encode(f.text));
          controller.close();
        },
      }),
      init,
    );
  }

  if (chunkMs > 0) keepOpen(ctx);
  const dropAt = dropAfter === undefined ? Infinity : dropIndex(frames, dropAfter);
  let next = 0;
  let cancelled = false;
  return new Response(
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (next > 0 && chunkMs > 0) await Bun.sleep(chunkMs);
        if (cancelled) return;
        if (next === dropAt) {
          // Nothing more, not even the finish. `error(undefined)` makes Bun reset the
          // connection (the client reads ECONNRESET) without logging anything.
          if (chunkMs === 0) await Bun.sleep(DROP_FLUSH_MS);
          controller.error(undefined);
          return;
        }
        const frame = frames[next++];
        if (frame === undefined) controller.close();
        else controller.enqueue(encoder.encode(frame.text));
      },
      cancel() {
        cancelled = true;
      },
    }),
    init,
  );
}

/**
 * Index of the first frame a `[sim:drop=N]` stream does not send: right after the N-th
 * content frame (before the first one when N is 0, after the last one when there are fewer
 * than N), so the finish, usage and terminator never arrive.
 */
function dropIndex(frames: readonly SseFrame[], n: number): number {
  const content: number[] = [];
  frames.forEach((f, i) => f.content && content.push(i));
  if (content.length === 0) return Math.min(1, frames.length);
  if (n === 0) return content[0]!;
  return content[Math.min(n, content.length) - 1]! + 1;
}
