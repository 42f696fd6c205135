/**
 * Sliding windows (see types.ts) in Redis, shared by every instance: one Lua script per
 * request reads the key's slot counters (a hash), forgets the expired ones and counts the hit
 * when admitted, atomically. The script reads Redis's own clock, so instances with drifting
 * clocks still share one window. A Redis failure throws; the caller answers 503
 * limiter_unavailable rather than letting traffic through unlimited.
 *
 * The client has no offline queue, so while Redis is down calls fail at once instead of
 * piling up. It also connects lazily, and a command sent before the connection is up would
 * fail the same way: the first calls after start (or after an outage) wait for the
 * connection, at most `connectWaitMs` per attempt, then fail fast until it is back.
 */
import { RedisClient } from "bun";
import { decide, SLOTS, type RateDecision, type RateLimiter } from "./types";

// KEYS[1] the window; ARGV window ms, limit, 1 to count the hit (0 to peek). Returns
// {admitted 0/1, hits counted in the window, ms until room frees}: the same arithmetic as
// memory.ts (SLOTS = 60, msUntilFreed).
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local win, limit, count = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local n = ${SLOTS}
local slotMs = win / n
local slot = math.floor(now / slotMs)
local raw = redis.call('HGETALL', KEYS[1])
local slots, counts, sum = {}, {}, 0
for i = 1, #raw, 2 do
  local s = tonumber(raw[i])
  if s < slot - n then
    redis.call('HDEL', KEYS[1], raw[i])
  else
    slots[#slots + 1] = s
    counts[s] = tonumber(raw[i + 1])
    sum = sum + counts[s]
  end
end
local allowed = sum < limit
if allowed and count == 1 then
  redis.call('HINCRBY', KEYS[1], string.format('%d', slot), 1)
  redis.call('PEXPIRE', KEYS[1], math.ceil(win + 2 * slotMs))
  if not counts[slot] then
    slots[#slots + 1] = slot
    counts[slot] = 0
  end
  counts[slot] = counts[slot] + 1
  sum = sum + 1
end
table.sort(slots)
local need = allowed and 1 or (sum - limit + 1)
local left, acc = win, 0
for _, s in ipairs(slots) do
  acc = acc + counts[s]
  if acc >= need then
    left = (s + n + 1) * slotMs - now
    break
  end
end
return { allowed and 1 or 0, sum, math.ceil(left) }`;

export class RedisRateLimiter implements RateLimiter {
  private client: RedisClient;
  private connecting: Promise<void> | null = null;
  private connectStarted = 0;

  constructor(
    url: string,
    private windowMs = 60_000,
    private connectWaitMs = 1000,
  ) {
    this.client = new RedisClient(url, {
      connectionTimeout: connectWaitMs,
      enableOfflineQueue: false,
      autoReconnect: true,
      maxRetries: 1000000,
    });
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
      await Promise.race([
        this.connecting,
        new Promise<void>((resolve) => (timer = setTimeout(resolve, left))),
      ]).finally(() => clearTimeout(timer));
    }
    if (!this.client.connected) throw new Error("redis is not connected");
  }

  async hit(key: string, limit: number, windowMs = this.windowMs): Promise<RateDecision> {
    return this.run(key, limit, windowMs, 1);
  }

  async peek(key: string, limit: number, windowMs = this.windowMs): Promise<RateDecision> {
    return this.run(key, limit, windowMs, 0);
  }

  private async run(key: string, limit: number, windowMs: number, count: 0 | 1): Promise<RateDecision> {
    await this.ready();
    // gw:sw: (not gw:rl:, whose keys are fixed windows' strings): a hash, so the two never collide.
    const [allowed, hits, msLeft] = (await this.client.send("EVAL", [
      SCRIPT,
      "1",
      `gw:sw:${key}`,
      String(windowMs),
      String(limit),
      String(count),
    ])) as number[];
    return decide(allowed === 1, Number(hits), limit, Number(msLeft));
  }

  async close(): Promise<void> {
    this.client.close();
  }
}
