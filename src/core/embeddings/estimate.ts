/**
 * Token counts of embeddings inputs before (or without) the provider's own. Token ids count
 * one each. Text counts on the dear side for the hold (estimate.ts: about 3 ASCII characters
 * a token, one per other character) and, for a provider that reports no count (Gemini), at
 * the ordinary ~4 characters a token for the charge, each text rounded up on its own.
 */
import type { EmbeddingInput } from "../chat/provider";
import { estimateTokens, outputTokens } from "../chat/estimate";

/** Upper-side estimate of the tokens of all inputs: the hold's size. */
export function holdTokensOf(inputs: readonly EmbeddingInput[]): number {
  let n = 0;
  for (const i of inputs) n += typeof i === "string" ? outputTokens(i) : i.length;
  return n;
}

/** The tokens charged when the provider counts none. */
export function chargedTokensOf(inputs: readonly EmbeddingInput[]): number {
  let n = 0;
  for (const i of inputs) n += typeof i === "string" ? estimateTokens(i.length) : i.length;
  return n;
}
