/**
 * One ledger per process, composed of optional layers over a store (docs/ledger.md):
 *
 *   leasing (credit leases for busy keys)      leasing.ts, lease-policy.ts
 *   overlap (hold alongside the upstream call) overlap.ts, hold-estimate.ts
 *   store ledger (month, gauge, sweeper)       store-ledger.ts
 *   batching (many calls per statement)        batching.ts
 *   store (the SQL statements)                 src/db/repos/ledger-store.ts
 */
import { batched, type BatchingOptions } from "./batching";
import { HoldEstimates } from "./hold-estimate";
import type { HoldOutcome, HoldRequest, HoldStart, JobLedger, Ledger, UsageEvent } from "./ledger";
import type { LedgerStore, LeaseStore } from "./ledger-store";
import { LeasingLedger } from "./leasing";
import type { LeaseRules } from "./lease-policy";
import { OverlapLedger } from "./overlap";
import { NO_HOOKS, StoreLedger, type LedgerHooks, type LedgerLayer } from "./store-ledger";

export interface LedgerLayers {
  /** Many calls per statement under load; false where the store runs one statement at a time. */
  batching: BatchingOptions | false;
  /** Credit leases for busy keys (they need the overlap layer's room estimates, which are always on). */
  leases: boolean;
  leaseRules?: LeaseRules;
  hooks?: LedgerHooks;
  /** Asks every instance to retire its leases of an account (LeasingDeps.retireElsewhere). */
  retireElsewhere?(userId: string): Promise<void>;
}

export class ComposedLedger implements Ledger {
  /** The leasing layer, when leases are on: the gateway retires leases when limits change. */
  readonly leases: LeasingLedger | null;
  private top: LedgerLayer;
  private onWait: LedgerHooks["onWait"];

  constructor(store: LedgerStore, leaseStore: LeaseStore, layers: LedgerLayers) {
    const hooks = layers.hooks ?? NO_HOOKS;
    this.onWait = hooks.onWait;
    const base = new StoreLedger(layers.batching ? batched(store, layers.batching) : store, leaseStore, hooks);
    const estimates = new HoldEstimates();
    const overlap = new OverlapLedger(base, estimates);
    this.leases = layers.leases
      ? new LeasingLedger(overlap, {
          store: leaseStore,
          estimates,
          hooks,
          unavailable: (e) => store.unavailable(e),
          rules: layers.leaseRules,
          retireElsewhere: layers.retireElsewhere,
        })
      : null;
    this.top = this.leases ?? overlap;
  }

  async hold(h: HoldRequest): Promise<HoldOutcome> {
    const start = performance.now();
    const answer = await this.top.hold(h);
    this.onWait?.("hold", (performance.now() - start) / 1000);
    return answer.outcome;
  }

  begin(h: HoldRequest, overlap: boolean): HoldStart {
    const start = this.top.begin(h, overlap);
    if (start === "placed") this.onWait?.("hold", 0); // placed without waiting, as a hold answered by the lease
    return start;
  }

  settle(id: string, costMicro: bigint, tokens: number, event: UsageEvent | null): Promise<boolean> {
    // Its wait is timed by its caller, Settlements: no async layer here only to time it.
    return this.top.settle(id, costMicro, tokens, event);
  }

  release(id: string, event: UsageEvent | null): Promise<boolean> {
    return this.top.release(id, event);
  }

  record(id: string, userId: string, keyId: string | null, event: UsageEvent): Promise<void> {
    return this.top.record(id, userId, keyId, event);
  }

  renew(ids: readonly string[], ttlSeconds: number): Promise<void> {
    return this.top.renew(ids, ttlSeconds);
  }

  sweepExpired(limit = 500): Promise<number> {
    return this.top.sweepExpired(limit);
  }

  /**
   * This ledger for holds another component closes: a video job's hold is settled or released
   * by the job store's own statements (in any thread). Its holds meet the same room estimates
   * and leases — a hold refused for want of room while this process leases the account's room
   * is tried again once that is given back, so a chat lease never refuses a job the balance
   * covers — but stay out of the open-holds gauge, which counts what this ledger closes.
   */
  forJobs(): JobLedger {
    return {
      hold: (h) => this.hold({ ...h, leasable: false, closedElsewhere: true }),
      release: (id, event) => this.release(id, event),
    };
  }
}
