/**
 * Public statistics, composed: the rollup reader and the stats service that answers from it
 * (privacy threshold, keyed noise), and the rollup job that folds usage events into it.
 */
import type { Config } from "../config";
import { keyedNoise, StatsService } from "../core/stats";
import { RollupRepo } from "../db/repos/rollups";
import { startStatsRollup, statsSettings } from "../jobs/stats-rollup";
import { log } from "../lib/log";
import type { Store } from "./database";

export interface StatsModule {
  stats: StatsService;
  /** The rollups, read by the account's own usage report as well. */
  rollups: RollupRepo;
  /** Lifetime of the public answers in caches (seconds). */
  maxAgeSeconds: number;
  stop(): Promise<void>;
}

export function statsModule(cfg: Config, store: Pick<Store, "db" | "workerUrl" | "jwtSecret">): StatsModule {
  const settings = statsSettings(cfg);
  if (cfg.STATS_MIN_DISTINCT_KEYS !== undefined) {
    log.warn(
      "STATS_MIN_DISTINCT_KEYS is deprecated: set STATS_MIN_DISTINCT_ACCOUNTS (the threshold counts accounts now)",
      { threshold: settings.minAccounts },
    );
  }
  const rollups = new RollupRepo(store.db, {
    accountCap: settings.minAccounts,
    minAccountAgeHours: settings.minAccountAgeHours,
  });
  const stats = new StatsService({
    reader: rollups,
    minAccounts: settings.minAccounts,
    // Keyed by the persistent secret: the same on every instance and after a restart (docs/stats.md).
    noise: settings.noise ? keyedNoise(store.jwtSecret) : undefined,
    ttlMs: settings.maxAgeSeconds * 1000,
  });
  const job =
    settings.intervalMs > 0
      ? startStatsRollup({
          db: store.db,
          url: store.workerUrl,
          intervalMs: settings.intervalMs,
          accountCap: settings.minAccounts,
          minAccountAgeHours: settings.minAccountAgeHours,
        })
      : null;
  return {
    stats,
    rollups,
    maxAgeSeconds: settings.maxAgeSeconds,
    async stop() {
      await job?.stop();
    },
  };
}
