/**
 * Sliding windows (see types.ts) in a Map: O(SLOTS) per request and per key. Windows of idle
 * keys are dropped on a timer so memory follows the number of active keys, not of keys ever seen.
 */
import { decide, msUntilFreed, SLOTS, type RateDecision, type RateLimiter } from "./types";

interface Window {
  windowMs: number;
  /** Slot numbers (time / slot length), ascending, and the hits counted in each. */
  slots: number[];
  counts: number[];
}

export class MemoryRateLimiter implements RateLimiter {
  private windows = new Map<string, Window>();
  private timer: ReturnType<typeof setInterval>;
  constructor(private windowMs = 60_000) {
    this.timer = setInterval(() => this.prune(), Math.min(windowMs, 60_000));
    this.timer.unref?.();
  }

  // Not async functions: the decision is made at once, and every request asks (no generator per hit).
  hit(key: string, limit: number, windowMs = this.windowMs): Promise<RateDecision> {
    return Promise.resolve(this.take(key, limit, windowMs, true));
  }

  peek(key: string, limit: number, windowMs = this.windowMs): Promise<RateDecision> {
    return Promise.resolve(this.take(key, limit, windowMs, false));
  }

  private take(key: string, limit: number, windowMs: number, count: boolean): RateDecision {
    const now = Date.now();
    const slotMs = windowMs / SLOTS;
    const slot = Math.floor(now / slotMs);
    let w = this.windows.get(key);
    if (!w || w.windowMs !== windowMs) w = { windowMs, slots: [], counts: [] };
    let old = 0;
    while (old < w.slots.length && w.slots[old]! < slot - SLOTS) old++;
    if (old) {
      w.slots.splice(0, old);
      w.counts.splice(0, old);
    }
    let sum = 0;
    for (const c of w.counts) sum += c;
    const allowed = sum < limit;
    if (allowed && count) {
      const last = w.slots.length - 1;
      if (w.slots[last] === slot) w.counts[last]!++;
      else {
        w.slots.push(slot);
        w.counts.push(1);
      }
      sum++;
      this.windows.set(key, w);
    }
    return decide(allowed, sum, limit, msUntilFreed(w.slots, w.counts, allowed ? 1 : sum - limit + 1, slotMs, now));
  }

  private prune(): void {
    const now = Date.now();
    for (const [k, w] of this.windows) {
      const slotMs = w.windowMs / SLOTS;
      if (!w.slots.length || (w.slots[w.slots.length - 1]! + SLOTS + 1) * slotMs <= now) this.windows.delete(k);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
  }
}
