/**
 * Builds a whole gateway from a Config: database (migrated), caches, limiter, invalidation
 * bus, settings, routes. Used by src/main.ts and by the tests, so both run the same wiring.
 */
import { AttemptTrailRepo } from "./db/repos/attempt-trails";
import type { Config } from "./config";
import { openDatabase, type Database, type OpenOptions } from "./db/client";
import { runMigrations } from "./db/migrate";
import { InvalidationBus } from "./db/invalidation";
import { KeyRepo } from "./db/repos/keys";
import { SettingsStore } from "./db/repos/settings";
import { UserRepo } from "./db/repos/users";
import { KeyCache } from "./core/auth/key-cache";
import { Authenticator } from "./http/auth";
import { AuthThrottle } from "./http/auth-throttle";
import { CountTokensGuard } from "./http/count-tokens-guard";
import { CallSlots } from "./http/call-slots";
import { CallAdmission } from "./core/calls/admission";
import { CounterFn, Gauge } from "./lib/metrics";
import { createApp } from "./http/app";
import type { AppDeps } from "./http/deps";
import { GatewayMetrics } from "./http/metrics";
import { MemoryRateLimiter } from "./lib/rate-limit/memory";
import { RedisRateLimiter } from "./lib/rate-limit/redis";
import type { RateLimiter } from "./lib/rate-limit/types";
import { fxToMilli, krwToMicro } from "./lib/money";
import { braveSearchProvider } from "./providers/search/brave";
import { log } from "./lib/log";
import { CatalogStore } from "./config/catalog-store";
import { ChatService } from "./core/chat/service";
import { EmbeddingService } from "./core/embeddings/service";
import type { Protocol } from "./core/chat/provider";
import { moneyPath } from "./boot/money";
import type { SqlLedger } from "./db/repos/ledger";
import type { HoldKeeper } from "./core/billing/hold-keeper";
import type { Settlements } from "./core/billing/settlements";
import { byokBox, persistentSecret } from "./boot/secrets";
import { chatProviderFor, embeddingProviderFor } from "./providers";
import { chatCachePort } from "./core/cache";
import { responseCacheOf } from "./boot/response-cache";
import { piiMasking } from "./core/chat/pii-mask";
import { startSimulator, type Simulator } from "./sim";
import { utcDay, type LifecyclePort } from "./core/catalog/lifecycle";
import { needsSimulator, SEARCH_PROVIDER, upstreamDirectory, type UpstreamDirectory } from "./upstreams";
import { upstreamHealth } from "./upstream-health";
import { chatRoutes } from "./http/routes/chat";
import { embeddingsRoutes } from "./http/routes/embeddings";
import { videoRoutes } from "./http/routes/video";
import { startVideo, type VideoModule } from "./jobs/video";
import { PolicyRepo, CachedPolicySource } from "./db/repos/policies";
import { PolicyRouter } from "./core/routing/router";
import { LatencyTracker } from "./core/routing/latency";
import { FirstByteWindow } from "./core/health/first-byte";
import { hedgePort } from "./http/hedge-metrics";
import { loadBenchmarks } from "./core/catalog/benchmarks";
import { policyRoutes } from "./http/routes/policies";
import { PolicyService } from "./core/policies/service";
import { modelsRoutes } from "./http/routes/models";
import { Elysia } from "elysia";
import { compactRoutes } from "./http/routes/responses-compact";
import { responsesRoutes } from "./http/routes/responses";
import { messagesRoutes } from "./http/routes/messages";
import { FeedbackRepo } from "./db/repos/feedback";
import { StoredResponseRepo } from "./db/repos/stored-responses";
import { responseStoreRoutes } from "./http/routes/responses-store";
import { RollupRepo } from "./db/repos/rollups";
import { keyedNoise, StatsService } from "./core/stats";
import { startStatsRollup, statsSettings } from "./jobs/stats-rollup";
import { statsRoutes } from "./http/routes/stats";
import { usageReportRoutes } from "./http/routes/usage-report";
import { activityRoutes } from "./http/routes/activity";
import { consoleRoutes } from "./console/routes";
import { adminOrgRoutes } from "./http/routes/admin-orgs";
import { videoDashboardRoutes } from "./http/routes/video-dashboard";

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
  stop(): Promise<void>;
}

export async function buildGateway(cfg: Config, opts: BuildOptions = {}): Promise<Gateway> {
  const db =
    opts.db ??
    (await openDatabase(
      opts.dbOptions ??
        (cfg.DATABASE_URL
          ? { url: cfg.DATABASE_URL, queryTimeoutMs: cfg.DB_QUERY_TIMEOUT_MS }
          : { dataDir: cfg.DATA_DIR }),
    ));
  await runMigrations(db);
  const byok = await byokBox(cfg, db);

  const jwtSecret = persistentSecret(cfg, "jwt-secret", cfg.JWT_SECRET, 48);
  const adminToken = cfg.ADMIN_TOKEN ?? (cfg.demoMode ? persistentSecret(cfg, "admin-token", undefined, 32) : null);

  const keys = new KeyRepo(db);
  const users = new UserRepo(db);
  const cache = new KeyCache();
  const bus = new InvalidationBus(db);
  const settings = new SettingsStore(db);
  await settings.load();
  settings.startRefresh();
  bus.on((ev) => {
    if (ev.t === "key") cache.invalidateKey(ev.id);
    else if (ev.t === "user") cache.invalidateUser(ev.id);
    else if (ev.t === "settings") settings.load().catch(() => {});
    else if (ev.t === "all") {
      cache.clear();
      settings.load().catch(() => {});
    }
  });
  await bus.start();

  const limiter: RateLimiter = cfg.REDIS_URL ? new RedisRateLimiter(cfg.REDIS_URL) : new MemoryRateLimiter();
  const metrics = new GatewayMetrics();
  const health = upstreamHealth(cfg, metrics.registry);
  const { ledger, keeper, settlements } = moneyPath(cfg, db, bus, metrics);
  const throttle = new AuthThrottle(limiter, {
    signupsPerIp: cfg.SIGNUP_RATE_PER_IP,
    loginsPerIp: cfg.LOGIN_RATE_PER_IP,
    loginFailuresPerEmail: cfg.LOGIN_FAILURES_PER_EMAIL,
    invalidKeysPerIp: cfg.INVALID_KEY_RATE_PER_IP,
    adminFailuresPerIp: cfg.ADMIN_FAILURES_PER_IP,
  });
  const auth = new Authenticator({
    // Read-your-writes for the account's own views: its charges landed, its leased room given back.
    settled: async (userId) => {
      await settlements.quiesce(userId);
      await ledger.leases?.retireAll({ userId });
    },
    keys,
    users,
    cache,
    limiter,
    jwtSecret,
    adminToken,
    metricsToken: cfg.METRICS_TOKEN ?? null,
    rateLimitRpm: cfg.RATE_LIMIT_RPM,
    accountRateLimitRpm: cfg.ACCOUNT_RATE_LIMIT_RPM,
    trustedProxies: cfg.TRUSTED_PROXIES,
    throttle,
  });

  const catalog = new CatalogStore({
    env: { CATALOG_PATH: cfg.CATALOG_PATH, CATALOG_HASH_PATH: cfg.CATALOG_HASH_PATH },
  });
  if (!catalog.peek())
    log.error("catalog failed verification; model endpoints answer 503", { problems: catalog.describeErrors() });
  const snapshot = catalog.peek();
  // The simulator runs only when it is on (demo mode, SIMULATOR=on) and some provider (the web
  // plugin's search engine included) has neither credential nor base URL of its own.
  const sim = needsSimulator(cfg, snapshot) ? await startSimulator({ port: cfg.SIM_PORT }) : null;
  const upstreams = upstreamDirectory(
    cfg,
    sim ? (p) => sim.baseUrl(p) : null,
    [...(snapshot?.providers ?? []), SEARCH_PROVIDER],
    byok,
  );
  // Outside demo mode the simulator is an explicit opt-in: say so at every start, naming what it answers for.
  if (cfg.simulator && !cfg.demoMode) {
    log.warn(
      "SIMULATOR=on: the built-in simulator answers (and calls are charged) for providers without a credential; never use it in production",
      { simulated: upstreams.simulated() },
    );
  }

  // Deprecation and retirement (docs/catalog.md, "Model lifecycle"): the day, and which offerings the simulator answers.
  const lifecycle: LifecyclePort = {
    today: () => cfg.CATALOG_TODAY ?? utcDay(new Date()),
    simulated: (o) => {
      const p = catalog.current().providersById[o.providerId];
      return p !== undefined && upstreams.simulates(p);
    },
  };
  // Workers need a URL of their own; a database handed in (tests) is polled inline.
  const video = startVideo(cfg, {
    db,
    ledger,
    dbUrl: opts.db ? undefined : (opts.dbOptions?.url ?? cfg.DATABASE_URL),
    catalog: () => catalog.current(),
    snapshot,
    endpoint: (p) => upstreams.endpoint(p),
    available: (p) => upstreams.available(p),
    lifecycle,
    observe: metrics.video,
    health: health.tracker ?? undefined,
  });
  metrics.registry.collect(async () => {
    const rows = await video.pool.repo.queueStats();
    metrics.videoProcessing.replace(rows.map((r) => ({ labels: { family: r.family }, value: r.processing })));
    metrics.videoQueueDepth.replace(rows.map((r) => ({ labels: { family: r.family }, value: r.due })));
  });
  const responseCache = responseCacheOf(cfg, db, catalog, upstreams);
  // First-byte times per provider: the recent average orders `provider.sort: latency`, the p95 times hedges.
  const firstByte = new FirstByteWindow();
  // Routing policies: a cached source invalidated on every instance by the bus.
  const policyRepo = new PolicyRepo(db);
  const policySource = new CachedPolicySource(policyRepo);
  bus.on((ev) => {
    if (ev.t === "policy" || ev.t === "all") policySource.invalidateAll();
  });
  const benchmarks = loadBenchmarks();
  if (benchmarks.problems.length)
    log.warn("benchmark table failed its schema; auto policies keep entry order", { problems: benchmarks.problems });
  const policyRouter = new PolicyRouter({
    source: policySource,
    gates: () => settings.get(),
    benchmarks: () => benchmarks.table,
    latency: new LatencyTracker(),
  });
  const embeddings = new EmbeddingService({
    catalog: () => catalog.current(),
    ledger,
    settlements,
    keeper,
    embedderFor: (p: Protocol) => embeddingProviderFor(p),
    upstreamFor: (provider, principal) => upstreams.endpoint(provider, principal),
    available: (provider) => upstreams.available(provider),
    lifecycle,
    fxMilli: fxToMilli(cfg.FX_USD_KRW),
    maxValues: cfg.EMBEDDINGS_MAX_VALUES,
    holdTtlSeconds: cfg.HOLD_TTL_SECONDS,
    retryBaseMs: cfg.RETRY_BASE_MS,
    firstByteTimeoutMs: cfg.UPSTREAM_FIRST_BYTE_TIMEOUT_MS,
    idleTimeoutMs: cfg.UPSTREAM_IDLE_TIMEOUT_MS,
    observe: (provider, outcome, ms) => metrics.upstream(provider, outcome, ms),
  });
  const chat = new ChatService({
    catalog: () => catalog.current(),
    ledger,
    settlements,
    providerFor: (p: Protocol) => chatProviderFor(p),
    upstreamFor: (provider, principal) => upstreams.endpoint(provider, principal),
    available: (provider) => upstreams.available(provider),
    lifecycle,
    fxMilli: fxToMilli(cfg.FX_USD_KRW),
    holdTtlSeconds: cfg.HOLD_TTL_SECONDS,
    keeper,
    streamDrainMs: cfg.STREAM_DRAIN_MS,
    health: health.tracker ?? undefined,
    retryBaseMs: cfg.RETRY_BASE_MS,
    firstByteTimeoutMs: cfg.UPSTREAM_FIRST_BYTE_TIMEOUT_MS,
    idleTimeoutMs: cfg.UPSTREAM_IDLE_TIMEOUT_MS,
    observe(provider, outcome, ms) {
      metrics.upstream(provider, outcome, ms);
      if (outcome === "ok") firstByte.add(provider, ms);
    },
    latencyOf: (provider) => firstByte.recent(provider),
    hedge: hedgePort(firstByte, cfg, metrics),
    continued: (from, to, ending) => metrics.continuations.inc({ from_provider: from, to_provider: to, ending }),
    attemptTrail: new AttemptTrailRepo(db),
    cache: chatCachePort(responseCache),
    policies: policyRouter,
    pii: piiMasking,
    // No search engine where Brave cannot be called: the web plugin is refused (503) unless optional.
    search: upstreams.available(SEARCH_PROVIDER)
      ? braveSearchProvider({ ...upstreams.endpoint(SEARCH_PROVIDER), timeoutMs: cfg.WEB_SEARCH_TIMEOUT_MS })
      : undefined,
    searchPriceMicro: krwToMicro(cfg.WEB_SEARCH_PRICE_KRW),
  });

  const responseStore = {
    repo: new StoredResponseRepo(db, cfg.RESPONSES_STORE_DAYS, {
      rowBytes: cfg.RESPONSES_STORE_MAX_RESPONSE_KB * 1024,
      accountBytes: cfg.RESPONSES_STORE_ACCOUNT_MB * 1024 * 1024,
    }),
    on: cfg.RESPONSES_STORE,
  };
  const sweeper = setInterval(() => {
    // This instance's running calls are renewed first, so its own sweep never takes them.
    keeper
      .renewNow()
      .catch((e) => log.warn("hold renewal failed", { error: e }))
      .then(() => ledger.sweepExpired())
      .catch((e) => log.warn("hold sweep failed", { error: e }));
    responseCache.purgeExpired().catch((e) => log.warn("cache purge failed", { error: e }));
    responseStore.repo.purgeExpired().catch((e) => log.warn("stored responses purge failed", { error: e }));
  }, 30_000);
  sweeper.unref?.();

  const admission = new CallAdmission({
    budget: cfg.UPSTREAM_MAX_CONCURRENT,
    perAccount: cfg.CONCURRENCY_PER_ACCOUNT,
    perKey: cfg.CONCURRENCY_PER_KEY,
    queueTimeoutMs: cfg.UPSTREAM_QUEUE_TIMEOUT_MS,
  });
  metrics.registry.add(
    new Gauge(
      "gateway_calls_in_flight",
      "Model calls holding a slot of this process's upstream budget",
      () => admission.running,
    ),
  );
  metrics.registry.add(
    new Gauge("gateway_calls_waiting", "Model calls waiting for a slot of the full budget", () => admission.waiting),
  );
  metrics.registry.add(
    new CounterFn(
      "gateway_calls_preempted_total",
      "Model calls whose slot a tenant under its fair share took (docs/reliability.md, 28.3)",
      () => admission.preemptions,
    ),
  );

  // Tracing off costs nothing: its packages are loaded only when an OTLP endpoint is set.
  const otlpUrl =
    cfg.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (cfg.OTEL_EXPORTER_OTLP_ENDPOINT ? cfg.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, "") + "/v1/traces" : null);
  const tracer = otlpUrl
    ? (await import("./http/tracing")).otlpTracer({ url: otlpUrl, serviceName: cfg.OTEL_SERVICE_NAME })
    : null;
  const deps: AppDeps = {
    tracer,
    config: cfg,
    db,
    auth,
    throttle,
    calls: new CallSlots(admission, (id) => users.freeCreditMicro(id)),
    keys,
    users,
    settings,
    bus,
    metrics,
    jwtSecret,
    adminToken,
    byok,
    chatProviderIds: () => (catalog.peek()?.providers ?? []).filter((p) => p.kind === "chat").map((p) => p.id),
  };
  const statsCfg = statsSettings(cfg);
  if (cfg.STATS_MIN_DISTINCT_KEYS !== undefined) {
    log.warn(
      "STATS_MIN_DISTINCT_KEYS is deprecated: set STATS_MIN_DISTINCT_ACCOUNTS (the threshold counts accounts now)",
      { threshold: statsCfg.minAccounts },
    );
  }
  const rollups = new RollupRepo(db, {
    accountCap: statsCfg.minAccounts,
    minAccountAgeHours: statsCfg.minAccountAgeHours,
  });
  const stats = new StatsService({
    reader: rollups,
    minAccounts: statsCfg.minAccounts,
    // Keyed by the persistent secret: the same on every instance and after a restart (docs/stats.md).
    noise: statsCfg.noise ? keyedNoise(jwtSecret) : undefined,
    ttlMs: statsCfg.maxAgeSeconds * 1000,
  });
  const statsJob =
    statsCfg.intervalMs > 0
      ? startStatsRollup({
          db,
          url: opts.db ? undefined : (opts.dbOptions?.url ?? cfg.DATABASE_URL),
          intervalMs: statsCfg.intervalMs,
          accountCap: statsCfg.minAccounts,
          minAccountAgeHours: statsCfg.minAccountAgeHours,
        })
      : null;

  const app = createApp(deps, [
    new Elysia({ name: "models-guard" }).use(
      modelsRoutes(
        () => catalog.current(),
        (p) => upstreams.available(p),
        health.tracker,
        lifecycle,
      ),
    ),
    chatRoutes(deps, { chat, keepaliveMs: cfg.SSE_KEEPALIVE_MS }),
    embeddingsRoutes(deps, embeddings),
    compactRoutes(deps),
    videoRoutes(deps, video),
    policyRoutes(
      deps,
      new PolicyService({
        store: policyRepo,
        catalog: () => catalog.current(),
        changed: (id) => bus.publish({ t: "policy", id }),
      }),
    ),
    responsesRoutes(deps, {
      chat,
      keepaliveMs: cfg.SSE_KEEPALIVE_MS,
      feedback: new FeedbackRepo(db),
      store: responseStore,
    }),
    responseStoreRoutes(deps, responseStore),
    messagesRoutes(deps, {
      chat,
      keepaliveMs: cfg.SSE_KEEPALIVE_MS,
      count: new CountTokensGuard(limiter, db, metrics, {
        perKey: cfg.COUNT_TOKENS_RPM_PER_KEY,
        perAccount: cfg.COUNT_TOKENS_RPM_PER_ACCOUNT,
      }),
    }),
    statsRoutes({ stats, maxAgeSeconds: statsCfg.maxAgeSeconds }),
    usageReportRoutes(deps, rollups),
    activityRoutes(deps),
    adminOrgRoutes(deps),
    videoDashboardRoutes(deps, video, video.pool.repo),
    consoleRoutes(cfg.FX_USD_KRW),
  ]);

  return {
    app,
    deps,
    catalog,
    chat,
    ledger,
    keeper,
    upstreams,
    sim,
    video,
    settlements,
    async stop() {
      // Settles still behind their answers land before the database goes.
      await settlements.quiesce(undefined, 10_000);
      await ledger.leases?.stop();
      await video.stop();
      clearInterval(sweeper);
      keeper.stop();
      await statsJob?.stop();
      await sim?.stop();
      settings.stop();
      await bus.stop();
      await limiter.close();
      health.stop();
      await tracer?.shutdown().catch(() => {});
      metrics.stop();
      if (!opts.db) await db.close();
    },
  };
}
