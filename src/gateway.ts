/**
 * Builds a whole gateway from a Config, one module after the other (src/boot/), each building
 * one part and handing the next what it needs: the database and its bus, the money path, the
 * catalog and its upstreams, video, the response cache, the model-call services, statistics,
 * the HTTP app. Used by src/main.ts and by the tests, so both run the same wiring.
 */
import type { Config } from "./config";
import type { CatalogStore } from "./config/catalog-store";
import type { HoldKeeper } from "./core/billing/hold-keeper";
import type { Settlements } from "./core/billing/settlements";
import type { ChatService } from "./core/chat/service";
import type { Database, OpenOptions } from "./db/client";
import type { SqlLedger } from "./db/repos/ledger";
import { UsagePartitions } from "./db/repos/usage-partitions";
import type { AppDeps } from "./http/deps";
import { GatewayMetrics } from "./http/metrics";
import { log } from "./lib/log";
import type { createApp } from "./http/app";
import type { Simulator } from "./sim";
import type { UpstreamDirectory } from "./upstreams";
import { upstreamHealth } from "./upstream-health";
import { responseCacheOf } from "./boot/cache";
import { catalogAndUpstreams } from "./boot/catalog";
import { chatModule } from "./boot/chat";
import { openStore } from "./boot/database";
import { httpModule } from "./boot/http";
import { moneyPath } from "./boot/money";
import { paymentsModule } from "./boot/payments";
import { Draining } from "./boot/shutdown";
import { statsModule } from "./boot/stats";
import { startSweeper } from "./boot/sweeper";
import { startVideo, type VideoModule } from "./boot/video";

export interface BuildOptions {
  /** Use this already-open database instead of opening one from the config. */
  db?: Database;
  dbOptions?: OpenOptions;
}

export interface Gateway {
  app: ReturnType<typeof createApp>;
  deps: AppDeps;
  catalog: CatalogStore;
  chat: ChatService;
  ledger: SqlLedger;
  /** Renews the holds of running calls (the sweeper renews through it before it sweeps). */
  keeper: HoldKeeper;
  /** Settles running behind answers already sent. */
  settlements: Settlements;
  upstreams: UpstreamDirectory;
  /** The in-process upstream simulator, when it is on (demo mode, SIMULATOR=on) and some provider has no credential. */
  sim: Simulator | null;
  /** Video jobs: service, storage and the poller pool. */
  video: VideoModule;
  /** Whether the process is stopping, and its open streams (src/boot/shutdown.ts). */
  draining: Draining;
  /** `settleWaitMs`: how long the settles still behind their answers are waited for. */
  stop(settleWaitMs?: number): Promise<void>;
}

export async function buildGateway(cfg: Config, opts: BuildOptions = {}): Promise<Gateway> {
  const store = await openStore(cfg, opts);
  const usagePartitions = new UsagePartitions(store.db, cfg.USAGE_RETENTION_MONTHS);
  // A month without its partition still takes events (the DEFAULT partition): a failure here only warns.
  await usagePartitions.upkeep().catch((e) => log.warn("usage partition upkeep failed", { error: e }));
  const metrics = new GatewayMetrics();
  const health = upstreamHealth(cfg, metrics.registry);
  const money = moneyPath(cfg, store.db, store.bus, metrics);
  const { ledger, keeper, settlements } = money;
  const catalogPart = await catalogAndUpstreams(cfg, store.byok);
  const tracker = health.tracker ?? undefined;
  const video = startVideo(cfg, { store, ledger, catalog: catalogPart, metrics, health: tracker });
  const responseCache = responseCacheOf(cfg, store.db, catalogPart.catalog, catalogPart.upstreams);
  const draining = new Draining();
  const calls = chatModule(cfg, {
    draining,
    store,
    catalog: catalogPart,
    money,
    metrics,
    responseCache,
    health: tracker,
  });
  const stats = statsModule(cfg, store);
  const payments = paymentsModule(cfg, store.db, store.jwtSecret, catalogPart.sim);
  const http = await httpModule(cfg, {
    store,
    money,
    metrics,
    health: health.tracker,
    catalog: catalogPart,
    chat: calls,
    video,
    stats,
    payments,
    draining,
  });
  const sweeper = startSweeper(keeper, ledger, [
    { what: "cache", purgeExpired: () => responseCache.purgeExpired() },
    { what: "stored responses", purgeExpired: () => http.storedResponses.purgeExpired() },
    usagePartitions,
  ]);

  return {
    app: http.app,
    deps: http.deps,
    catalog: catalogPart.catalog,
    chat: calls.chat,
    ledger,
    keeper,
    upstreams: catalogPart.upstreams,
    sim: catalogPart.sim,
    video,
    settlements,
    draining,
    async stop(settleWaitMs = 10_000) {
      // Settles still behind their answers land before the database goes.
      await settlements.quiesce(undefined, settleWaitMs);
      await ledger.leases?.stop();
      await video.stop();
      sweeper.stop();
      payments.stop();
      keeper.stop();
      await stats.stop();
      await catalogPart.sim?.stop();
      await store.stop();
      await http.stop();
      health.stop();
      metrics.stop();
      await store.close();
    },
  };
}
