import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { MemoryRateLimiter } from "../../src/lib/rate-limit/memory";
import { RedisRateLimiter } from "../../src/lib/rate-limit/redis";
import { redisAvailable } from "../harness";
import { decide } from "../../src/lib/rate-limit/types";

setDefaultTimeout(20_000);

/** Waits until at least `need` ms remain in the current window of length `windowMs`. */
async function freshWindow(windowMs: number, need: number) {
  const left = windowMs - (Date.now() % windowMs);
  if (left < need) await Bun.sleep(left + 5);
}

describe("decide", () => {
  test("allowed up to the limit, remaining never negative, reset at least 1 s", () => {
    expect(decide(1, 3, 59_500)).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 60 });
    expect(decide(3, 3, 1000)).toEqual({ allowed: true, limit: 3, remaining: 0, resetSeconds: 1 });
    expect(decide(4, 3, 1)).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 1 });
    expect(decide(9, 3, 0)).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 1 });
    expect(decide(1, 3, 1001).resetSeconds).toBe(2);
  });
});

describe("MemoryRateLimiter", () => {
  test("counts per key in fixed windows and starts over in the next window", async () => {
    const windowMs = 400;
    const l = new MemoryRateLimiter(windowMs);
    try {
      await freshWindow(windowMs, 200);
      expect((await l.hit("a", 2)).allowed).toBe(true);
      expect((await l.hit("a", 2)).remaining).toBe(0);
      const third = await l.hit("a", 2);
      expect(third.allowed).toBe(false);
      expect(third.resetSeconds).toBe(1);
      expect((await l.hit("b", 2)).allowed).toBe(true); // other key, own count
      await Bun.sleep(windowMs - (Date.now() % windowMs) + 5);
      expect(await l.hit("a", 2)).toMatchObject({ allowed: true, remaining: 1 });
    } finally {
      await l.close();
    }
  });
});

describe.skipIf(!(await redisAvailable()))("RedisRateLimiter", () => {
  test("two limiters share one count in Redis, from their first call on", async () => {
    const key = `unit-${crypto.randomUUID()}`;
    const a = new RedisRateLimiter("redis://127.0.0.1:6379");
    const b = new RedisRateLimiter("redis://127.0.0.1:6379");
    try {
      await freshWindow(60_000, 3000);
      // No warm-up: the very first call of a fresh client must not fail while it connects.
      expect((await a.hit(key, 3)).remaining).toBe(2);
      expect((await b.hit(key, 3)).remaining).toBe(1);
      expect((await a.hit(key, 3)).allowed).toBe(true);
      const d = await b.hit(key, 3);
      expect(d.allowed).toBe(false);
      expect(d.resetSeconds).toBeGreaterThanOrEqual(1);
      expect(d.resetSeconds).toBeLessThanOrEqual(60);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test("with Redis unreachable, hit() throws quickly instead of hanging or allowing", async () => {
    const l = new RedisRateLimiter("redis://127.0.0.1:6390");
    try {
      for (let i = 0; i < 3; i++) {
        const t = performance.now();
        await expect(l.hit("k", 3)).rejects.toThrow();
        expect(performance.now() - t).toBeLessThan(2000);
      }
    } finally {
      await l.close();
    }
  });
});
