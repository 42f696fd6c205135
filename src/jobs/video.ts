/**
 * The video jobs' background half: the object storage and the poller pool that drive every
 * accepted job to its end. The request-path service is built beside it (src/boot/video.ts),
 * which hands in the video providers' endpoints both halves use; `stop()` runs on shutdown,
 * before the database closes.
 */
import type { Config } from "../config";
import type { VideoObserver } from "../core/video/ports";
import type { VideoEndpoint } from "../core/video/provider";
import type { Database } from "../db/client";
import { log } from "../lib/log";
import type { ObjectStorage } from "../lib/storage";
import { VideoPollerPool } from "./video-poller";
import { openStorage, runtimeConfig } from "./video-runtime";

export interface VideoJobsDeps {
  db: Database;
  /** PostgreSQL URL the workers connect to; unset runs the poller inline. */
  dbUrl?: string;
  /** Provider id → where its task API is (fixed at start, from the catalog as loaded). */
  endpoints: Record<string, VideoEndpoint>;
  /** Video model id → its maker, for usage events. */
  makers: Record<string, string>;
  /** Counts upstream exchanges, charges and job states (metrics). */
  observe?: VideoObserver;
}

export interface VideoJobs {
  storage: ObjectStorage;
  pool: VideoPollerPool;
  stop(): Promise<void>;
}

export function startVideoJobs(cfg: Config, deps: VideoJobsDeps): VideoJobs {
  const runtime = runtimeConfig(cfg, deps.endpoints, deps.makers);
  if (cfg.VIDEO_LEASE_MS !== undefined) {
    log.warn('VIDEO_LEASE_MS is deprecated: set VIDEO_CLAIM_MS ("lease" names the credit leases)', {
      claim_ms: runtime.claimMs,
    });
  }
  const storage = openStorage(runtime.storage);
  const pool = new VideoPollerPool({
    db: deps.db,
    dbUrl: deps.dbUrl,
    size: cfg.VIDEO_POLL_WORKERS,
    runtime,
    storage,
    sweepIntervalMs: cfg.VIDEO_SWEEP_INTERVAL_MS,
    logLevel: cfg.LOG_LEVEL,
    observe: deps.observe,
  });
  pool.start();
  return { storage, pool, stop: () => pool.stop() };
}
