/**
 * The process's housekeeping timer: every 30 s its running calls' holds are renewed, then the
 * holds left expired (by this or a dead instance) are swept, and expired kept answers purged.
 */
import type { HoldKeeper } from "../core/billing/hold-keeper";
import type { SqlLedger } from "../db/repos/ledger";
import { log } from "../lib/log";

/** Something that keeps rows with an expiry; `what` names it in the warning when a purge fails. */
export interface Purgeable {
  what: string;
  purgeExpired(): Promise<unknown>;
}

export function startSweeper(keeper: HoldKeeper, ledger: SqlLedger, purgeables: Purgeable[]): { stop(): void } {
  const timer = setInterval(() => {
    // This instance's running calls are renewed first, so its own sweep never takes them.
    keeper
      .renewNow()
      .catch((e) => log.warn("hold renewal failed", { error: e }))
      .then(() => ledger.sweepExpired())
      .catch((e) => log.warn("hold sweep failed", { error: e }));
    for (const p of purgeables) p.purgeExpired().catch((e) => log.warn(`${p.what} purge failed`, { error: e }));
  }, 30_000);
  timer.unref?.();
  return { stop: () => clearInterval(timer) };
}
