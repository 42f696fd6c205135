/**
 * Fixed one-minute windows in a Map: O(1) per request. Windows of idle keys are dropped on
 * a timer so memory follows the number of active keys, not of keys ever seen.
 */
import { decide, type RateDecision, type RateLimiter } from "./types";

export class MemoryRateLimiter implements RateLimiter {
  private windows = new Map<string, { start: number; count: number }>();
  private timer: ReturnType<typeof setInterval>;
  constructor(private windowMs = 60_000) {
    this.timer = setInterval(() => this.prune(), windowMs);
    this.timer.unref?.();
  }
  async hit(key: string, limit: number): Promise<RateDecision> {
    const now = Date.now();
    const start = now - (now % this.windowMs);
    let w = this.windows.get(key);
    if (!w || w.start !== start) this.windows.set(key, (w = { start, count: 0 }));
    w.count++;
    return decide(w.count, limit, start + this.windowMs - now);
  }
  private prune(): void {
    const cutoff = Date.now() - this.windowMs;
    for (const [k, w] of this.windows) if (w.start < cutoff) this.windows.delete(k);
  }
  async close(): Promise<void> {
    clearInterval(this.timer);
  }
}
