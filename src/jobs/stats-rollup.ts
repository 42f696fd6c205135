/**
 * The stats rollup job: folds new usage events into the rollup tables every few seconds.
 * On PostgreSQL it runs in a Bun Worker with its own connection, so a large catch-up never
 * competes with request handling for the main thread. PGlite is one in-process database
 * that a Worker cannot share, so there the same use-case runs inline on a timer.
 */
import type { Config } from "../config";
import type { Database } from "../db/client";
import { RollupRepo } from "../db/repos/rollups";
import { runRollup } from "../core/stats/rollup-state";
import { log } from "../lib/log";

/**
 * The statistics settings derived from the configuration: the privacy threshold (3 distinct
 * accounts, 1 in demo mode; STATS_MIN_DISTINCT_KEYS is its deprecated old name, read when the
 * new one is unset), the pause between rollup runs (5 s, 1 s in demo mode, which keeps the
 * rollups within 10 s and 2 s of the events) and the public cache lifetime (the same 10 s and
 * 2 s: docs/decisions.md #14).
 */
export function statsSettings(cfg: Config): {
  minAccounts: number;
  minAccountAgeHours: number;
  noise: boolean;
  intervalMs: number;
  maxAgeSeconds: number;
} {
  const minAccounts = cfg.STATS_MIN_DISTINCT_ACCOUNTS ?? cfg.STATS_MIN_DISTINCT_KEYS ?? (cfg.demoMode ? 1 : 3);
  return {
    minAccounts,
    // Sybils must pay and wait (docs/stats.md, "Who counts"); a threshold of 1 names everything anyway.
    minAccountAgeHours: minAccounts <= 1 ? 0 : (cfg.STATS_MIN_ACCOUNT_AGE_HOURS ?? (cfg.demoMode ? 0 : 168)),
    noise: minAccounts > 1 && cfg.STATS_NOISE !== "off",
    intervalMs: cfg.STATS_ROLLUP_INTERVAL_MS ?? (cfg.demoMode ? 1_000 : 5_000),
    maxAgeSeconds: cfg.demoMode ? 2 : 10,
  };
}

export interface StatsRollupOptions {
  db: Database;
  /** PostgreSQL URL: run in a Worker that opens its own connection to it. */
  url?: string;
  intervalMs: number;
  /** The privacy threshold (distinct accounts kept per bucket and name). */
  accountCap: number;
  /** The age an account must have at a call for it to count (hours). */
  minAccountAgeHours?: number;
  /** Events per transaction. Smaller on PGlite, where a batch blocks every other query. */
  batchSize?: number;
}

export interface StatsRollupJob {
  readonly mode: "worker" | "inline";
  stop(): Promise<void>;
}

/** Messages between the main thread and stats-rollup.worker.ts. */
export type RollupWorkerIn =
  | {
      type: "start";
      url: string;
      intervalMs: number;
      accountCap: number;
      minAccountAgeHours: number;
      batchSize: number;
    }
  | { type: "stop" };
export type RollupWorkerOut =
  | { type: "error"; message: string }
  | { type: "folded"; events: number }
  | { type: "stopped" };

export function startStatsRollup(o: StatsRollupOptions): StatsRollupJob {
  if (o.url && o.db.kind === "postgres") return startWorker(o.url, o);
  return startInline(o);
}

function startInline(o: StatsRollupOptions): StatsRollupJob {
  const repo = new RollupRepo(o.db, { accountCap: o.accountCap, minAccountAgeHours: o.minAccountAgeHours ?? 0 });
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let running: Promise<unknown> = Promise.resolve();
  const tick = () => {
    running = runRollup(repo, { limit: o.batchSize ?? 2_000, wait: false })
      .catch((e) => log.warn("stats rollup failed", { error: e }))
      .finally(() => {
        if (!stopped) {
          timer = setTimeout(tick, o.intervalMs);
          timer.unref?.();
        }
      });
  };
  timer = setTimeout(tick, 0);
  timer.unref?.();
  return {
    mode: "inline",
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

/**
 * The worker file. In the single binary every module is bundled into the entry point, so
 * `import.meta.url` is the binary's root (/$bunfs/root/…) and the worker, built as an extra
 * entry point by .ci/build.sh, sits at jobs/ under the common root src/ (checked: a path
 * next to this file fails there with ModuleNotFound).
 */
function workerEntry(): URL {
  return Bun.isStandaloneExecutable
    ? new URL("./jobs/stats-rollup.worker.ts", import.meta.url)
    : new URL("./stats-rollup.worker.ts", import.meta.url);
}

function startWorker(url: string, o: StatsRollupOptions): StatsRollupJob {
  const worker = new Worker(workerEntry().href);
  let onStopped = () => {};
  const stopped = new Promise<void>((resolve) => (onStopped = resolve));
  worker.onmessage = (e: MessageEvent<RollupWorkerOut>) => {
    if (e.data.type === "error") log.warn("stats rollup failed", { error: e.data.message });
    else if (e.data.type === "folded") log.debug("stats rollup", { events: e.data.events });
    else if (e.data.type === "stopped") onStopped();
  };
  worker.onerror = (e) => {
    log.error("stats rollup worker crashed", { error: e.message });
    onStopped();
  };
  worker.postMessage({
    type: "start",
    url,
    intervalMs: o.intervalMs,
    accountCap: o.accountCap,
    minAccountAgeHours: o.minAccountAgeHours ?? 0,
    batchSize: o.batchSize ?? 50_000,
  } satisfies RollupWorkerIn);
  worker.unref();
  return {
    mode: "worker",
    async stop() {
      worker.postMessage({ type: "stop" } satisfies RollupWorkerIn);
      // A batch in flight finishes (it is one transaction); a stuck one is cut after 10 s.
      await Promise.race([stopped, Bun.sleep(10_000)]);
      worker.terminate();
    },
  };
}
