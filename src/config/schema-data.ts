/**
 * How long the database keeps per-call detail (docs/scaling.md, "Usage events by month"),
 * spread into the environment's schema (./schema.ts).
 */
import { Int } from "./schema-kinds";

export const DATA_SETTINGS = {
  USAGE_RETENTION_MONTHS: Int(
    0,
    1200,
    0,
    "Usage events (the per-call rows behind activity, reports and stats) are kept for the current month and this many before it, then their monthly partition is dropped; 0 keeps them for ever. The ledger is never pruned",
  ),
};
