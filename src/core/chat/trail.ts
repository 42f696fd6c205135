/**
 * The attempt trail of a call: every upstream attempt (provider, outcome, reason, status,
 * time) kept on the plan while the caller's own trace (log line, spans) still sees each one.
 * A call that needed more than one attempt, or whose only attempt failed, has its trail kept
 * with its usage event (ChatDeps.attemptTrail), so the console can show retries, fallbacks and
 * hedges after the fact; a call answered at the first try is its usage event alone.
 */
import type { AttemptRecord, CallTrace, PhaseEnd } from "../model/trace";
import type { Usage } from "../model/types";

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

/**
 * A trace that keeps every attempt in `into` and forwards everything to `inner`. A class, not
 * an object of closures: every call makes one, and its methods are then shared, not made anew.
 */
class Trailing implements CallTrace {
  constructor(
    private readonly into: AttemptRecord[],
    private readonly inner: CallTrace | undefined,
  ) {}
  get traced(): boolean {
    return this.inner?.traced === true;
  }
  requested(model: string): void {
    this.inner?.requested(model);
  }
  phase(name: "hold" | "settle"): PhaseEnd {
    return this.inner?.phase(name) ?? noPhase;
  }
  attempt(provider: string, model: string): AttemptRecord {
    const rec = this.inner?.attempt(provider, model) ?? { provider, model };
    this.into.push(rec);
    return rec;
  }
  attemptEnded(rec: AttemptRecord): void {
    this.inner?.attemptEnded(rec);
  }
  answered(model: string, provider: string | null, usage: Usage, costKrw: number, opts: { cached: boolean }): void {
    this.inner?.answered(model, provider, usage, costKrw, opts);
  }
  streamOpened(): void {
    this.inner?.streamOpened();
  }
  streamEnded(ending: "complete" | "failed" | "client_left", error?: string): void {
    this.inner?.streamEnded(ending, error);
  }
}

const noPhase: PhaseEnd = () => {};

export function trailing(into: AttemptRecord[], inner?: CallTrace): CallTrace {
  return new Trailing(into, inner);
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
