/**
 * The batching layer: under load, a store's holds and settles travel together, many calls per
 * statement and transaction (LedgerStore.step). A call goes out at once while fewer than
 * `slots` statements are in flight, so an idle gateway adds no wait; why two slots, and what it
 * gains, is in docs/ledger.md ("Batching").
 */
import type { HoldAnswer, HoldItem, LedgerStore, SettleAnswer, SettleItem } from "./ledger-store";
import { StepBatcher } from "./step-batcher";

export interface BatchingOptions {
  /** Ledger statements in flight at once. */
  slots: number;
  /** Calls in one statement at most. */
  maxBatch: number;
}

export const BATCHING: BatchingOptions = { slots: 2, maxBatch: 64 };

/** `store` with its holds and settles batched; a store without `step` is returned as it is. */
export function batched(store: LedgerStore, options: BatchingOptions = BATCHING): LedgerStore {
  const step = store.step?.bind(store);
  if (!step) return store;
  const batches = new StepBatcher<HoldItem, HoldAnswer, SettleItem, SettleAnswer>(options.slots, options.maxBatch, {
    step,
    hold: (item) => store.hold(item),
    settle: (item) => store.settle(item),
    failsAll: (e) => store.unavailable(e),
  });
  return {
    hold: (item) => batches.hold(item),
    settle: (item) => batches.settle(item),
    release: (id, event) => store.release(id, event),
    record: (id, userId, keyId, event) => store.record(id, userId, keyId, event),
    renew: (ids, ttlSeconds) => store.renew(ids, ttlSeconds),
    expired: (limit) => store.expired(limit),
    step,
    unavailable: (e) => store.unavailable(e),
  };
}
