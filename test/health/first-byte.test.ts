/** The first-byte window per provider: its p95 (nearest rank over the last samples) and the hedge delay built on it. */
import { describe, expect, test } from "bun:test";
import { FirstByteWindow, hedgeDelayMs, MIN_SAMPLES, WINDOW } from "../../src/core/health/first-byte";

describe("first-byte window", () => {
  test("p95 is unknown below the minimum of samples, then the nearest-rank 95th percentile", () => {
    const w = new FirstByteWindow();
    for (let i = 1; i < MIN_SAMPLES; i++) w.add("a", i);
    expect(w.p95("a")).toBeUndefined();
    w.add("a", MIN_SAMPLES);
    expect(w.p95("a")).toBe(MIN_SAMPLES);
    for (let i = MIN_SAMPLES + 1; i <= 100; i++) w.add("a", i);
    expect(w.p95("a")).toBe(95);
    expect(w.p95("b")).toBeUndefined();
  });

  test("only the last WINDOW samples count: a provider that got faster is seen as fast", () => {
    const w = new FirstByteWindow();
    for (let i = 0; i < WINDOW; i++) w.add("a", 5000);
    for (let i = 0; i < WINDOW; i++) w.add("a", 40);
    expect(w.p95("a")).toBe(40);
  });

  test("the recent average follows new samples at a fifth each", () => {
    const w = new FirstByteWindow();
    expect(w.recent("a")).toBeUndefined();
    w.add("a", 100);
    w.add("a", 200);
    expect(w.recent("a")).toBe(120);
  });

  test("the hedge delay is the p95 within the floor and ceiling, the ceiling while unknown", () => {
    const w = new FirstByteWindow();
    expect(hedgeDelayMs(w, "a", 100, 2000)).toBe(2000);
    for (let i = 0; i < 50; i++) w.add("a", 10);
    expect(hedgeDelayMs(w, "a", 100, 2000)).toBe(100);
    for (let i = 0; i < 50; i++) w.add("a", 800);
    expect(hedgeDelayMs(w, "a", 100, 2000)).toBe(800);
    for (let i = 0; i < 100; i++) w.add("a", 9000);
    expect(hedgeDelayMs(w, "a", 100, 2000)).toBe(2000);
  });
});
