import { describe, expect, test } from "bun:test";
import {
  ceilDiv,
  fxToMilli,
  krwToMicro,
  microToKrw,
  microToKrwRounded,
  microToUsd,
  MIN_CHARGE_MICRO,
  tokenCostMicro,
  usdToMicros,
} from "../../src/lib/money";

describe("money", () => {
  test("krwToMicro: integers, decimals, strings and bigints", () => {
    expect(krwToMicro(0)).toBe(0n);
    expect(krwToMicro(1)).toBe(1_000_000n);
    expect(krwToMicro(970)).toBe(970_000_000n);
    expect(krwToMicro(0.1)).toBe(100_000n);
    expect(krwToMicro(1.5)).toBe(1_500_000n);
    expect(krwToMicro(0.000001)).toBe(1n);
    expect(krwToMicro(-2.25)).toBe(-2_250_000n);
    expect(krwToMicro("12.345678")).toBe(12_345_678n);
    expect(krwToMicro("7")).toBe(7_000_000n);
    expect(krwToMicro(" 3.5 ")).toBe(3_500_000n);
    expect(krwToMicro(5n)).toBe(5_000_000n);
    expect(krwToMicro(10_000_000_000)).toBe(10_000_000_000_000_000n);
    expect(() => krwToMicro("abc")).toThrow(RangeError);
    expect(() => krwToMicro("1.")).toThrow(RangeError);
    expect(() => krwToMicro(Number.NaN)).toThrow(RangeError);
    expect(MIN_CHARGE_MICRO).toBe(krwToMicro(0.1));
  });

  test("microToKrw keeps fractions of a won", () => {
    expect(microToKrw(0n)).toBe(0);
    expect(microToKrw(1_000_000n)).toBe(1);
    expect(microToKrw(1_500_000n)).toBe(1.5);
    expect(microToKrw(100_000n)).toBe(0.1);
    expect(microToKrw(1n)).toBe(0.000001);
    expect(microToKrw(-2_250_000n)).toBe(-2.25);
    expect(microToKrw(970_000_000n)).toBe(970);
    for (const krw of [0, 1, 0.5, 123.456789, 99999.000001]) expect(microToKrw(krwToMicro(krw))).toBe(krw);
  });

  test("microToKrwRounded rounds half up to whole won", () => {
    expect(microToKrwRounded(0n)).toBe(0);
    expect(microToKrwRounded(499_999n)).toBe(0);
    expect(microToKrwRounded(500_000n)).toBe(1);
    expect(microToKrwRounded(1_499_999n)).toBe(1);
    expect(microToKrwRounded(1_500_000n)).toBe(2);
    expect(microToKrwRounded(100_000n)).toBe(0);
    expect(microToKrwRounded(2_000_000n)).toBe(2);
    // Negative amounts (refunds, corrections) round half up too, not toward zero.
    expect(microToKrwRounded(-1_600_000n)).toBe(-2);
    expect(microToKrwRounded(-1_500_000n)).toBe(-1);
    expect(microToKrwRounded(-1_400_000n)).toBe(-1);
    expect(microToKrwRounded(-400_000n)).toBe(0);
  });

  test("tokenCostMicro = ceil(tokens × µ$/Mtok × m₩/$ / 1e9)", () => {
    const fx = fxToMilli(1400); // 1,400,000 m₩/$
    expect(fx).toBe(1_400_000n);
    // $0.15 per million tokens, 1M tokens at 1400 ₩/$ = 210 ₩ exactly.
    expect(tokenCostMicro(1_000_000, usdToMicros(0.15), fx)).toBe(210_000_000n);
    expect(tokenCostMicro(1, 150_000, fx)).toBe(210n);
    // Fractions of a micro-won round up, never down.
    expect(tokenCostMicro(1, 1, fx)).toBe(1n); // 0.0014 µ₩ → 1, not 0
    expect(tokenCostMicro(1000, 1000, 1_000_000n)).toBe(1000n); // exactly 1000
    expect(tokenCostMicro(1000, 1000, 1_000_001n)).toBe(1001n); // 1000.001 → 1001
    expect(tokenCostMicro(3, 500_000, 1_000_000n)).toBe(1500n);
    expect(tokenCostMicro(3, 499_999, 1_000_000n)).toBe(1500n); // 1499.997 → 1500
    expect(tokenCostMicro(0, 150_000, fx)).toBe(0n);
    expect(tokenCostMicro(100, 0, fx)).toBe(0n);
    expect(tokenCostMicro(-5, 150_000, fx)).toBe(0n);
    // Large counts stay exact (bigint).
    expect(tokenCostMicro(128_000, 75_000_000, fxToMilli(1385.5))).toBe(13_300_800_000n);
  });

  test("helpers: ceilDiv, usdToMicros, fxToMilli, microToUsd", () => {
    expect(ceilDiv(0n, 7n)).toBe(0n);
    expect(ceilDiv(7n, 7n)).toBe(1n);
    expect(ceilDiv(8n, 7n)).toBe(2n);
    expect(usdToMicros(0.15)).toBe(150_000);
    expect(usdToMicros(2.5)).toBe(2_500_000);
    expect(usdToMicros(0.0000001)).toBe(0);
    expect(fxToMilli(1385.25)).toBe(1_385_250n);
    expect(microToUsd(1_400_000_000n, 1_400_000n)).toBeCloseTo(1, 9);
    expect(microToUsd(210n, 1_400_000n)).toBeCloseTo(0.00000015, 12);
    expect(microToUsd(5n, 0n)).toBe(0);
  });
});
