/**
 * The innermost ledger layer: the Ledger port over a LedgerStore, one statement per call. It
 * stamps the billing month, keeps the open-holds gauge for the holds it placed, and reports
 * charges the database capped at their hold. Layers above it (overlap.ts, leasing.ts) share
 * its interface, LedgerLayer; docs/ledger.md tells how they compose.
 */
import { currentMonth, type HoldRequest, type HoldStart, type UsageEvent } from "./ledger";
import type { HoldAnswer, LeaseStore, LedgerStore } from "./ledger-store";

/** The ledger port as its layers see it: a hold answers with the room it left. */
export interface LedgerLayer {
  hold(h: HoldRequest): Promise<HoldAnswer>;
  /** How the hold of `h` begins (Ledger.begin): a layer answers or asks the one below. */
  begin(h: HoldRequest, overlap: boolean): HoldStart;
  settle(id: string, costMicro: bigint, tokens: number, event: UsageEvent | null): Promise<boolean>;
  release(id: string, event: UsageEvent | null): Promise<boolean>;
  record(id: string, userId: string, keyId: string | null, event: UsageEvent): Promise<void>;
  renew(ids: readonly string[], ttlSeconds: number): Promise<void>;
  sweepExpired(limit: number): Promise<number>;
}

export interface LedgerHooks {
  /** Open holds (and leases) of this process went up or down. */
  onOpenChange(delta: number): void;
  /** A charge the database capped at its hold: `askedMicro` is what was asked. */
  onCapped(id: string, askedMicro: bigint): void;
  /** How long a call waited for its hold, whatever layer answered it (a settle's wait: SettleMeter). */
  onWait?(step: "hold", seconds: number): void;
}

export const NO_HOOKS: LedgerHooks = { onOpenChange: () => {}, onCapped: () => {} };

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class StoreLedger implements LedgerLayer {
  /** Holds this ledger placed and has not closed: the open-holds gauge counts them. */
  private open = new Set<string>();

  constructor(
    private store: LedgerStore,
    private leaseStore: LeaseStore,
    private hooks: LedgerHooks = NO_HOOKS,
  ) {}

  async hold(h: HoldRequest): Promise<HoldAnswer> {
    // Sent on the next turn of the event loop: the caller's upstream request leaves first
    // (building and writing the statement is ~50 µs of this thread), and holds keep their
    // order because deferred callbacks run first in, first out.
    await nextTurn();
    const answer = await this.store.hold({ ...h, month: currentMonth() });
    if (answer.outcome === "ok" && !h.closedElsewhere) {
      this.open.add(h.id);
      this.hooks.onOpenChange(1);
    }
    return answer;
  }

  begin(): HoldStart {
    return "await";
  }

  async settle(id: string, costMicro: bigint, tokens: number, event: UsageEvent | null): Promise<boolean> {
    const answer = await this.store.settle({ id, costMicro, tokens, event });
    if (answer === "capped") this.hooks.onCapped(id, costMicro);
    if (answer === "not_open") return false;
    this.closed(id);
    return true;
  }

  async release(id: string, event: UsageEvent | null): Promise<boolean> {
    const ok = await this.store.release(id, event);
    if (ok) this.closed(id);
    return ok;
  }

  record(id: string, userId: string, keyId: string | null, event: UsageEvent): Promise<void> {
    return this.store.record(id, userId, keyId, event);
  }

  renew(ids: readonly string[], ttlSeconds: number): Promise<void> {
    return ids.length ? this.store.renew(ids, ttlSeconds) : Promise.resolve();
  }

  async sweepExpired(limit: number): Promise<number> {
    let swept = 0;
    for (const row of await this.store.expired(limit)) {
      // A lease is closed, not released: what its calls spent stays its charged amount.
      if (row.lease) {
        if ((await this.leaseStore.trim(row.id, { micro: 0n, tokens: 0 }, { close: true })) === "ok") swept++;
      } else if (await this.release(row.id, null)) swept++;
    }
    return swept;
  }

  private closed(id: string): void {
    if (this.open.delete(id)) this.hooks.onOpenChange(-1);
  }
}
