/**
 * The HTTP side, composed: the rate limiter and the authenticator with its throttles, the
 * admission of model calls (with its gauges), request tracing when an OTLP endpoint is set,
 * the dependencies every route shares, and the app with all its routes in their order.
 */
import { Elysia } from "elysia";
import type { Config } from "../config";
import type { SqlLedger } from "../db/repos/ledger";
import type { Settlements } from "../core/billing/settlements";
import { CallAdmission } from "../core/calls/admission";
import type { HealthTracker } from "../core/health/tracker";
import { consoleRoutes } from "../console/routes";
import { FeedbackRepo } from "../db/repos/feedback";
import { StoredResponseRepo } from "../db/repos/stored-responses";
import { createApp } from "../http/app";
import { Authenticator } from "../http/auth";
import { AuthThrottle } from "../http/auth-throttle";
import { CallSlots } from "../http/call-slots";
import { CountTokensGuard } from "../http/count-tokens-guard";
import type { AppDeps } from "../http/deps";
import type { GatewayMetrics } from "../http/metrics";
import { activityRoutes } from "../http/routes/activity";
import { adminOrgRoutes } from "../http/routes/admin-orgs";
import { chatRoutes } from "../http/routes/chat";
import { embeddingsRoutes } from "../http/routes/embeddings";
import { messagesRoutes } from "../http/routes/messages";
import { modelsRoutes } from "../http/routes/models";
import { policyRoutes } from "../http/routes/policies";
import { responsesRoutes } from "../http/routes/responses";
import { compactRoutes } from "../http/routes/responses-compact";
import { responseStoreRoutes } from "../http/routes/responses-store";
import { statsRoutes } from "../http/routes/stats";
import { usageReportRoutes } from "../http/routes/usage-report";
import { videoRoutes } from "../http/routes/video";
import { videoDashboardRoutes } from "../http/routes/video-dashboard";
import { CounterFn, Gauge } from "../lib/metrics";
import { MemoryRateLimiter } from "../lib/rate-limit/memory";
import { RedisRateLimiter } from "../lib/rate-limit/redis";
import type { RateLimiter } from "../lib/rate-limit/types";
import type { CatalogPart } from "./catalog";
import type { ChatModule } from "./chat";
import type { Store } from "./database";
import type { StatsModule } from "./stats";
import type { Draining } from "./shutdown";
import type { PaymentsModule } from "./payments";
import type { VideoModule } from "./video";

export interface HttpModuleDeps {
  store: Store;
  money: { ledger: SqlLedger; settlements: Settlements };
  metrics: GatewayMetrics;
  /** Circuit states per provider, shown by /v1/models; null when circuit breaking is off. */
  health: HealthTracker | null;
  catalog: Pick<CatalogPart, "catalog" | "upstreams" | "lifecycle">;
  chat: ChatModule;
  video: VideoModule;
  stats: StatsModule;
  payments: PaymentsModule;
  draining: Draining;
}

export interface HttpModule {
  app: ReturnType<typeof createApp>;
  deps: AppDeps;
  /** Stored Responses (`store: true`), purged by the sweeper once expired. */
  storedResponses: StoredResponseRepo;
  /** Closes the rate limiter's connection and flushes the traces still buffered. */
  stop(): Promise<void>;
}

/** Model-call admission: the process budget, fair shares per account and key, and its gauges. */
function callAdmission(cfg: Config, metrics: GatewayMetrics): CallAdmission {
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
  return admission;
}

export async function httpModule(cfg: Config, deps: HttpModuleDeps): Promise<HttpModule> {
  const { store, money, metrics } = deps;
  const { catalog, upstreams, lifecycle } = deps.catalog;
  const limiter: RateLimiter = cfg.REDIS_URL ? new RedisRateLimiter(cfg.REDIS_URL) : new MemoryRateLimiter();
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
      await money.settlements.quiesce(userId);
      await money.ledger.leases?.retireAll({ userId });
    },
    keys: store.keys,
    users: store.users,
    sessions: store.sessions,
    cache: store.keyCache,
    limiter,
    jwtSecret: store.jwtSecret,
    adminToken: store.adminToken,
    metricsToken: cfg.METRICS_TOKEN ?? null,
    rateLimitRpm: cfg.RATE_LIMIT_RPM,
    accountRateLimitRpm: cfg.ACCOUNT_RATE_LIMIT_RPM,
    trustedProxies: cfg.TRUSTED_PROXIES,
    throttle,
  });
  const admission = callAdmission(cfg, metrics);

  // Tracing off costs nothing: its packages are loaded only when an OTLP endpoint is set.
  const otlpUrl =
    cfg.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (cfg.OTEL_EXPORTER_OTLP_ENDPOINT ? cfg.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, "") + "/v1/traces" : null);
  const tracer = otlpUrl
    ? (await import("../http/tracing")).otlpTracer({ url: otlpUrl, serviceName: cfg.OTEL_SERVICE_NAME })
    : null;
  const appDeps: AppDeps = {
    tracer,
    draining: () => deps.draining.active,
    config: cfg,
    db: store.db,
    auth,
    throttle,
    calls: new CallSlots(admission, (id) => store.users.freeCreditMicro(id)),
    keys: store.keys,
    users: store.users,
    sessions: store.sessions,
    settings: store.settings,
    bus: store.bus,
    metrics,
    jwtSecret: store.jwtSecret,
    adminToken: store.adminToken,
    byok: store.byok,
    chatProviderIds: () => (catalog.peek()?.providers ?? []).filter((p) => p.kind === "chat").map((p) => p.id),
  };

  const responseStore = {
    repo: new StoredResponseRepo(store.db, cfg.RESPONSES_STORE_DAYS, {
      rowBytes: cfg.RESPONSES_STORE_MAX_RESPONSE_KB * 1024,
      accountBytes: cfg.RESPONSES_STORE_ACCOUNT_MB * 1024 * 1024,
    }),
    on: cfg.RESPONSES_STORE,
  };
  const { chat, embeddings, policies } = deps.chat;
  const { video, stats } = deps;
  const app = createApp(appDeps, [
    new Elysia({ name: "models-guard" }).use(
      modelsRoutes(
        () => catalog.current(),
        (provider) => upstreams.available(provider),
        deps.health,
        lifecycle,
      ),
    ),
    chatRoutes(appDeps, { chat, keepaliveMs: cfg.SSE_KEEPALIVE_MS }),
    embeddingsRoutes(appDeps, embeddings),
    compactRoutes(appDeps),
    videoRoutes(appDeps, video),
    policyRoutes(appDeps, policies),
    responsesRoutes(appDeps, {
      chat,
      keepaliveMs: cfg.SSE_KEEPALIVE_MS,
      feedback: new FeedbackRepo(store.db),
      store: responseStore,
    }),
    responseStoreRoutes(appDeps, responseStore),
    messagesRoutes(appDeps, {
      chat,
      keepaliveMs: cfg.SSE_KEEPALIVE_MS,
      count: new CountTokensGuard(limiter, store.db, metrics, {
        perKey: cfg.COUNT_TOKENS_RPM_PER_KEY,
        perAccount: cfg.COUNT_TOKENS_RPM_PER_ACCOUNT,
      }),
    }),
    statsRoutes({ stats: stats.stats, maxAgeSeconds: stats.maxAgeSeconds }),
    usageReportRoutes(appDeps, stats.rollups),
    activityRoutes(appDeps),
    adminOrgRoutes(appDeps),
    videoDashboardRoutes(appDeps, video, video.pool.repo),
    deps.payments.routes(appDeps),
    consoleRoutes(cfg.FX_USD_KRW, deps.payments.pageSources),
  ]);
  return {
    app,
    deps: appDeps,
    storedResponses: responseStore.repo,
    async stop() {
      await limiter.close();
      await tracer?.shutdown().catch(() => {});
    },
  };
}
