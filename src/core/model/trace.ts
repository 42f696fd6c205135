/**
 * How a call is observed: the one port the core reports through, for the per-request log line
 * and for traces. The HTTP side implements it (src/http/request-log.ts), so the core imports
 * nothing of HTTP; a caller without one (jobs, tests) is simply not observed.
 */
import type { Usage } from "./types";

/** One upstream attempt: filled in by the loop, read by the log line. */
export interface AttemptRecord {
  provider: string;
  model: string;
  /**
   * `ok`, or what came next after a failure: `retry` (same provider), `fallback` (next
   * candidate), `failed` (no further attempt); `skipped`: not called, its circuit was open;
   * `cancelled`: aborted because a hedged request's other lane answered first (docs/hedging.md);
   * `continued`: its stream broke mid-answer and the next attempt continued the answer
   * (`provider.continue_on_failure`).
   */
  outcome?: "ok" | "retry" | "fallback" | "failed" | "skipped" | "cancelled" | "continued";
  /** The failure's kind and reason (`transient/server_error`, `rate_limited/rate_limited`, ...); `hedge` on a hedge's attempt that answered. */
  reason?: string;
  /** The upstream's HTTP status, when it answered one. */
  status?: number;
  ms?: number;
  /** The W3C traceparent to send upstream (tracing on only; not logged). */
  traceparent?: string;
}

/** A span-like phase of the call; the function ends it (`error` marks it failed). */
export type PhaseEnd = (error?: string) => void;

export interface CallTrace {
  /** Whether phases become spans (tracing on); when false `phase` ends nothing anyone reads. */
  readonly traced?: boolean;
  /** The model the client named (catalog id or `orch/<slug>`). */
  requested(model: string): void;
  /** A phase starts (credit hold, settlement). */
  phase(name: "hold" | "settle"): PhaseEnd;
  /** An upstream attempt starts; the loop completes its record and hands it back through `attemptEnded`. */
  attempt(provider: string, model: string): AttemptRecord;
  attemptEnded(record: AttemptRecord): void;
  /** The answer: the model and provider that gave it, its usage, its cost in KRW, whether it came from the response cache. */
  answered(model: string, provider: string | null, usage: Usage, costKrw: number, opts: { cached: boolean }): void;
  /** A stream opened to the client; `streamEnded` comes once its bill is settled, however it ended. */
  streamOpened(): void;
  /** `error`: the code of a failed stream's end when it was not the upstream's (`service_unavailable`: the process stopped). */
  streamEnded(ending: "complete" | "failed" | "client_left", error?: string): void;
}
