/**
 * The directives every protocol obeys before it answers: `hang`, `latency` and the `fail`
 * family. Protocol handlers (and later video or search ones) call `obeyDirectives` right
 * after parsing the request; stream-only directives (`chunk_ms`, `drop`) live in sse.ts and
 * reply-size ones (`tokens`) in reply-plan.ts.
 */
import { directiveInt, failureFor, type Directives } from "./directives.ts";
import { sleep } from "./http.ts";
import type { SimContext } from "./routes.ts";

/**
 * Applies `hang`, `latency`/`latency@provider` and `fail`/`fail@provider` (with `xN` counting). Returns the
 * response to send instead of a normal reply, or undefined to carry on. `rawBody` is the
 * exact request body: `xN` counters key on provider + body.
 */
export async function obeyDirectives(
  ctx: SimContext,
  directives: Directives,
  rawBody: string,
): Promise<Response | undefined> {
  if (directives.size === 0) return undefined;
  if (directives.has("hang")) return hang(ctx);
  // `latency@provider` wins over a plain `latency`, so one request can be slow at one provider only.
  const latency = directiveInt(directives, `latency@${ctx.provider}`) ?? directiveInt(directives, "latency");
  if (latency) {
    keepOpen(ctx);
    await sleep(latency, ctx.req.signal);
    // The client gave up before the first byte (a gateway cancelling a hedge's loser): counted, unanswered.
    if (ctx.req.signal.aborted) {
      ctx.sim.cancel(ctx.provider);
      return new Response(null, { status: 499 });
    }
  }
  const failure = failureFor(directives, ctx.provider);
  if (!failure) return undefined;
  if (failure.times !== undefined) {
    const seen = ctx.sim.bumpFailCounter(`${ctx.provider}\n${rawBody}`);
    if (seen > failure.times) return undefined;
  }
  // Real vendors' messages can carry account details (OpenAI names the organization):
  // `fail_message` puts such text in the body, to show it never reaches a gateway client.
  const res = ctx.error(failure.status, directives.get("fail_message") || undefined);
  // The contract promises `Retry-After: 1` on every simulated 429, whoever renders it.
  if (failure.status === 429 && !res.headers.has("retry-after")) res.headers.set("retry-after", "1");
  return res;
}

/** Lifts Bun's idle timeout for this request, so long waits and slow streams are not cut. */
export function keepOpen(ctx: SimContext): void {
  ctx.server.timeout(ctx.req, 0);
}

/**
 * Accepts the request and never answers. The pending promise settles when the client aborts
 * (or the simulator stops), so a hung request holds nothing once its client has gone.
 */
function hang(ctx: SimContext): Promise<Response> {
  keepOpen(ctx);
  return new Promise((resolve) => {
    const release = () => {
      ctx.sim.hangs.delete(release);
      ctx.req.signal.removeEventListener("abort", release);
      // Nobody reads this: the client is gone or the server is closing the socket.
      resolve(new Response(null, { status: 499 }));
    };
    ctx.sim.hangs.add(release);
    ctx.req.signal.addEventListener("abort", release, { once: true });
  });
}
