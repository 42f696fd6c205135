/** Helpers of the embeddings tests: the simulator's own vector for a text, cosine, simulator call counts. */
import { embedText } from "../../src/sim/embed-vector";
import type { TestGateway } from "../harness";

/** What the simulator answers for `text` at `dims` (its default is 256), as plain numbers. */
export const simVector = (text: string, dims = 256): number[] => Array.from(embedText(text, dims));

export const cosine = (a: readonly number[], b: readonly number[]): number => a.reduce((s, x, i) => s + x * b[i]!, 0);

/** Embeddings calls the simulator received, per provider (OpenAI's /v1/embeddings and Gemini's embed methods). */
export function simEmbedCalls(g: TestGateway): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [provider, routes] of Object.entries(g.gw.sim!.stats().calls)) {
    let n = 0;
    for (const [route, c] of Object.entries(routes)) if (/embed/i.test(route)) n += c;
    if (n) out[provider] = n;
  }
  return out;
}

/** POST /v1/embeddings with a raw body. */
export function embed(g: TestGateway, apiKey: string, body: unknown, headers?: Record<string, string>) {
  return g.call("POST", "/v1/embeddings", { token: apiKey, body, headers });
}
