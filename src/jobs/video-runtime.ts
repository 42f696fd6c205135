/**
 * What a video poller needs, built the same way on the main thread and inside a Bun worker:
 * the job store (which also closes holds) and the object storage over one database
 * connection, plus the upstream endpoints. `VideoRuntimeConfig` is plain data so it can be posted to a worker.
 */
import { join } from "node:path";
import type { Config } from "../config";
import type { PollerDeps } from "../core/video/poller";
import type { VideoObserver } from "../core/video/ports";
import type { VideoEndpoint } from "../core/video/provider";
import type { Database } from "../db/client";
import { VideoJobRepo } from "../db/repos/video-jobs";
import { log } from "../lib/log";
import { LocalStorage, S3Storage, type ObjectStorage } from "../lib/storage";
import { videoProviderFor } from "../providers/video";

export type StorageConfig =
  | { kind: "local"; dir: string }
  | { kind: "s3"; bucket?: string; endpoint?: string; region?: string; accessKeyId?: string; secretAccessKey?: string };

export interface VideoRuntimeConfig {
  storage: StorageConfig;
  /** Provider id → where its task API is (a real vendor or the simulator). */
  endpoints: Record<string, VideoEndpoint>;
  /** Video model id → its maker (the catalog's producer), for usage events. */
  makers: Record<string, string>;
  claimMs: number;
  pollInitialMs: number;
  pollMaxMs: number;
  requestTimeoutMs: number;
  retentionMs: number;
}

function storageConfig(cfg: Config): StorageConfig {
  if (cfg.VIDEO_STORAGE === "s3") {
    return {
      kind: "s3",
      bucket: cfg.S3_BUCKET,
      endpoint: cfg.S3_ENDPOINT,
      region: cfg.S3_REGION,
      accessKeyId: cfg.S3_ACCESS_KEY_ID,
      secretAccessKey: cfg.S3_SECRET_ACCESS_KEY,
    };
  }
  return { kind: "local", dir: cfg.VIDEO_STORAGE_DIR ?? join(cfg.DATA_DIR, "files") };
}

/** How long a poller's claim on a job lasts: VIDEO_CLAIM_MS, else its deprecated old name VIDEO_LEASE_MS, else 60 s. */
export function claimMs(cfg: Config): number {
  return cfg.VIDEO_CLAIM_MS ?? cfg.VIDEO_LEASE_MS ?? 60_000;
}

export function runtimeConfig(
  cfg: Config,
  endpoints: Record<string, VideoEndpoint>,
  makers: Record<string, string> = {},
): VideoRuntimeConfig {
  return {
    storage: storageConfig(cfg),
    endpoints,
    makers,
    claimMs: claimMs(cfg),
    pollInitialMs: cfg.VIDEO_POLL_INITIAL_MS,
    pollMaxMs: Math.max(cfg.VIDEO_POLL_MAX_MS, cfg.VIDEO_POLL_INITIAL_MS),
    requestTimeoutMs: cfg.UPSTREAM_FIRST_BYTE_TIMEOUT_MS,
    retentionMs: Math.round(cfg.VIDEO_RETENTION_HOURS * 3600 * 1000),
  };
}

export function openStorage(storage: StorageConfig): ObjectStorage {
  return storage.kind === "local" ? new LocalStorage(storage.dir) : new S3Storage(storage);
}

export interface PollerRuntime {
  deps: PollerDeps;
  repo: VideoJobRepo;
  storage: ObjectStorage;
}

/** Poller dependencies over `db` (storage opened from the config unless given). */
export function pollerRuntime(
  db: Database,
  rc: VideoRuntimeConfig,
  opts: { storage?: ObjectStorage; observe?: VideoObserver } = {},
): PollerRuntime {
  const repo = new VideoJobRepo(db);
  const storage = opts.storage ?? openStorage(rc.storage);
  const deps: PollerDeps = {
    jobs: repo,
    content: storage,
    providerFor: videoProviderFor,
    endpointFor: (providerId) => rc.endpoints[providerId],
    makerOf: (model) => rc.makers[model] ?? null,
    claimMs: rc.claimMs,
    pollInitialMs: rc.pollInitialMs,
    pollMaxMs: rc.pollMaxMs,
    requestTimeoutMs: rc.requestTimeoutMs,
    retentionMs: rc.retentionMs,
    log: (msg, fields) => log.warn(msg, fields),
    observe: opts.observe,
  };
  return { deps, repo, storage };
}
