/**
 * Token counts of embeddings inputs before (or without) the provider's own. Token ids count
 * one each. Text counts on the dear side (chat/estimate.ts: about 3 ASCII characters a token,
 * one per other character, each text rounded up on its own). The hold is sized with it, and a
 * provider that reports no count (Gemini) is charged exactly it: the cheaper ~4 UTF-16 units a
 * token undercharged Hangul and emoji against the gateway's own estimate (issue 28, #14).
 */
import type { EmbeddingInput } from "../model/provider";
import { outputTokens } from "../chat/estimate";

/** Upper-side estimate of the tokens of all inputs: the hold's size. */
export function holdTokensOf(inputs: readonly EmbeddingInput[]): number {
  let n = 0;
  for (const i of inputs) n += typeof i === "string" ? outputTokens(i) : i.length;
  return n;
}

/** The tokens charged when the provider counts none: the hold's own estimate. */
export function chargedTokensOf(inputs: readonly EmbeddingInput[]): number {
  return holdTokensOf(inputs);
}
