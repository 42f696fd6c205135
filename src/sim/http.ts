/** Small HTTP helpers shared by the simulator's protocols. */
import type { SimContext } from "./routes.ts";

/** Thrown by helpers; the server renders it in the matched protocol's error envelope. */
export class SimHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A JSON request body, kept raw too: `xN` failure counters key on the exact bytes. */
export interface JsonBody<T> {
  raw: string;
  body: T;
}

/** Reads and parses a JSON object body; a malformed one is a 400 in the vendor's shape. */
export async function readJsonBody<T extends object>(ctx: SimContext): Promise<JsonBody<T>> {
  const raw = await ctx.req.text();
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new SimHttpError(400, "We could not parse the JSON body of your request.");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new SimHttpError(400, "The request body must be a JSON object.");
  }
  return { raw, body: body as T };
}

export function jsonResponse(body: unknown, status = 200, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** Resolves after `ms`, or early when `signal` aborts (the client went away). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Unix seconds, as OpenAI's `created`. */
export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
