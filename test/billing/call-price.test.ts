/**
 * The one price function of a call (src/core/billing/call-price.ts) gives what each of the five
 * places that priced a call gave before it replaced them: a chat call's settle (JSON or stream,
 * the minimum only for a success), a continued stream's parts (each at its own price, the
 * minimum once on the sum), a hedge loser's input and a policy's sub-call (no minimum of their
 * own), a policy's sum, and an embeddings call; BYOK zero everywhere. The old sites' formulas
 * are restated here as they were written; exact micro-won figures pin the arithmetic.
 */
import { describe, expect, test } from "bun:test";
import { callPrice, type PricedOffer } from "../../src/core/billing/call-price";
import { usageCostMicro, withMinimumCharge } from "../../src/core/billing/pricing";
import type { CachingMode, TokenPricing } from "../../src/core/catalog/types";
import type { Usage } from "../../src/core/model/types";

const FX = 1_400_000n; // 1400 KRW/USD in milli-won
const MIN = 100_000n; // 0.1 KRW
const SONNET: TokenPricing = { input: 3_000_000, output: 15_000_000, cachedInput: 300_000, cacheWrite: 3_750_000 };
const MINI: TokenPricing = { input: 150_000, output: 600_000, cachedInput: 75_000, cacheWrite: null };
const offer = (pricing: TokenPricing, caching: CachingMode): PricedOffer => ({
  offering: { pricing },
  provider: { caching },
});
const usage = (promptTokens: number, completionTokens: number, more: Partial<Usage> = {}): Usage => ({
  promptTokens,
  completionTokens,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  ...more,
});
const terms = (byok: boolean, minimum: boolean) => ({ fxMilli: FX, byok, minimum });
/** Σ tokens × price × fx / 1e9, rounded up once: one part's price. */
const priced = (parts: [number, number][]) =>
  (parts.reduce((a, [t, p]) => a + BigInt(t) * BigInt(p), 0n) * FX + 999_999_999n) / 1_000_000_000n;

describe("exact figures", () => {
  test("normal usage: input and output at the offering's prices, rounded up once", () => {
    const p = callPrice([{ candidate: offer(SONNET, "explicit"), usage: usage(10_000, 2_000) }], terms(false, true));
    expect(p.micro).toBe(
      priced([
        [10_000, 3_000_000],
        [2_000, 15_000_000],
      ]),
    ); // 0.03 + 0.03 USD
    expect(p.micro).toBe(84_000_000n); // 84 KRW at 1400 KRW/USD
    expect(p.parts).toEqual([84_000_000n]);
  });

  test("cached reads and writes at their own prices; reasoning is output, not priced twice", () => {
    const u = usage(10_000, 2_000, { cachedTokens: 6_000, cacheWriteTokens: 3_000, reasoningTokens: 1_500 });
    const p = callPrice([{ candidate: offer(SONNET, "explicit"), usage: u }], terms(false, true));
    expect(p.micro).toBe(
      priced([
        [1_000, 3_000_000],
        [6_000, 300_000],
        [3_000, 3_750_000],
        [2_000, 15_000_000],
      ]),
    );
    const plain = callPrice(
      [{ candidate: offer(SONNET, "explicit"), usage: { ...u, reasoningTokens: 0 } }],
      terms(false, true),
    );
    expect(p.micro).toBe(plain.micro);
    // A provider that only reports cached tokens bills them at the input price.
    const reported = callPrice([{ candidate: offer(SONNET, "reported"), usage: u }], terms(false, true));
    expect(reported.micro).toBe(
      priced([
        [10_000, 3_000_000],
        [2_000, 15_000_000],
      ]),
    );
  });

  test("the minimum charge: a success pays at least 0.1 KRW; a failure or a part pays its tokens", () => {
    const tiny = [{ candidate: offer(MINI, "automatic"), usage: usage(1, 1) }];
    expect(callPrice(tiny, terms(false, true)).micro).toBe(MIN);
    expect(callPrice(tiny, terms(false, false)).micro).toBe(1050n);
    expect(callPrice(tiny, terms(false, true)).parts).toEqual([1050n]);
    expect(callPrice([{ candidate: offer(MINI, "automatic"), usage: usage(0, 0) }], terms(false, true)).micro).toBe(
      MIN,
    );
  });

  test("BYOK: nothing for tokens, no minimum, every part zero", () => {
    const parts = [
      { candidate: offer(SONNET, "explicit"), usage: usage(10_000, 2_000, { cachedTokens: 500 }) },
      { candidate: offer(MINI, "automatic"), usage: usage(1, 1) },
    ];
    for (const minimum of [true, false])
      expect(callPrice(parts, terms(true, minimum))).toEqual({ micro: 0n, parts: [0n, 0n] });
  });

  test("several parts: each at its own price, rounded up on its own; the minimum once, on the sum", () => {
    const parts = [
      { candidate: offer(MINI, "automatic"), usage: usage(1, 1) },
      { candidate: offer({ input: 1, output: 1, cachedInput: null, cacheWrite: null }, "none"), usage: usage(1, 0) },
    ];
    const p = callPrice(parts, terms(false, false));
    expect(p.parts).toEqual([1050n, 1n]);
    expect(p.micro).toBe(1051n);
    expect(callPrice(parts, terms(false, true)).micro).toBe(MIN);
    const big = [
      { candidate: offer(SONNET, "explicit"), usage: usage(10_000, 2_000) },
      { candidate: offer(MINI, "automatic"), usage: usage(1, 1) },
    ];
    expect(callPrice(big, terms(false, true)).micro).toBe(84_000_000n + 1050n);
  });
});

/** The five sites as they were written before call-price.ts, restated with the same pricing calls. */
const old = {
  // call-bill.ts settle(plan, c, usage, status, minimum = complete)
  settle: (c: PricedOffer, u: Usage, byok: boolean, status: number, minimum: boolean) => {
    let micro = byok ? 0n : usageCostMicro(c.offering.pricing!, c.provider.caching, u, FX);
    if (!byok && minimum && status < 400) micro = withMinimumCharge(micro);
    return micro;
  },
  // continuation-bill.ts billParts + call-bill.ts closeContinued
  continued: (parts: { candidate: PricedOffer; usage: Usage }[], byok: boolean, complete: boolean) => {
    const each = parts.map(({ candidate: c, usage: u }) =>
      byok ? 0n : usageCostMicro(c.offering.pricing!, c.provider.caching, u, FX),
    );
    let micro = each.reduce((m, b) => m + b, 0n);
    if (complete && !byok) micro = withMinimumCharge(micro);
    return { micro, parts: each };
  },
  // service.ts hedge loser (never with BYOK: hedging is off for it) and orchestrate's sub-call
  hedgeLoser: (c: PricedOffer, u: Usage) => usageCostMicro(c.offering.pricing!, c.provider.caching, u, FX),
  subCall: (c: PricedOffer, u: Usage, byok: boolean) =>
    byok ? 0n : usageCostMicro(c.offering.pricing!, c.provider.caching, u, FX),
  // call-bill.ts settleSum over the sub-calls' total
  settleSum: (total: bigint, byok: boolean) => (byok ? 0n : withMinimumCharge(total)),
  // embeddings/service.ts
  embeddings: (c: PricedOffer, u: Usage, byok: boolean) =>
    byok ? 0n : withMinimumCharge(usageCostMicro(c.offering.pricing!, c.provider.caching, u, FX)),
};

describe("the same result the old sites gave", () => {
  const offers = [
    offer(SONNET, "explicit"),
    offer(SONNET, "automatic"),
    offer(SONNET, "reported"),
    offer(MINI, "automatic"),
    offer(MINI, "none"),
  ];
  const usages = [
    usage(0, 0),
    usage(1, 1),
    usage(37, 5),
    usage(1_000, 100, { cachedTokens: 600, cacheWriteTokens: 300 }),
    usage(50_000, 8_000, { cachedTokens: 20_000, reasoningTokens: 6_000 }),
    usage(12_000, 0, { cacheWriteTokens: 12_000 }),
  ];
  const grid = offers.flatMap((c) => usages.map((u) => ({ candidate: c, usage: u })));

  test("a chat call's settle: JSON (200), a finished stream, one cut off (499) or broken (502)", () => {
    for (const { candidate, usage: u } of grid)
      for (const byok of [false, true])
        for (const [status, complete] of [
          [200, true],
          [499, false],
          [502, false],
        ] as const)
          expect(callPrice([{ candidate, usage: u }], terms(byok, status < 400)).micro).toBe(
            old.settle(candidate, u, byok, status, complete),
          );
  });

  test("a continued stream: each part's price and the call's", () => {
    for (let i = 0; i + 2 < grid.length; i += 3) {
      const parts = grid.slice(i, i + 3);
      for (const byok of [false, true])
        for (const complete of [true, false]) {
          const now = callPrice(parts, terms(byok, complete));
          const was = old.continued(parts, byok, complete);
          expect({ micro: now.micro, parts: [...now.parts] }).toEqual(was);
        }
    }
  });

  test("a hedge loser's input, a policy's sub-calls and their sum", () => {
    for (const { candidate, usage: u } of grid) {
      const input = usage(u.promptTokens, 0);
      expect(callPrice([{ candidate, usage: input }], terms(false, false)).micro).toBe(
        old.hedgeLoser(candidate, input),
      );
    }
    for (const byok of [false, true]) {
      const subs = grid.slice(0, 4);
      const total = subs.reduce((m, s) => m + old.subCall(s.candidate, s.usage, byok), 0n);
      for (const s of subs)
        expect(callPrice([s], terms(byok, false)).micro).toBe(old.subCall(s.candidate, s.usage, byok));
      expect(callPrice(subs, terms(byok, true)).micro).toBe(old.settleSum(total, byok));
    }
  });

  test("an embeddings call", () => {
    for (const { candidate, usage: u } of grid) {
      const input = usage(u.promptTokens, 0);
      for (const byok of [false, true])
        expect(callPrice([{ candidate, usage: input }], terms(byok, true)).micro).toBe(
          old.embeddings(candidate, input, byok),
        );
    }
  });
});
