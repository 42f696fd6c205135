/**
 * The retry and fallback loop of text calls: each candidate provider gets 1 call plus 2
 * automatic retries on transient failure (jittered exponential backoff), then the next
 * candidate. A rate-limited candidate is skipped at once; a rejection (4xx) stops everything,
 * since the same request would be rejected again. A candidate whose circuit is open (the
 * health tracker, src/core/health) is skipped without a call; when every candidate was
 * skipped or rate-limited, the client gets 429 with the earliest moment one may be back.
 */
import { GatewayError } from "../errors";
import { asUpstreamError, type UpstreamError } from "../upstream/error";
import { upstreamRateLimited, upstreamRejected, upstreamUnavailable } from "../upstream/client-error";
import type { Candidate } from "../routing/candidates";
import { logUpstreamFailure, upstreamReason } from "../upstream/words";
import type { AttemptRecord, CallTrace } from "../model/trace";
import type { AttemptVerdict, HealthGate } from "../health/tracker";

export const RETRIES_PER_PROVIDER = 2;

/** One upstream attempt; `signal` is the loop's own (a hedge race gives each lane its own). */
export type AttemptCall<T> = (c: Candidate, attempt?: AttemptRecord, signal?: AbortSignal) => Promise<T>;

/** The abort reason of a hedge race's losing lane (hedge.ts): its attempt ends `cancelled`, not failed. */
export class HedgeLost extends Error {
  constructor() {
    super("another provider answered first");
  }
}

export interface AttemptOptions {
  retryBaseMs: number;
  signal?: AbortSignal;
  sleep?: (ms: number) => Promise<void>;
  /** Called after every upstream attempt (metrics, latency-aware sorting). */
  observe?: (providerId: string, outcome: "ok" | UpstreamError["kind"] | "error", ms: number) => void;
  random?: () => number;
  /**
   * Retries for the candidate at `index` (routing policies set them per entry); without it,
   * or when it returns null, every candidate gets RETRIES_PER_PROVIDER.
   */
  retriesOf?: (c: Candidate, index: number) => number | null;
  /** The request's id, in the log line of every failed attempt. */
  requestId?: string;
  /** Sees every attempt with its outcome (the request's log line, its trace). */
  trace?: CallTrace;
  /** Circuit breaking: which candidates may be called, and what each attempt said of its provider. */
  health?: HealthGate;
  /** The calling account: a circuit opens only on failures of several accounts (breaker.ts). */
  account?: string;
}

/** What an attempt's failure says about the provider: a rejection of the request says nothing. */
function verdictOf(err: UpstreamError): AttemptVerdict {
  return err.kind === "rejected" ? "neutral" : "failed";
}

export interface AttemptSuccess<T> {
  value: T;
  candidate: Candidate;
  /** Providers tried before the one that answered (for logs). */
  attempts: number;
}

function ended(
  trace: CallTrace,
  rec: AttemptRecord,
  outcome: NonNullable<AttemptRecord["outcome"]>,
  t0: number,
  reason?: string,
): void {
  rec.outcome = outcome;
  rec.ms = Math.round(performance.now() - t0);
  if (reason !== undefined) rec.reason = reason;
  trace.attemptEnded(rec);
}

/** Delay before retry `n` (0-based): base × 2^n, jittered to 50–150 %, capped at 5 s. */
export function backoffMs(base: number, n: number, random = Math.random): number {
  return Math.min(5000, Math.round(base * 2 ** n * (0.5 + random())));
}

export async function withFallback<T>(
  candidates: readonly Candidate[],
  call: AttemptCall<T>,
  o: AttemptOptions,
): Promise<AttemptSuccess<T>> {
  // The failure lists are made at the first failure: most calls answer at the first try.
  let tried: { provider: string; model: string; error: string; status?: number }[] | undefined;
  let onlyRateLimits = true;
  let retryAfterMs: number | undefined;
  let attempts = 0;
  let skipped: { provider: string; model: string; error: "circuit_open" }[] | undefined;
  for (let index = 0; index < candidates.length; index++) {
    const c = candidates[index]!;
    const retries = o.retriesOf?.(c, index) ?? RETRIES_PER_PROVIDER;
    for (let n = 0; n <= retries; n++) {
      if (o.signal?.aborted) throw o.signal.reason ?? new Error("aborted");
      const gate = o.health?.admit(c.provider.id, c.model.id, o.account);
      if (gate && !gate.allowed) {
        retryAfterMs = Math.min(retryAfterMs ?? Infinity, gate.retryAfterMs);
        (skipped ??= []).push({ provider: c.provider.id, model: c.model.id, error: "circuit_open" });
        const rec = o.trace?.attempt(c.provider.id, c.model.id);
        if (rec) ended(o.trace!, rec, "skipped", performance.now(), "circuit_open");
        break; // no call, no retry: the next candidate
      }
      const t0 = performance.now();
      attempts++;
      const rec = o.trace?.attempt(c.provider.id, c.model.id);
      try {
        const value = await call(c, rec, o.signal);
        gate?.ticket.end("ok", performance.now() - t0);
        o.observe?.(c.provider.id, "ok", performance.now() - t0);
        if (rec) ended(o.trace!, rec, "ok", t0);
        return { value, candidate: c, attempts };
      } catch (e) {
        if (o.signal?.aborted) {
          gate?.ticket.end("neutral");
          const lost = o.signal.reason instanceof HedgeLost;
          if (rec) ended(o.trace!, rec, lost ? "cancelled" : "failed", t0, lost ? "hedge_lost" : "aborted");
          throw o.signal.reason ?? e;
        }
        // Our own refusal before the call (a BYOK credential that cannot be opened) is no upstream failure.
        if (e instanceof GatewayError) {
          gate?.ticket.end("neutral");
          if (rec) ended(o.trace!, rec, "failed", t0, e.errorCode);
          throw e;
        }
        const err = asUpstreamError(e);
        gate?.ticket.end(verdictOf(err));
        o.observe?.(c.provider.id, err === e ? err.kind : "error", performance.now() - t0);
        if (rec) {
          const next =
            err.kind === "rejected"
              ? "failed"
              : err.kind !== "rate_limited" && err.kind !== "timeout" && n < retries
                ? "retry"
                : index < candidates.length - 1
                  ? "fallback"
                  : "failed";
          rec.status = err.status;
          ended(o.trace!, rec, next, t0, `${err.kind}/${upstreamReason(err)}`);
        }
        (tried ??= []).push({
          provider: c.provider.id,
          model: c.model.id,
          error: err.kind,
          ...(err.status !== undefined ? { status: err.status } : undefined),
        });
        // What the provider said is for the operator; the client gets its meaning in our words.
        logUpstreamFailure(err, {
          request_id: o.requestId,
          provider: c.provider.id,
          model: c.model.id,
          attempt: attempts,
        });
        if (err.kind === "rejected") throw upstreamRejected(err, [c.provider.id]);
        if (err.kind === "rate_limited") {
          if (err.retryAfterMs !== undefined) retryAfterMs = Math.min(retryAfterMs ?? Infinity, err.retryAfterMs);
          break; // this provider is saturated; the next one may not be
        }
        onlyRateLimits = false;
        // A first-byte timeout is not sent again to the same provider (issue 28 #5): the likeliest
        // cause is the request's own size, and each try is upstream work nobody pays for.
        if (err.kind === "timeout") break;
        if (n < retries) {
          const ms = backoffMs(o.retryBaseMs, n, o.random);
          await (o.sleep ? o.sleep(ms) : Bun.sleep(ms));
        }
      }
    }
  }
  const failed = [...(tried ?? []), ...(skipped ?? [])];
  if (onlyRateLimits && failed.length) throw upstreamRateLimited(retryAfterMs, failed);
  throw upstreamUnavailable(failed);
}
