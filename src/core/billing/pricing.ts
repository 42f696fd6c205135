/**
 * What a chat call costs, in exact micro-won. Prices are the catalog's integers (USD
 * micro-dollars per million tokens); the FX rate is milli-won per dollar; the sum of all
 * components is rounded up once, to the micro-won. 0% markup.
 */
import type { CachingMode, PriceTier, TokenPricing } from "../catalog/types";
import type { Usage } from "../model/types";
import { ceilDiv, MIN_CHARGE_MICRO } from "../../lib/money";

const DIVISOR = 1_000_000_000n; // see tokenCostMicro in src/lib/money.ts

/**
 * The spec's three caching cases: `automatic` providers bill cached input at the discounted
 * price; `explicit` ones bill cache reads at the read price and cache writes at the write
 * price (one-hour-TTL writes at their own, dearer price); `reported` ones report cached
 * tokens but bill them at the input price.
 */
export function usageCostMicro(base: TokenPricing, caching: CachingMode, u: Usage, fxMilli: bigint): bigint {
  const p = pricesAt(base, u.promptTokens);
  const discounted = caching === "automatic" || caching === "explicit";
  const cached = Math.min(u.cachedTokens, u.promptTokens);
  const writes = Math.min(u.cacheWriteTokens, u.promptTokens - cached);
  const longWrites = Math.min(u.cacheWrite1hTokens ?? 0, writes);
  const plain = u.promptTokens - cached - writes;
  const cachedPrice = discounted && p.cachedInput !== null ? p.cachedInput : p.input;
  const writePrice = caching === "explicit" && p.cacheWrite !== null ? p.cacheWrite : p.input;
  // A one-hour write the catalog has no price for never reaches a provider (routing/priced-options.ts).
  const longWritePrice = caching === "explicit" ? (p.cacheWrite1h ?? Math.max(writePrice, p.input)) : p.input;
  // The token sum in doubles when it is a safe integer and every count is non-negative: each
  // term is then a non-negative integer product, so a safe sum means every product and partial
  // sum was exact too (a product past 2^53 would make the sum unsafe). Only the FX step needs
  // BigInt then: 2 BigInts per call, not 16. Anything else takes the BigInt sum, as before.
  const searches = u.webSearchRequests ?? 0;
  const quick =
    plain * p.input +
    cached * cachedPrice +
    (writes - longWrites) * writePrice +
    longWrites * longWritePrice +
    u.completionTokens * p.output +
    searches * (p.webSearchPer1k ?? 0) * 1000;
  const counts = plain >= 0 && cached >= 0 && writes >= longWrites && longWrites >= 0 && u.completionTokens >= 0;
  const micro =
    counts && searches >= 0 && Number.isSafeInteger(quick)
      ? BigInt(quick)
      : BigInt(plain) * BigInt(p.input) +
        BigInt(cached) * BigInt(cachedPrice) +
        BigInt(writes - longWrites) * BigInt(writePrice) +
        BigInt(longWrites) * BigInt(longWritePrice) +
        BigInt(u.completionTokens) * BigInt(p.output) +
        serverToolsMicro(p, u);
  return ceilDiv(micro * fxMilli, DIVISOR);
}

/**
 * Server tools the provider ran for the call (Anthropic's `usage.server_tool_use`), in the
 * token sum's unit (micro-dollars per million): web searches at the catalog's price per 1,000;
 * web fetches cost their tokens only. A search the catalog has no price for never reaches a
 * provider (server-tools.ts refuses it before any hold).
 */
function serverToolsMicro(p: TokenPricing, u: Usage): bigint {
  const searches = u.webSearchRequests ?? 0;
  return searches > 0 ? BigInt(searches) * BigInt(p.webSearchPer1k ?? 0) * 1000n : 0n;
}

/**
 * The prices a call with `promptTokens` input tokens (all of them: cache reads and writes
 * included) pays: those of the highest long-context tier whose threshold it exceeds, for the
 * whole call, as the providers bill (@pydantic/genai-prices: a tier applies when the input
 * tokens are strictly above its `start`); the base prices below every threshold. A tier has no
 * one-hour cache-write price of its own: it is the base one scaled as the input price is
 * (Anthropic's one-hour write is twice the input price, in every tier), rounded up.
 */
export function pricesAt(p: TokenPricing, promptTokens: number): TokenPricing {
  let tier: PriceTier | undefined;
  for (const t of p.tiers ?? []) if (promptTokens > t.aboveInputTokens) tier = t;
  if (!tier) return p;
  const long =
    p.cacheWrite1h == null || p.input === 0
      ? p.cacheWrite1h
      : Number(ceilDiv(BigInt(p.cacheWrite1h) * BigInt(tier.input), BigInt(p.input)));
  const { tiers: _tiers, ...flat } = p;
  return {
    ...flat,
    input: tier.input,
    output: tier.output,
    cachedInput: tier.cachedInput,
    cacheWrite: tier.cacheWrite,
    ...(long != null ? { cacheWrite1h: long } : undefined),
  };
}

/** A successful call is charged at least 0.1 KRW (docs/decisions.md #10). */
export function withMinimumCharge(cost: bigint): bigint {
  return cost < MIN_CHARGE_MICRO ? MIN_CHARGE_MICRO : cost;
}

/**
 * The hold: the most any candidate could charge for `inputTokens` in and `maxTokens` out,
 * pricing input at the dearest of the input and cache-write prices (a candidate's pricing
 * carries the one-hour write price only when the request asks for that TTL), and never
 * under the minimum charge.
 */
export function holdAmountMicro(
  pricings: readonly TokenPricing[],
  inputTokens: number,
  maxTokens: number,
  fxMilli: bigint,
): bigint {
  let max = 0n;
  for (const base of pricings) {
    // The estimate is on the dear side and tiers only grow: the tier it falls in bounds the charge.
    const p = pricesAt(base, inputTokens);
    const inPrice = Math.max(p.input, p.cacheWrite ?? 0, p.cacheWrite1h ?? 0);
    // In doubles when exact, as in usageCostMicro: non-negative counts and a safe-integer sum.
    const quick = inputTokens * inPrice + maxTokens * p.output;
    const sum =
      inputTokens >= 0 && maxTokens >= 0 && Number.isSafeInteger(quick)
        ? BigInt(quick)
        : BigInt(inputTokens) * BigInt(inPrice) + BigInt(maxTokens) * BigInt(p.output);
    const c = ceilDiv(sum * fxMilli, DIVISOR);
    if (c > max) max = c;
  }
  return max < MIN_CHARGE_MICRO ? MIN_CHARGE_MICRO : max;
}
