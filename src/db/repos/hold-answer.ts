/** A hold's answer as the ledger SQL functions return it (gw_hold, gw_ledger_step, gw_lease_open). */
import type { HoldOutcome } from "../../core/billing/ledger";
import type { HoldAnswer } from "../../core/billing/ledger-store";

/** The row: the outcome and the room left after it, bigint columns as text. */
export interface HoldRow {
  r: HoldOutcome;
  f: string | null;
  ft: string | null;
}

export const holdAnswer = (row: HoldRow): HoldAnswer => ({
  outcome: row.r,
  freeMicro: row.f === null ? null : BigInt(row.f),
  freeTokens: row.ft === null ? null : Number(row.ft),
});
