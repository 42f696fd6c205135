/**
 * What stands before `POST /v1/messages/count_tokens` reaches Anthropic on the operator's
 * credential (issue 28 #15). The call is free to the client, so it is throttled per key and per
 * account (COUNT_TOKENS_RPM_PER_KEY, COUNT_TOKENS_RPM_PER_ACCOUNT: sliding minute windows in
 * the request limiter, shared through Redis when set): past either, 429 `rate_limited` with
 * Retry-After (Anthropic's envelope on this route). An account with no credit at all is
 * answered the gateway's own estimate without any upstream call; a BYOK key counts on its own
 * credential and may always ask. Every count is recorded in `gateway_count_tokens_total` by
 * outcome (no label names an account or key) and, when it went upstream, in one log line
 * naming the account and key.
 */
import type { KeyPrincipal } from "../core/auth/principal";
import { GatewayError, text } from "../core/errors";
import type { Database } from "../db/client";
import { log } from "../lib/log";
import type { RateLimiter } from "../lib/rate-limit/types";
import type { GatewayMetrics } from "./metrics";

const MINUTE = 60_000;

export interface CountTokensLimits {
  /** Counts per key per minute (0 = unlimited). */
  perKey: number;
  /** Counts per account per minute, all its keys together (0 = unlimited). */
  perAccount: number;
}

/** How one count was answered, as recorded. */
export type CountOutcome = "upstream" | "estimate" | "no_credit" | "throttled";

export class CountTokensGuard {
  constructor(
    private limiter: RateLimiter,
    private db: Database,
    private metrics: GatewayMetrics,
    private limits: CountTokensLimits,
  ) {}

  /**
   * Admits one count of `p` (429 past a limit) and says whether it may ask the upstream:
   * false for an account without credit (a BYOK key always may).
   */
  async admit(p: KeyPrincipal): Promise<{ upstream: boolean }> {
    await this.take(`count:key:${p.keyId}`, this.limits.perKey);
    await this.take(`count:acct:${p.user.id}`, this.limits.perAccount);
    if (p.kind === "byok") return { upstream: true };
    const rows = await this.db.query<{ ok: boolean }>("select balance_micro > 0 as ok from users where id = $1", [
      p.user.id,
    ]);
    return { upstream: rows[0]?.ok === true };
  }

  /** Records how a count was answered (`source` as in X-Token-Count-Source). */
  record(p: KeyPrincipal, upstream: boolean, source: string, tokens: number): void {
    const outcome: CountOutcome = !upstream ? "no_credit" : source === "estimate" ? "estimate" : "upstream";
    this.metrics.countTokens.inc({ outcome });
    if (outcome === "upstream")
      log.info("count_tokens answered upstream", { user_id: p.user.id, key_id: p.keyId, provider: source, tokens });
  }

  private async take(key: string, limit: number): Promise<void> {
    if (limit <= 0) return;
    let d;
    try {
      d = await this.limiter.hit(key, limit, MINUTE);
    } catch {
      throw new GatewayError("limiter_unavailable");
    }
    if (d.allowed) return;
    this.metrics.countTokens.inc({ outcome: "throttled" });
    throw new GatewayError(
      "rate_limited",
      text(
        "count_tokens 요청이 너무 많습니다. 잠시 후 다시 시도하세요.",
        "Too many count_tokens requests. Try again shortly.",
      ),
      { retryAfter: d.resetSeconds },
    );
  }
}
