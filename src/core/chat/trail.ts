/**
 * The attempt trail of a call: every upstream attempt (provider, outcome, reason, status,
 * time) kept on the plan while the caller's own trace (log line, spans) still sees each one.
 * A call that needed more than one attempt, or whose only attempt failed, has its trail kept
 * with its usage event (ChatDeps.attemptTrail), so the console can show retries, fallbacks and
 * hedges after the fact; a call answered at the first try is its usage event alone.
 */
import type { AttemptRecord, CallTrace } from "../model/trace";

/** An attempt as it is kept: what the log line shows, never the traceparent. */
export interface TrailAttempt {
  provider: string;
  model: string;
  outcome: string | null;
  reason: string | null;
  status: number | null;
  ms: number | null;
}

export interface TrailPort {
  keep(requestId: string, userId: string, attempts: TrailAttempt[]): void;
}

/** A trace that keeps every attempt in `into` and forwards everything to `inner`. */
export function trailing(into: AttemptRecord[], inner?: CallTrace): CallTrace {
  return {
    requested: (model) => inner?.requested(model),
    phase: (name) => inner?.phase(name) ?? (() => {}),
    attempt(provider, model) {
      const rec = inner?.attempt(provider, model) ?? { provider, model };
      into.push(rec);
      return rec;
    },
    attemptEnded: (rec) => inner?.attemptEnded(rec),
    answered: (model, provider, usage, costKrw, opts) => inner?.answered(model, provider, usage, costKrw, opts),
    streamOpened: () => inner?.streamOpened(),
    streamEnded: (ending) => inner?.streamEnded(ending),
  };
}

/** The trail worth keeping: more than one attempt, or one that did not answer; else null. */
export function trailOf(attempts: readonly AttemptRecord[] | undefined): TrailAttempt[] | null {
  if (!attempts?.length) return null;
  if (attempts.length === 1 && attempts[0]!.outcome === "ok") return null;
  return attempts.map((a) => ({
    provider: a.provider,
    model: a.model,
    outcome: a.outcome ?? null,
    reason: a.reason ?? null,
    status: a.status ?? null,
    ms: a.ms ?? null,
  }));
}
