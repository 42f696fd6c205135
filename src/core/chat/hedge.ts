/**
 * Hedged requests (docs/hedging.md): when the first candidate has not produced its first byte
 * after `delayMs` (its provider's p95, bounded), the same request goes to the next candidate of
 * another provider; the first lane to answer wins and the other is aborted. Each lane is the
 * ordinary retry and fallback loop: the primary lane is the first candidate with its retries,
 * the hedge lane the rest of the list (the first other provider leading). A primary that fails
 * before the hedge fires falls back as without hedging; a call fails only when both lanes did.
 */
import { GatewayError } from "../errors";
import { HedgeLost, withFallback, type AttemptCall, type AttemptOptions, type AttemptSuccess } from "./attempts";
import { upstreamRateLimited, upstreamUnavailable } from "../upstream/client-error";
import type { Candidate, ProviderPrefs } from "../routing/candidates";
import type { AttemptRecord } from "../model/trace";

/** `not_needed`: the primary answered (or failed) before the hedge delay, so no hedge was sent; `both_failed`: a hedge was sent and neither lane answered. */
export type HedgeOutcome = "primary_won" | "hedge_won" | "not_needed" | "both_failed";

export interface HedgeRace {
  delayMs: number;
  /** Once per call: how the race went, and the lane cancelled while its upstream call was in flight. */
  ended(outcome: HedgeOutcome, loser?: { candidate: Candidate; waitedMs: number }): void;
}

/**
 * Hedging is the key owner's setting (docs/hedging.md, "Who may hedge"): a call hedges only on
 * a key with `hedge` on, unless the request says `provider.hedge: false`. A request's `hedge:
 * true` on a key without it is `ignored` (the client is told in x-gateway-warnings): a hedged
 * call may cost the loser's input too, which the owner, not any client of the key, agrees to.
 */
export function wantsHedge(
  prefs: ProviderPrefs | undefined,
  keyHedge: boolean | undefined,
): { hedge: boolean; ignored: boolean } {
  if (keyHedge !== true) return { hedge: false, ignored: prefs?.hedge === true };
  return { hedge: prefs?.hedge ?? true, ignored: false };
}

/** The hedge lane: every candidate after the first, the first of another provider leading; null when there is none. */
export function hedgeLane(candidates: readonly Candidate[]): Candidate[] | null {
  const [first, ...rest] = candidates;
  const i = rest.findIndex((c) => c.provider.id !== first?.provider.id);
  return i < 0 ? null : [rest[i]!, ...rest.slice(0, i), ...rest.slice(i + 1)];
}

type Settled<T> = { ok: true; v: AttemptSuccess<T> } | { ok: false; e: unknown };

/** What each lane has on the wire right now (for the loser's cost and waiting time). */
interface Lane {
  ctl: AbortController;
  inFlight: { candidate: Candidate; t0: number; rec?: AttemptRecord } | null;
}

const settle = <T>(p: Promise<AttemptSuccess<T>>): Promise<Settled<T>> =>
  p.then(
    (v) => ({ ok: true as const, v }),
    (e: unknown) => ({ ok: false as const, e }),
  );

/** A failure the other lane may still make up for (every candidate failed or was rate-limited). */
const recoverable = (e: unknown) =>
  e instanceof GatewayError && (e.errorCode === "upstream_unavailable" || e.errorCode === "upstream_rate_limited");

export async function hedged<T>(
  candidates: readonly Candidate[],
  call: AttemptCall<T>,
  o: AttemptOptions,
  race: HedgeRace,
): Promise<AttemptSuccess<T>> {
  const rest = hedgeLane(candidates);
  if (!rest) return withFallback(candidates, call, o);
  const a: Lane = { ctl: new AbortController(), inFlight: null };
  const b: Lane = { ctl: new AbortController(), inFlight: null };
  // Policies set retries per entry of the original list; the lanes keep them.
  const retriesOf = o.retriesOf && ((c: Candidate) => o.retriesOf!(c, candidates.indexOf(c)));
  const run = (cs: Candidate[], lane: Lane, hedge: boolean) =>
    settle(
      withFallback(
        cs,
        (c, rec, signal) => {
          if (hedge && rec) rec.reason = "hedge";
          lane.inFlight = { candidate: c, t0: performance.now(), rec };
          return call(c, rec, signal).finally(() => (lane.inFlight = null));
        },
        {
          ...o,
          ...(retriesOf ? { retriesOf } : undefined),
          signal: o.signal ? AbortSignal.any([o.signal, lane.ctl.signal]) : lane.ctl.signal,
        },
      ),
    );

  // The hedge fires while the primary lane (its retries included) has produced no first byte.
  let fire!: () => void;
  const fired = new Promise<"fired">((r) => (fire = () => r("fired")));
  const timer = setTimeout(fire, race.delayMs);
  const primary = run([candidates[0]!], a, false);
  const first = await Promise.race([primary, fired]);
  if (first !== "fired") {
    clearTimeout(timer);
    race.ended("not_needed");
    if (first.ok) return first.v;
    if (!recoverable(first.e)) throw first.e;
    // The primary failed before the hedge fired: the ordinary fallback, no race.
    const fallback = await settle(withFallback(rest, call, { ...o, ...(retriesOf ? { retriesOf } : undefined) }));
    if (fallback.ok) return fallback.v;
    throw recoverable(fallback.e) ? merged(first.e as GatewayError, fallback.e as GatewayError) : fallback.e;
  }

  const hedge = run(rest, b, true);
  const tagged = (p: Promise<Settled<T>>, lane: "a" | "b") => p.then((r) => ({ ...r, lane }));
  const r1 = await Promise.race([tagged(primary, "a"), tagged(hedge, "b")]);
  const [other, otherPromise] = r1.lane === "a" ? [b, hedge] : [a, primary];
  // The primary's rejection ends the call, as it would unhedged; the hedge's leaves the primary
  // running (providers differ in what they accept: another's limits must not fail this call).
  if (r1.ok || (r1.lane === "a" ? !recoverable(r1.e) : !(r1.e instanceof GatewayError))) {
    const loser = other.inFlight;
    // Marked now, not when its abort comes through: the answer's log line may be written first.
    if (loser?.rec)
      Object.assign(loser.rec, {
        outcome: "cancelled",
        reason: "hedge_lost",
        ms: Math.round(performance.now() - loser.t0),
      });
    other.ctl.abort(new HedgeLost());
    race.ended(
      !r1.ok ? "both_failed" : r1.lane === "a" ? "primary_won" : "hedge_won",
      loser ? { candidate: loser.candidate, waitedMs: performance.now() - loser.t0 } : undefined,
    );
    if (r1.ok) return r1.v;
    throw r1.e;
  }
  const r2 = await otherPromise;
  race.ended(!r2.ok ? "both_failed" : r1.lane === "a" ? "hedge_won" : "primary_won");
  if (r2.ok) return r2.v;
  if (recoverable(r1.e) && recoverable(r2.e)) throw merged(r1.e as GatewayError, r2.e as GatewayError);
  throw recoverable(r2.e) ? r1.e : r2.e;
}

/** Both lanes failed: one error naming every provider tried, as the single loop would have. */
function merged(x: GatewayError, y: GatewayError): GatewayError {
  const providers = [...(x.extras.providers ?? []), ...(y.extras.providers ?? [])];
  if (x.errorCode === "upstream_rate_limited" && y.errorCode === "upstream_rate_limited") {
    return upstreamRateLimited(Math.min(x.extras.retryAfter ?? 1, y.extras.retryAfter ?? 1) * 1000, providers);
  }
  return upstreamUnavailable(providers);
}
