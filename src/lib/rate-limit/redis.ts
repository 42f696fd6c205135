/**
 * Fixed one-minute windows in Redis, shared by every instance: one INCR + PEXPIRE script per
 * request (atomic). A Redis failure throws; the caller answers 503 limiter_unavailable
 * rather than letting traffic through unlimited.
 *
 * The client has no offline queue, so while Redis is down calls fail at once instead of
 * piling up. It also connects lazily, and a command sent before the connection is up would
 * fail the same way: the first calls after start (or after an outage) wait for the
 * connection, at most `connectWaitMs` per attempt, then fail fast until it is back.
 */
import { RedisClient } from "bun";
import { decide, type RateDecision, type RateLimiter } from "./types";

const SCRIPT = `local c = redis.call('INCR', KEYS[1]) if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return c`;

export class RedisRateLimiter implements RateLimiter {
  private client: RedisClient;
  private connecting: Promise<void> | null = null;
  private connectStarted = 0;

  constructor(url: string, private windowMs = 60_000, private connectWaitMs = 1000) {
    this.client = new RedisClient(url, { connectionTimeout: connectWaitMs, enableOfflineQueue: false, autoReconnect: true, maxRetries: 1000000 });
    this.ready().catch(() => {});
  }

  /** Resolves once connected; throws when Redis does not answer within the wait. */
  private async ready(): Promise<void> {
    if (this.client.connected) return;
    if (!this.connecting) {
      this.connectStarted = Date.now();
      // A refused connection settles at once (the next call retries); an unreachable host may
      // leave the attempt pending while the client keeps reconnecting on its own.
      const attempt: Promise<void> = this.client.connect().then(
        () => {},
        () => {},
      );
      this.connecting = attempt;
      void attempt.then(() => {
        if (this.connecting === attempt) this.connecting = null;
      });
    }
    const left = this.connectStarted + this.connectWaitMs - Date.now();
    if (left > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([this.connecting, new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]).finally(() => clearTimeout(timer));
    }
    if (!this.client.connected) throw new Error("redis is not connected");
  }

  async hit(key: string, limit: number): Promise<RateDecision> {
    await this.ready();
    const now = Date.now();
    const start = now - (now % this.windowMs);
    const count = Number(await this.client.send("EVAL", [SCRIPT, "1", `gw:rl:${key}:${start}`, String(this.windowMs + 1000)]));
    return decide(count, limit, start + this.windowMs - now);
  }

  async close(): Promise<void> {
    this.client.close();
  }
}
