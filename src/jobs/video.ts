/**
 * Video jobs, composed: the request-path service, the object storage and the poller pool.
 * The gateway calls `startVideo` once and `stop()` on shutdown (before closing the database).
 */
import type { LifecyclePort } from "../core/catalog/lifecycle";
import type { HealthGate } from "../core/health/tracker";
import type { Config } from "../config";
import type { CatalogProvider, CatalogSnapshot } from "../core/catalog/types";
import type { VideoEndpoint } from "../core/video/provider";
import type { VideoObserver } from "../core/video/ports";
import { VideoService } from "../core/video/service";
import type { Database } from "../db/client";
import type { SqlLedger } from "../db/repos/ledger";
import { VideoJobRepo } from "../db/repos/video-jobs";
import type { ObjectStorage } from "../lib/storage";
import { videoProviderFor } from "../providers/video";
import { VideoPollerPool } from "./video-poller";
import { hostIsNonPublic } from "../lib/url-guard";
import { log } from "../lib/log";
import { openStorage, runtimeConfig } from "./video-runtime";

export interface VideoModule {
  service: VideoService;
  storage: ObjectStorage;
  pool: VideoPollerPool;
  stop(): Promise<void>;
}

export interface VideoModuleDeps {
  db: Database;
  /** The process's ledger (one per process: its leases and room estimates are the account's). */
  ledger: SqlLedger;
  /** PostgreSQL URL the workers connect to; unset runs the poller inline. */
  dbUrl?: string;
  catalog: () => CatalogSnapshot;
  /** The catalog as loaded at start (the video providers' endpoints are fixed then). */
  snapshot: CatalogSnapshot | null;
  endpoint: (provider: CatalogProvider) => VideoEndpoint;
  /** Whether this deployment may call a provider (src/upstreams.ts). */
  available?: (provider: CatalogProvider) => boolean;
  /** Retired video models are refused at submit (catalog/lifecycle.ts). */
  lifecycle?: LifecyclePort;
  /** Counts upstream exchanges, charges and job states (metrics). */
  observe?: VideoObserver;
  /** Circuit breaking of submits (src/core/health); unset: off. */
  health?: HealthGate;
}

export function startVideo(cfg: Config, d: VideoModuleDeps): VideoModule {
  const endpoints: Record<string, VideoEndpoint> = {};
  for (const provider of d.snapshot?.providers ?? [])
    if (provider.kind === "video") endpoints[provider.id] = d.endpoint(provider);
  const makers: Record<string, string> = {};
  for (const model of d.snapshot?.models ?? [])
    if (model.modality === "video" && model.maker) makers[model.id] = model.maker;
  const runtime = runtimeConfig(cfg, endpoints, makers);
  if (cfg.VIDEO_LEASE_MS !== undefined) {
    log.warn('VIDEO_LEASE_MS is deprecated: set VIDEO_CLAIM_MS ("lease" names the credit leases)', {
      claim_ms: runtime.claimMs,
    });
  }
  const storage = openStorage(runtime.storage);
  const pool = new VideoPollerPool({
    db: d.db,
    dbUrl: d.dbUrl,
    size: cfg.VIDEO_POLL_WORKERS,
    runtime,
    storage,
    sweepIntervalMs: cfg.VIDEO_SWEEP_INTERVAL_MS,
    logLevel: cfg.LOG_LEVEL,
    observe: d.observe,
  });
  const repo = new VideoJobRepo(d.db);
  const service = new VideoService({
    catalog: d.catalog,
    // The process's one ledger: a job's hold meets the room a chat lease of the account holds
    // (given back before a refusal stands), while staying out of the open-holds gauge.
    ledger: d.ledger.forJobs(),
    jobs: repo,
    idempotency: repo,
    providerFor: videoProviderFor,
    endpointFor: (provider) => endpoints[provider.id] ?? d.endpoint(provider),
    available: d.available,
    lifecycle: d.lifecycle,
    submitTimeoutMs: cfg.UPSTREAM_FIRST_BYTE_TIMEOUT_MS,
    firstPollDelayMs: cfg.VIDEO_POLL_INITIAL_MS,
    // Private, loopback and link-local hosts are refused unless the operator allows them;
    // a slow DNS answer costs a submit at most a second.
    observe: d.observe,
    health: d.health,
    hostRefused: cfg.VIDEO_URL_PRIVATE_HOSTS_ALLOWED ? undefined : (url) => hostIsNonPublic(url, 1000),
    jobTimeoutMs: cfg.VIDEO_JOB_TIMEOUT_SECONDS * 1000,
    // No wake-up on accept: a new job is first due VIDEO_POLL_INITIAL_MS later anyway, and a
    // claim query per submit would only load the database.
  });
  pool.start();
  return { service, storage, pool, stop: () => pool.stop() };
}
