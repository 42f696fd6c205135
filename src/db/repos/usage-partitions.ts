/**
 * Usage events by month (drizzle/0027, docs/scaling.md "Usage events by month"): every instance
 * makes sure this month's partition and the next two exist, and drops the months past
 * `USAGE_RETENTION_MONTHS` that the stats rollup has folded. The SQL function serializes
 * instances with an advisory lock, so running it everywhere is safe.
 */
import type { Database } from "../client";
import { log } from "../../lib/log";

/** What one upkeep did: months made (`YYYY-MM`), partitions dropped, and those kept for the rollup. */
export interface UpkeepResult {
  made: string[];
  dropped: string[];
  waiting_for_rollup: string[];
}

const HOUR_MS = 3_600_000;
/** Months made ahead: a quiet instance still finds next month's partition ready at midnight. */
const AHEAD = 2;

export class UsagePartitions {
  readonly what = "usage partitions";
  private lastRun = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly db: Database,
    private readonly keepMonths: number,
    private readonly now: () => number = Date.now,
  ) {}

  async upkeep(): Promise<UpkeepResult> {
    this.lastRun = this.now();
    const [row] = await this.db.query<{ r: UpkeepResult | string }>("select gw_usage_upkeep($1, $2) as r", [
      this.keepMonths,
      AHEAD,
    ]);
    const r = typeof row?.r === "string" ? (JSON.parse(row.r) as UpkeepResult) : row!.r;
    if (r.dropped.length > 0) log.info("usage events past retention dropped", { partitions: r.dropped });
    if (r.waiting_for_rollup.length > 0) {
      log.warn("usage events past retention kept: the stats rollup has not folded them", {
        partitions: r.waiting_for_rollup,
      });
    }
    return r;
  }

  /** The sweeper's turn (every 30 s): an upkeep at most once an hour. */
  async purgeExpired(): Promise<UpkeepResult | null> {
    if (this.now() - this.lastRun < HOUR_MS) return null;
    return this.upkeep();
  }
}
