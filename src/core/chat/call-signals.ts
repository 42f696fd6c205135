/**
 * The signals that stop an upstream call: the client's (it left) and a routing policy's
 * deadline; a hold that travelled alongside the call and was refused stops it too (raceHold,
 * hold.ts). A stream follows the client's signal only until it opens: a client that leaves an
 * open stream is handled by the chat service (the upstream is still read for its usage, for a
 * bounded time).
 */
import { GatewayError } from "../errors";
import { DEADLINE_MISSED } from "../routing/execution";
import type { ChatPlan } from "./plan";

/** The caller's signal (`client`), bounded by the policy's deadline when it has one. */
export function callSignal(plan: ChatPlan, client = plan.caller.signal): AbortSignal | undefined {
  const ms = plan.policy?.deadlineMs;
  if (ms == null) return client;
  const deadline = AbortSignal.timeout(Math.max(1, Math.round(ms - (performance.now() - plan.startedAt))));
  return client ? AbortSignal.any([client, deadline]) : deadline;
}

/** A policy deadline that cut the attempts becomes a 502 rather than an abort. */
export function deadlineAware(plan: ChatPlan, signal: AbortSignal | undefined, e: unknown): unknown {
  if (signal?.aborted && !plan.caller.signal?.aborted && plan.policy?.deadlineMs != null) {
    plan.policy.facts.push("deadline=yes");
    return new GatewayError("upstream_unavailable", DEADLINE_MISSED, { retryable: true });
  }
  return e;
}

/**
 * The client's signal for a stream that is opening: `signal` aborts with it until `opened` or
 * `failed` is called. After `opened(onLeave)`, the client leaving calls `onLeave` instead.
 */
export class ClientGate {
  private gate = new AbortController();
  private follow = () => this.gate.abort(this.client?.reason);

  constructor(private client: AbortSignal | undefined) {
    if (client?.aborted) this.follow();
    else client?.addEventListener("abort", this.follow, { once: true });
  }

  get signal(): AbortSignal | undefined {
    return this.client ? this.gate.signal : undefined;
  }

  opened(onLeave: () => void): void {
    this.client?.removeEventListener("abort", this.follow);
    if (this.client?.aborted) onLeave();
    else this.client?.addEventListener("abort", onLeave, { once: true });
  }

  failed(): void {
    this.client?.removeEventListener("abort", this.follow);
  }
}
