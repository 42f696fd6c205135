/**
 * Fixed one-minute windows in Redis, shared by every instance: one INCR + PEXPIRE script per
 * request (atomic). A Redis failure throws; the caller answers 503 limiter_unavailable
 * rather than letting traffic through unlimited.
 */
import { RedisClient } from "bun";
import { decide, type RateDecision, type RateLimiter } from "./types";

const SCRIPT = `local c = redis.call('INCR', KEYS[1]) if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return c`;

export class RedisRateLimiter implements RateLimiter {
  private client: RedisClient;
  constructor(url: string, private windowMs = 60_000) {
    // No offline queue: while Redis is down, calls fail at once instead of piling up.
    this.client = new RedisClient(url, { connectionTimeout: 1000, enableOfflineQueue: false, autoReconnect: true, maxRetries: 1000000 });
  }
  async hit(key: string, limit: number): Promise<RateDecision> {
    const now = Date.now();
    const start = now - (now % this.windowMs);
    const count = Number(await this.client.send("EVAL", [SCRIPT, "1", `gw:rl:${key}:${start}`, String(this.windowMs + 1000)]));
    return decide(count, limit, start + this.windowMs - now);
  }
  async close(): Promise<void> {
    this.client.close();
  }
}
