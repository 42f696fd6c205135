/**
 * Video, composed: the request-path `VideoService` (submit, status, content) and the
 * background jobs that poll the vendors (src/jobs/video.ts), over the same video providers'
 * endpoints, fixed from the catalog as loaded at start. Also reports the queue to /metrics.
 */
import type { Config } from "../config";
import type { CatalogProvider, CatalogSnapshot } from "../core/catalog/types";
import type { HealthGate } from "../core/health/tracker";
import type { VideoEndpoint } from "../core/video/provider";
import { VideoService } from "../core/video/service";
import type { SqlLedger } from "../db/repos/ledger";
import { VideoJobRepo } from "../db/repos/video-jobs";
import type { GatewayMetrics } from "../http/metrics";
import { startVideoJobs } from "../jobs/video";
import type { VideoPollerPool } from "../jobs/video-poller";
import type { ObjectStorage } from "../lib/storage";
import { hostIsNonPublic } from "../lib/url-guard";
import { videoProviderFor } from "../providers/video";
import type { CatalogPart } from "./catalog";
import type { Store } from "./database";

export interface VideoModule {
  service: VideoService;
  storage: ObjectStorage;
  pool: VideoPollerPool;
  stop(): Promise<void>;
}

export interface VideoModuleDeps {
  store: Pick<Store, "db" | "workerUrl">;
  /** The process's ledger (one per process: its leases and room estimates are the account's). */
  ledger: SqlLedger;
  catalog: Pick<CatalogPart, "catalog" | "snapshot" | "upstreams" | "lifecycle">;
  metrics: GatewayMetrics;
  /** Circuit breaking of submits (src/core/health); unset: off. */
  health?: HealthGate;
}

/** Provider id → endpoint for every video provider of the catalog as loaded. */
function videoEndpoints(
  snapshot: CatalogSnapshot | null,
  endpoint: (provider: CatalogProvider) => VideoEndpoint,
): Record<string, VideoEndpoint> {
  const endpoints: Record<string, VideoEndpoint> = {};
  for (const provider of snapshot?.providers ?? [])
    if (provider.kind === "video") endpoints[provider.id] = endpoint(provider);
  return endpoints;
}

/** Video model id → its maker (the catalog's producer), for usage events. */
function videoMakers(snapshot: CatalogSnapshot | null): Record<string, string> {
  const makers: Record<string, string> = {};
  for (const model of snapshot?.models ?? [])
    if (model.modality === "video" && model.maker) makers[model.id] = model.maker;
  return makers;
}

export function startVideo(cfg: Config, deps: VideoModuleDeps): VideoModule {
  const { catalog, snapshot, upstreams } = deps.catalog;
  const endpoint = (provider: CatalogProvider) => upstreams.endpoint(provider);
  const endpoints = videoEndpoints(snapshot, endpoint);
  const observe = deps.metrics.video;
  const jobs = startVideoJobs(cfg, {
    db: deps.store.db,
    dbUrl: deps.store.workerUrl,
    endpoints,
    makers: videoMakers(snapshot),
    observe,
  });
  const repo = new VideoJobRepo(deps.store.db);
  const service = new VideoService({
    catalog: () => catalog.current(),
    // The process's one ledger: a job's hold meets the room a chat lease of the account holds
    // (given back before a refusal stands), while staying out of the open-holds gauge.
    ledger: deps.ledger.forJobs(),
    jobs: repo,
    idempotency: repo,
    providerFor: videoProviderFor,
    endpointFor: (provider) => endpoints[provider.id] ?? endpoint(provider),
    available: (provider) => upstreams.available(provider),
    lifecycle: deps.catalog.lifecycle,
    submitTimeoutMs: cfg.UPSTREAM_FIRST_BYTE_TIMEOUT_MS,
    firstPollDelayMs: cfg.VIDEO_POLL_INITIAL_MS,
    observe,
    health: deps.health,
    // Private, loopback and link-local hosts are refused unless the operator allows them;
    // a slow DNS answer costs a submit at most a second.
    hostRefused: cfg.VIDEO_URL_PRIVATE_HOSTS_ALLOWED ? undefined : (url) => hostIsNonPublic(url, 1000),
    jobTimeoutMs: cfg.VIDEO_JOB_TIMEOUT_SECONDS * 1000,
    // No wake-up on accept: a new job is first due VIDEO_POLL_INITIAL_MS later anyway, and a
    // claim query per submit would only load the database.
  });
  deps.metrics.registry.collect(async () => {
    const rows = await jobs.pool.repo.queueStats();
    deps.metrics.videoProcessing.replace(rows.map((r) => ({ labels: { family: r.family }, value: r.processing })));
    deps.metrics.videoQueueDepth.replace(rows.map((r) => ({ labels: { family: r.family }, value: r.due })));
  });
  return { service, ...jobs };
}
