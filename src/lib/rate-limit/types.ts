/**
 * Request limiters: in-process by default, Redis when shared by several instances. Both keep
 * sliding windows: a hit is admitted only while fewer than `limit` hits were admitted in the
 * last `windowMs`, whatever the clock says, so a burst straddling a minute boundary gets
 * `limit` calls, not twice that (as a fixed window would allow).
 *
 * A window is kept as SLOTS counters of windowMs / SLOTS each: O(SLOTS) memory per key,
 * whatever the limit. A check counts the current slot and the SLOTS before it, a span of at
 * least `windowMs`, so the bound is exact; a hit is forgotten between windowMs and
 * windowMs + one slot after it was counted.
 */
export const SLOTS = 60;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a counted hit leaves the window (refused: until one more is admitted). */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts one hit for `key` when it is admitted (a refused hit is not counted). Throws when the backend fails. */
  hit(key: string, limit: number, windowMs?: number): Promise<RateDecision>;
  /** Whether one more hit would be admitted, without counting it. */
  peek(key: string, limit: number, windowMs?: number): Promise<RateDecision>;
  close(): Promise<void>;
}

export function decide(allowed: boolean, count: number, limit: number, msLeft: number): RateDecision {
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(1, Math.ceil(msLeft / 1000)),
  };
}

/**
 * Milliseconds until the window frees room: until the oldest `need` counted hits have left it.
 * `slots` ascending, `counts` aligned; `slotMs` = windowMs / SLOTS.
 */
export function msUntilFreed(
  slots: readonly number[],
  counts: readonly number[],
  need: number,
  slotMs: number,
  now: number,
): number {
  let acc = 0;
  for (let i = 0; i < slots.length; i++) {
    acc += counts[i]!;
    if (acc >= need) return (slots[i]! + SLOTS + 1) * slotMs - now;
  }
  return SLOTS * slotMs;
}
