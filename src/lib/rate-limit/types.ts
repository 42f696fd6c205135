/** A per-key requests-per-minute limiter: in-process by default, Redis when shared. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends. */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts one request for `key` against `limit` per minute. Throws when the backend fails. */
  hit(key: string, limit: number): Promise<RateDecision>;
  close(): Promise<void>;
}

export function decide(count: number, limit: number, msLeft: number): RateDecision {
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(1, Math.ceil(msLeft / 1000)),
  };
}
