/**
 * The pure pricing rules behind a chat charge and its hold: the specification's three
 * prompt-caching cases (including what the shipped catalog cannot show: a reported-caching
 * provider with a cheaper cached price still bills cached tokens at the input price), the
 * single round-up to the micro-won, the 0.1 KRW minimum, and the hold as the dearest
 * candidate's worst case. End-to-end charges are in money.test.ts and prompt-caching.test.ts.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { holdAmountMicro, pricesAt, usageCostMicro, withMinimumCharge } from "../../src/core/billing/pricing";
import type { TokenPricing } from "../../src/core/catalog/types";
import type { Usage } from "../../src/core/model/types";

const FX = 1_400_000n; // 1400 KRW/USD in milli-won
const P: TokenPricing = { input: 3_000_000, output: 15_000_000, cachedInput: 300_000, cacheWrite: 3_750_000 };
const usage = (promptTokens: number, completionTokens: number, cachedTokens = 0, cacheWriteTokens = 0) => ({
  promptTokens,
  completionTokens,
  cachedTokens,
  cacheWriteTokens,
  reasoningTokens: 0,
});

/** Σ tokens × price × fx / 1e9, rounded up once. */
const expected = (parts: [number, number][]) => {
  const n = parts.reduce((a, [t, p]) => a + BigInt(t) * BigInt(p), 0n) * FX;
  return (n + 999_999_999n) / 1_000_000_000n;
};

describe("the three caching cases", () => {
  test("explicit: cache reads at the read price, writes at the write price, the rest at input", () => {
    expect(usageCostMicro(P, "explicit", usage(1000, 100, 600, 300), FX)).toBe(
      expected([
        [100, 3_000_000],
        [600, 300_000],
        [300, 3_750_000],
        [100, 15_000_000],
      ]),
    );
  });

  test("automatic: cached input at the discounted price; writes are not a thing (input price)", () => {
    expect(usageCostMicro(P, "automatic", usage(1000, 100, 600, 0), FX)).toBe(
      expected([
        [400, 3_000_000],
        [600, 300_000],
        [100, 15_000_000],
      ]),
    );
    expect(usageCostMicro(P, "automatic", usage(1000, 100, 0, 300), FX)).toBe(
      expected([
        [1000, 3_000_000],
        [100, 15_000_000],
      ]),
    );
  });

  test("reported: cached tokens are billed at the input price, even with a cheaper cached price listed", () => {
    expect(usageCostMicro(P, "reported", usage(1000, 100, 600, 0), FX)).toBe(
      expected([
        [1000, 3_000_000],
        [100, 15_000_000],
      ]),
    );
    expect(usageCostMicro(P, "none", usage(1000, 100, 600, 0), FX)).toBe(
      expected([
        [1000, 3_000_000],
        [100, 15_000_000],
      ]),
    );
  });

  test("a missing cached or write price bills those tokens at input", () => {
    const bare: TokenPricing = { ...P, cachedInput: null, cacheWrite: null };
    expect(usageCostMicro(bare, "explicit", usage(1000, 0, 600, 300), FX)).toBe(expected([[1000, 3_000_000]]));
  });

  test("explicit: one-hour writes at the one-hour price, five-minute writes at the write price", () => {
    const long: TokenPricing = { ...P, cacheWrite1h: 6_000_000 };
    const u = { ...usage(1000, 100, 0, 500), cacheWrite1hTokens: 200 };
    expect(usageCostMicro(long, "explicit", u, FX)).toBe(
      expected([
        [500, 3_000_000],
        [300, 3_750_000],
        [200, 6_000_000],
        [100, 15_000_000],
      ]),
    );
    // More one-hour writes reported than writes: capped at the writes.
    expect(usageCostMicro(long, "explicit", { ...u, cacheWrite1hTokens: 900 }, FX)).toBe(
      expected([
        [500, 3_000_000],
        [500, 6_000_000],
        [100, 15_000_000],
      ]),
    );
  });

  test("reported counts larger than the prompt never bill negative plain input", () => {
    const c = usageCostMicro(P, "explicit", usage(100, 0, 500, 500), FX);
    expect(c).toBe(expected([[100, 300_000]]));
  });
});

describe("rounding and minimum", () => {
  test("one round-up to the micro-won over the whole sum (not per component)", () => {
    // 1 token at 0.15 USD/Mtok = 0.00021 KRW = 210 µ₩ exactly; 1 output token at 0.6 → 840 µ₩.
    const mini: TokenPricing = { input: 150_000, output: 600_000, cachedInput: 75_000, cacheWrite: null };
    expect(usageCostMicro(mini, "automatic", usage(1, 1), FX)).toBe(1050n);
    // 1 cached token at 0.075 → 105 µ₩ exactly.
    expect(usageCostMicro(mini, "automatic", usage(1, 0, 1), FX)).toBe(105n);
    // A fraction of a micro-won rounds up: 1 token at 1 µ$/Mtok = 0.0014 µ₩ → 1.
    expect(usageCostMicro({ input: 1, output: 1, cachedInput: null, cacheWrite: null }, "none", usage(1, 0), FX)).toBe(
      1n,
    );
    expect(usageCostMicro(P, "none", usage(0, 0), FX)).toBe(0n);
  });

  test("a successful call costs at least 0.1 KRW", () => {
    expect(withMinimumCharge(0n)).toBe(100_000n);
    expect(withMinimumCharge(99_999n)).toBe(100_000n);
    expect(withMinimumCharge(100_001n)).toBe(100_001n);
  });
});

describe("the hold", () => {
  test("the dearest candidate's input (or cache write) plus max_tokens of output", () => {
    const cheap: TokenPricing = { input: 150_000, output: 600_000, cachedInput: 75_000, cacheWrite: null };
    expect(holdAmountMicro([cheap, P], 1000, 4096, FX)).toBe(
      expected([
        [1000, 3_750_000],
        [4096, 15_000_000],
      ]),
    );
    expect(holdAmountMicro([cheap], 1000, 4096, FX)).toBe(
      expected([
        [1000, 150_000],
        [4096, 600_000],
      ]),
    );
    // A candidate priced for one-hour cache writes holds its input at that price.
    expect(holdAmountMicro([{ ...P, cacheWrite1h: 6_000_000 }], 1000, 4096, FX)).toBe(
      expected([
        [1000, 6_000_000],
        [4096, 15_000_000],
      ]),
    );
  });

  test("never below the minimum charge, and it always covers the cost of any usage within it", () => {
    const cheap: TokenPricing = { input: 150_000, output: 600_000, cachedInput: 75_000, cacheWrite: null };
    expect(holdAmountMicro([cheap], 1, 1, FX)).toBe(100_000n);
    for (let i = 0; i < 200; i++) {
      const inT = Math.floor(Math.random() * 5000);
      const outT = 1 + Math.floor(Math.random() * 5000);
      const hold = holdAmountMicro([P, cheap], inT, outT, FX);
      const cached = Math.floor(Math.random() * (inT + 1));
      const writes = Math.floor(Math.random() * (inT - cached + 1));
      for (const mode of ["explicit", "automatic", "reported"] as const) {
        const cost = withMinimumCharge(usageCostMicro(P, mode, usage(inT, outT, cached, writes), FX));
        expect(cost).toBeLessThanOrEqual(hold);
      }
    }
  });
});

describe("long-context tiers and server tools", () => {
  // Claude Sonnet 4.5's prices: above 200,000 input tokens, the whole call at the tier's.
  const SONNET: TokenPricing = {
    ...P,
    cacheWrite1h: 6_000_000,
    tiers: [
      { aboveInputTokens: 200_000, input: 6_000_000, output: 22_500_000, cachedInput: 600_000, cacheWrite: 7_500_000 },
    ],
    webSearchPer1k: 10_000_000,
  };

  test("a tier applies strictly above its threshold, counting cache reads and writes", () => {
    expect(pricesAt(SONNET, 200_000)).toBe(SONNET);
    expect(usageCostMicro(SONNET, "explicit", usage(200_000, 100), FX)).toBe(
      expected([
        [200_000, 3_000_000],
        [100, 15_000_000],
      ]),
    );
    // 150,000 read from the cache + 50,001 uncached: 200,001 input tokens, all at the tier.
    expect(usageCostMicro(SONNET, "explicit", usage(200_001, 100, 150_000), FX)).toBe(
      expected([
        [50_001, 6_000_000],
        [150_000, 600_000],
        [100, 22_500_000],
      ]),
    );
  });

  test("a one-hour write above a tier is the tier's input × 2, as Anthropic bills it", () => {
    expect(pricesAt(SONNET, 300_000).cacheWrite1h).toBe(12_000_000);
    const u = { ...usage(300_000, 0, 0, 100_000), cacheWrite1hTokens: 100_000 };
    expect(usageCostMicro(SONNET, "explicit", u, FX)).toBe(
      expected([
        [200_000, 6_000_000],
        [100_000, 12_000_000],
      ]),
    );
  });

  test("the hold prices its estimate at the tier it falls in", () => {
    expect(holdAmountMicro([SONNET], 250_000, 1000, FX)).toBe(
      expected([
        [250_000, 12_000_000],
        [1000, 22_500_000],
      ]),
    );
  });

  test("web searches at the price per 1,000, in the one rounding", () => {
    const u = { ...usage(1001, 7), webSearchRequests: 3 };
    // 3 searches × $10 / 1,000 = 30,000 micro-USD = 30,000,000,000 in the per-million-token unit.
    const n = (1001n * 3_000_000n + 7n * 15_000_000n + 3n * 10_000_000n * 1000n) * FX;
    expect(usageCostMicro(SONNET, "explicit", u, FX)).toBe((n + 999_999_999n) / 1_000_000_000n);
  });
});

describe("the token sum in doubles gives the exact BigInt sum", () => {
  /** The sum as it was computed before the double fast path: every product in BigInt. */
  const reference = (p: TokenPricing, caching: "automatic" | "explicit" | "reported", u: Usage): bigint => {
    const q = pricesAt(p, u.promptTokens);
    const discounted = caching !== "reported";
    const cached = Math.min(u.cachedTokens, u.promptTokens);
    const writes = Math.min(u.cacheWriteTokens, u.promptTokens - cached);
    const longWrites = Math.min(u.cacheWrite1hTokens ?? 0, writes);
    const plain = u.promptTokens - cached - writes;
    const cachedPrice = discounted && q.cachedInput !== null ? q.cachedInput : q.input;
    const writePrice = caching === "explicit" && q.cacheWrite !== null ? q.cacheWrite : q.input;
    const longPrice = caching === "explicit" ? (q.cacheWrite1h ?? Math.max(writePrice, q.input)) : q.input;
    const micro =
      BigInt(plain) * BigInt(q.input) +
      BigInt(cached) * BigInt(cachedPrice) +
      BigInt(writes - longWrites) * BigInt(writePrice) +
      BigInt(longWrites) * BigInt(longPrice) +
      BigInt(u.completionTokens) * BigInt(q.output) +
      BigInt(u.webSearchRequests ?? 0) * BigInt(q.webSearchPer1k ?? 0) * 1000n;
    return (micro * FX + 999_999_999n) / 1_000_000_000n;
  };

  test("for counts and prices from ordinary to far past 2^53 in their products, negatives included", () => {
    const count = fc.oneof(
      fc.integer({ min: 0, max: 200_000 }),
      fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      fc.integer({ min: -1000, max: 1000 }),
    );
    const price = fc.oneof(fc.integer({ min: 0, max: 100_000_000 }), fc.integer({ min: 0, max: 2 ** 40 }));
    fc.assert(
      fc.property(
        fc.record({ input: price, output: price, cachedInput: price, cacheWrite: price, cacheWrite1h: price }),
        fc.record({
          promptTokens: count,
          completionTokens: count,
          cachedTokens: count,
          cacheWriteTokens: count,
          cacheWrite1hTokens: count,
          webSearchRequests: fc.integer({ min: 0, max: 1000 }),
        }),
        fc.constantFrom("automatic" as const, "explicit" as const, "reported" as const),
        (prices, counts, caching) => {
          const p: TokenPricing = { ...prices, webSearchPer1k: 10_000_000 };
          const u: Usage = { ...counts, reasoningTokens: 0 };
          expect(usageCostMicro(p, caching, u, FX)).toBe(reference(p, caching, u));
        },
      ),
      { numRuns: 20_000 },
    );
  });

  test("the hold: the dearest candidate's worst case, exact for any counts", () => {
    const count = fc.oneof(
      fc.integer({ min: 0, max: 2_000_000 }),
      fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    );
    const price = fc.oneof(fc.integer({ min: 0, max: 100_000_000 }), fc.integer({ min: 0, max: 2 ** 40 }));
    const pricing = fc.record({ input: price, output: price, cachedInput: price, cacheWrite: price });
    fc.assert(
      fc.property(fc.array(pricing, { minLength: 1, maxLength: 4 }), count, count, (ps, input, max) => {
        let worst = 0n;
        for (const p of ps) {
          const inPrice = BigInt(Math.max(p.input, p.cacheWrite ?? 0));
          const micro = (BigInt(input) * inPrice + BigInt(max) * BigInt(p.output)) * FX;
          const c = (micro + 999_999_999n) / 1_000_000_000n;
          if (c > worst) worst = c;
        }
        expect(holdAmountMicro(ps, input, max, FX)).toBe(withMinimumCharge(worst));
      }),
      { numRuns: 20_000 },
    );
  });
});
