/**
 * What the ledger layers need of a database: the atomic money statements, each one round trip
 * and one transaction (src/db/repos/ledger-store.ts implements them over the gw_* SQL functions,
 * docs/ledger-functions.sql). The layers above (docs/ledger.md) add batching, room estimates and
 * credit leases; none of them moves money by itself.
 */
import type { HoldOutcome, HoldRequest, UsageEvent } from "./ledger";

/** A hold's outcome and the room it left the key (null where the answer carries none). */
export interface HoldAnswer {
  outcome: HoldOutcome;
  freeMicro: bigint | null;
  freeTokens: number | null;
}

/** A settle's answer: charged, charged the hold's amount only ('capped'), or already closed. */
export type SettleAnswer = "ok" | "capped" | "not_open";

export interface HoldItem extends HoldRequest {
  /** The billing month the key's counters are kept in (`YYYY-MM`, UTC). */
  month: string;
}

export interface SettleItem {
  id: string;
  costMicro: bigint;
  tokens: number;
  event: UsageEvent | null;
}

export interface LedgerStore {
  hold(item: HoldItem): Promise<HoldAnswer>;
  settle(item: SettleItem): Promise<SettleAnswer>;
  /** Gives the hold back in full; false when it was closed already. */
  release(id: string, event: UsageEvent | null): Promise<boolean>;
  /** A usage record without money. */
  record(id: string, userId: string, keyId: string | null, event: UsageEvent): Promise<void>;
  renew(ids: readonly string[], ttlSeconds: number): Promise<void>;
  /** Open holds past their expiry, oldest first; `lease` marks a credit lease's hold. */
  expired(limit: number): Promise<{ id: string; lease: boolean }[]>;
  /**
   * Settles, then holds, in one statement and transaction; answers in input order. Absent where
   * batching does not pay (PGlite runs one statement at a time anyway).
   */
  step?(settles: SettleItem[], holds: HoldItem[]): Promise<{ settles: SettleAnswer[]; holds: HoldAnswer[] }>;
  /** Whether an error means the database itself is out of reach (every call would meet it). */
  unavailable(e: unknown): boolean;
}

/** A leased call's charge: capped at the call's own hold, taken from its lease. */
export interface LeaseCharge {
  lease: string;
  id: string;
  costMicro: bigint;
  holdMicro: bigint;
  tokens: number;
  event: UsageEvent | null;
}

/** The statements of credit leases (gw_lease_open, gw_lease_charge, gw_lease_trim). */
export interface LeaseStore {
  open(item: HoldItem): Promise<HoldAnswer>;
  charge(items: LeaseCharge[]): Promise<SettleAnswer[]>;
  /** Gives back what the lease holds beyond `keep`, or all of it and closes it ('not_open' when closed already). */
  trim(id: string, keep: { micro: bigint; tokens: number }, opts: { close: boolean }): Promise<string>;
  /** What the account's open leases hold, those of every instance (micro-KRW). */
  leasedMicro(userId: string): Promise<bigint>;
}
