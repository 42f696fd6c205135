/**
 * The price of a call, computed here and nowhere else: a chat call's settle (JSON, stream,
 * continued stream, a cascade/parallel policy's sum), the hedge loser's input, a policy's
 * sub-call and an embeddings call all price their usage with `callPrice`.
 *
 * A call is one or more parts, one upstream answer each (a continuation's parts, a policy's
 * sub-calls; one part otherwise). Each part is priced at its own offering's catalog price for
 * its own usage (pricing.ts: cache reads and writes, reasoning inside the output, tiers, server
 * tools; rounded up per part). A BYOK key pays its provider itself: the gateway charges nothing
 * for tokens. A successful call pays at least the minimum charge (docs/decisions.md #10), once,
 * on the sum (#30, docs/routing-policies.md); a part priced on its own never does.
 */
import type { CachingMode, TokenPricing } from "../catalog/types";
// The canonical usage type; the lead repoints this import once it lives in core/model/.
import type { Usage } from "../model/types";
import { usageCostMicro, withMinimumCharge } from "./pricing";

/** What answered a part: its offering's prices and its provider's caching mode (a routing candidate is one). */
export interface PricedOffer {
  readonly offering: { readonly pricing: TokenPricing | null };
  readonly provider: { readonly caching: CachingMode };
}

/** One upstream answer of a call and the usage it is charged for. */
export interface CallPart {
  readonly candidate: PricedOffer;
  readonly usage: Usage;
}

export interface CallTerms {
  /** Milli-won per dollar. */
  readonly fxMilli: bigint;
  /** The key is a BYOK key: its provider bills its owner, the gateway charges no tokens. */
  readonly byok: boolean;
  /**
   * The minimum charge applies: the call is settled as a success (status under 400). False for
   * a failed or cut-off call, and for a part priced on its own (a sub-call, a hedge's loser).
   */
  readonly minimum: boolean;
}

export interface CallPrice {
  /** What the call's tokens cost, in micro-won (the minimum applied when the terms say so). */
  readonly micro: bigint;
  /** Each part's own price, in the order given, before the minimum. */
  readonly parts: readonly bigint[];
}

/** The price of a call made of `parts` under `terms`. */
export function callPrice(parts: readonly CallPart[], terms: CallTerms): CallPrice {
  // A loop, not map and reduce: every call is priced here, most of one part.
  const each: bigint[] = [];
  let sum = 0n;
  for (const { candidate, usage } of parts) {
    const micro = terms.byok
      ? 0n
      : // Candidates are priced offerings (priced-options.ts): an unpriced one never reaches a call.
        usageCostMicro(candidate.offering.pricing!, candidate.provider.caching, usage, terms.fxMilli);
    each.push(micro);
    sum += micro;
  }
  return { micro: terms.minimum && !terms.byok ? withMinimumCharge(sum) : sum, parts: each };
}
