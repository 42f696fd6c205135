/** A hold's answer as the ledger SQL functions return it (gw_hold, gw_hold_many, gw_lease_open). */
import type { HoldOutcome } from "../../core/billing/ledger";

/** The row: the outcome and the room left after it, bigint columns as text. */
export interface HoldRow {
  r: HoldOutcome;
  f: string | null;
  ft: string | null;
}

/** A hold's outcome and the room it left (for the estimate, hold-estimate.ts). */
export interface HoldAnswer {
  r: HoldOutcome;
  micro: bigint | null;
  tokens: number | null;
}

export const holdAnswer = (row: HoldRow): HoldAnswer => ({ r: row.r, micro: row.f === null ? null : BigInt(row.f), tokens: row.ft === null ? null : Number(row.ft) });
