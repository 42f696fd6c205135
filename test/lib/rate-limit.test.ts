import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { MemoryRateLimiter } from "../../src/lib/rate-limit/memory";
import { RedisRateLimiter } from "../../src/lib/rate-limit/redis";
import { redisAvailable } from "../harness";
import { decide, type RateLimiter } from "../../src/lib/rate-limit/types";

setDefaultTimeout(20_000);

describe("decide", () => {
  test("remaining never negative, reset at least 1 s", () => {
    expect(decide(true, 1, 3, 59_500)).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 60 });
    expect(decide(true, 3, 3, 1000)).toEqual({ allowed: true, limit: 3, remaining: 0, resetSeconds: 1 });
    expect(decide(false, 3, 3, 1)).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 1 });
    expect(decide(false, 9, 3, 0)).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 1 });
    expect(decide(true, 1, 3, 1001).resetSeconds).toBe(2);
  });
});

describe("MemoryRateLimiter", () => {
  test("counts per key; a refused hit is not counted; room comes back one window after the hits", async () => {
    const windowMs = 600;
    const l = new MemoryRateLimiter(windowMs);
    try {
      const t0 = Date.now();
      expect((await l.hit("a", 2)).allowed).toBe(true);
      expect((await l.hit("a", 2)).remaining).toBe(0);
      const third = await l.hit("a", 2);
      expect(third.allowed).toBe(false);
      expect(third.resetSeconds).toBe(1);
      expect((await l.peek("a", 2)).allowed).toBe(false);
      expect((await l.hit("b", 2)).allowed).toBe(true); // other key, own count
      // Still inside the window: refused, however many times it is asked (refusals do not count).
      await Bun.sleep(Math.max(0, t0 + windowMs / 2 - Date.now()));
      expect((await l.hit("a", 2)).allowed).toBe(false);
      // One window and one slot after the first hits: both have left.
      await Bun.sleep(Math.max(0, t0 + windowMs + (2 * windowMs) / 60 + 5 - Date.now()));
      expect(await l.peek("a", 2)).toMatchObject({ allowed: true, remaining: 2 });
      expect(await l.hit("a", 2)).toMatchObject({ allowed: true, remaining: 1 });
    } finally {
      await l.close();
    }
  });

  test("each key keeps the window it is asked with", async () => {
    const l = new MemoryRateLimiter(60_000);
    try {
      expect((await l.hit("short", 1, 200)).allowed).toBe(true);
      expect((await l.hit("short", 1, 200)).allowed).toBe(false);
      await Bun.sleep(220);
      expect((await l.hit("short", 1, 200)).allowed).toBe(true);
      expect((await l.hit("long", 1)).allowed).toBe(true);
      const refused = await l.hit("long", 1);
      expect(refused.allowed).toBe(false);
      expect(refused.resetSeconds).toBeGreaterThan(55);
    } finally {
      await l.close();
    }
  });
});

/**
 * The attack on a fixed window: `limit` calls just before a window boundary and `limit` more
 * just after it, 2 × limit inside one window's length. A sliding window admits `limit` at most
 * in any span of `windowMs`.
 */
async function boundaryBurst(l: RateLimiter, key: string, limit: number, windowMs: number): Promise<number> {
  // The next multiple of the window at least 100 ms away: where a fixed window starts over.
  const boundary = Math.ceil((Date.now() + 100) / windowMs) * windowMs;
  await Bun.sleep(boundary - 60 - Date.now());
  let allowed = 0;
  for (let i = 0; i < limit; i++) if ((await l.hit(key, limit)).allowed) allowed++;
  await Bun.sleep(boundary + 20 - Date.now());
  for (let i = 0; i < limit; i++) if ((await l.hit(key, limit)).allowed) allowed++;
  return allowed;
}

describe("sliding window", () => {
  test("memory: a burst straddling a window boundary gets the limit, not twice the limit", async () => {
    const l = new MemoryRateLimiter(1000);
    try {
      expect(await boundaryBurst(l, "burst", 5, 1000)).toBe(5);
    } finally {
      await l.close();
    }
  });
});

describe.skipIf(!(await redisAvailable()))("RedisRateLimiter", () => {
  test("a burst straddling a window boundary gets the limit, not twice the limit", async () => {
    const l = new RedisRateLimiter("redis://127.0.0.1:6379", 1000);
    try {
      expect(await boundaryBurst(l, `burst-${crypto.randomUUID()}`, 5, 1000)).toBe(5);
    } finally {
      await l.close();
    }
  });

  test("two limiters share one count in Redis, from their first call on", async () => {
    const key = `unit-${crypto.randomUUID()}`;
    const a = new RedisRateLimiter("redis://127.0.0.1:6379");
    const b = new RedisRateLimiter("redis://127.0.0.1:6379");
    try {
      // No warm-up: the very first call of a fresh client must not fail while it connects.
      expect((await a.hit(key, 3)).remaining).toBe(2);
      expect((await b.hit(key, 3)).remaining).toBe(1);
      expect((await a.hit(key, 3)).allowed).toBe(true);
      const d = await b.hit(key, 3);
      expect(d.allowed).toBe(false);
      expect(d.resetSeconds).toBeGreaterThanOrEqual(1);
      // A hit leaves the window one window (60 s) and at most one slot (1 s) after it was counted.
      expect(d.resetSeconds).toBeLessThanOrEqual(61);
      // Peeks and refusals are not counted: still exactly the three admitted hits.
      expect(await a.peek(key, 4)).toMatchObject({ allowed: true, remaining: 1 });
      expect(await b.hit(key, 4)).toMatchObject({ allowed: true, remaining: 0 });
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
