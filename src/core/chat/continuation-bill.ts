/**
 * Money of a continued stream (continuation.ts). The hold of a call that opts in covers two
 * answers: the usual worst case plus a continuation asked of the dearest candidate with the
 * whole output budget as its prefill. The charge is each part at its own provider's price, for
 * its own usage (the upstream's, or the estimate a broken stream gets), summed and settled once.
 */
import { callPrice, type CallTerms } from "../billing/call-price";
import type { Candidate } from "../routing/candidates";
import type { ContinuationPart, Continuation } from "./continuation";
import type { ContinuationVia } from "./continuation-request";
import { CONTINUE_OVERHEAD_TOKENS } from "./continuation-request";
import { streamUsageEstimate, type PromptSize } from "./estimate";
import { worstHoldMicro } from "./hold";
import type { StreamEnd } from "./plan";
import { emptyUsage, type Usage } from "../model/types";

/** What a continuation may add to the hold: a second answer whose input also carries the first part (and tokens for the hold's count). */
export function continuationHold(
  candidates: readonly Candidate[],
  inputFor: (c: Candidate) => number,
  maxTokens: number,
  fxMilli: bigint,
): { micro: bigint; tokens: number } {
  const input = (c: Candidate) => inputFor(c) + maxTokens + CONTINUE_OVERHEAD_TOKENS;
  const tokens = candidates.reduce((m, c) => Math.max(m, input(c)), 0) + maxTokens;
  return { micro: worstHoldMicro(candidates, input, maxTokens, fxMilli), tokens };
}

export interface PartBill {
  candidate: Candidate;
  usage: Usage;
  /** The usage is the gateway's estimate (the part's stream broke before its usage). */
  estimated: boolean;
  micro: bigint;
  via?: ContinuationVia;
}

/**
 * Each part's usage and price, and the call's (call-price.ts: the minimum, when `terms` apply
 * it, once on the sum); the last part ended as `end` says, the earlier ones broke.
 */
export function billParts(
  k: Continuation,
  prompt: PromptSize,
  end: StreamEnd,
  terms: CallTerms,
): { bills: PartBill[]; micro: bigint } {
  const used = k.parts.map((p, i) => {
    const last = i === k.parts.length - 1;
    return {
      candidate: p.candidate,
      usage: p.usage ?? estimate(p, prompt, last ? end : { ...end, ending: "failed", toolCalls: [] }),
    };
  });
  const price = callPrice(used, terms);
  const bills = k.parts.map((p, i) => ({
    ...used[i]!,
    estimated: p.usage === null,
    micro: price.parts[i]!,
    ...(p.via && { via: p.via }),
  }));
  return { bills, micro: price.micro };
}

/** A part without its usage: nothing for a break before any output, else the partial-stream estimate. */
function estimate(p: ContinuationPart, prompt: PromptSize, end: StreamEnd): Usage {
  if (end.ending === "failed" && !p.text && !end.toolCalls.length) return emptyUsage();
  const c = p.candidate;
  return streamUsageEstimate(prompt, p.messages, c.provider.protocol, c.offering.upstreamId, {
    ending: end.ending,
    text: p.text,
    toolCalls: end.toolCalls,
  });
}

/** The parts' usages added up (what the client is shown as the answer's usage). */
export function summedUsage(bills: readonly PartBill[]): Usage {
  const u = emptyUsage();
  for (const { usage: b } of bills) {
    u.promptTokens += b.promptTokens;
    u.completionTokens += b.completionTokens;
    u.cachedTokens += b.cachedTokens;
    u.cacheWriteTokens += b.cacheWriteTokens;
    u.reasoningTokens += b.reasoningTokens;
  }
  return u;
}
