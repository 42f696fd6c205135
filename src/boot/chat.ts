/**
 * Model calls, composed: the chat service (Chat Completions, Responses and Messages all call
 * it) with its routing policies, first-byte times, hedging, web search and response cache;
 * and the embeddings service beside it, over the same ledger and upstream directory.
 */
import type { Draining } from "./shutdown";
import { AttemptTrailRepo } from "../db/repos/attempt-trails";
import type { Config } from "../config";
import type { HoldKeeper } from "../core/billing/hold-keeper";
import type { Settlements } from "../core/billing/settlements";
import { chatCachePort, type ResponseCache } from "../core/cache";
import { loadBenchmarks } from "../core/routing/benchmark-table";
import type { Protocol } from "../core/model/provider";
import { piiMasking } from "../core/chat/pii-mask";
import { ChatService } from "../core/chat/service";
import { EmbeddingService } from "../core/embeddings/service";
import { FirstByteWindow } from "../core/health/first-byte";
import type { HealthGate } from "../core/health/tracker";
import { PolicyService } from "../core/policies/service";
import { LatencyTracker } from "../core/routing/latency";
import { PolicyRouter } from "../core/routing/router";
import { CachedPolicySource, PolicyRepo } from "../db/repos/policies";
import type { SqlLedger } from "../db/repos/ledger";
import { hedgePort } from "../http/hedge-metrics";
import type { GatewayMetrics } from "../http/metrics";
import { log } from "../lib/log";
import { fxToMilli, krwToMicro } from "../lib/money";
import { chatProviderFor, embeddingProviderFor } from "../providers";
import { braveSearchProvider } from "../providers/search/brave";
import { SEARCH_PROVIDER } from "../upstreams";
import type { CatalogPart } from "./catalog";
import type { Store } from "./database";

export interface ChatModuleDeps {
  /** The process's stopping state: open streams register with it (src/boot/shutdown.ts). */
  draining: Draining;
  store: Pick<Store, "db" | "bus" | "settings">;
  catalog: Pick<CatalogPart, "catalog" | "upstreams" | "lifecycle">;
  money: { ledger: SqlLedger; keeper: HoldKeeper; settlements: Settlements };
  metrics: GatewayMetrics;
  responseCache: ResponseCache;
  health?: HealthGate;
}

export interface ChatModule {
  chat: ChatService;
  embeddings: EmbeddingService;
  /** The routing policies' own routes edit them through this. */
  policies: PolicyService;
}

/** Routing policies: a cached source invalidated on every instance by the bus. */
function policyRouting(deps: ChatModuleDeps) {
  const { db, bus, settings } = deps.store;
  const repo = new PolicyRepo(db);
  const source = new CachedPolicySource(repo);
  bus.on((ev) => {
    if (ev.t === "policy" || ev.t === "all") source.invalidateAll();
  });
  const benchmarks = loadBenchmarks();
  if (benchmarks.problems.length)
    log.warn("benchmark table failed its schema; auto policies keep entry order", { problems: benchmarks.problems });
  const router = new PolicyRouter({
    source,
    gates: () => settings.get(),
    benchmarks: () => benchmarks.table,
    latency: new LatencyTracker(),
  });
  const service = new PolicyService({
    store: repo,
    catalog: () => deps.catalog.catalog.current(),
    changed: (id) => bus.publish({ t: "policy", id }),
  });
  return { router, service };
}

export function chatModule(cfg: Config, deps: ChatModuleDeps): ChatModule {
  const { catalog, upstreams, lifecycle } = deps.catalog;
  const { ledger, keeper, settlements } = deps.money;
  const metrics = deps.metrics;
  // First-byte times per provider: the recent average orders `provider.sort: latency`, the p95 times hedges.
  const firstByte = new FirstByteWindow();
  const policies = policyRouting(deps);
  const embeddings = new EmbeddingService({
    catalog: () => catalog.current(),
    ledger,
    settlements,
    keeper,
    embedderFor: (protocol: Protocol) => embeddingProviderFor(protocol),
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
    streams: deps.draining,
    catalog: () => catalog.current(),
    ledger,
    settlements,
    providerFor: (protocol: Protocol) => chatProviderFor(protocol),
    upstreamFor: (provider, principal) => upstreams.endpoint(provider, principal),
    available: (provider) => upstreams.available(provider),
    lifecycle,
    fxMilli: fxToMilli(cfg.FX_USD_KRW),
    holdTtlSeconds: cfg.HOLD_TTL_SECONDS,
    keeper,
    streamDrainMs: cfg.STREAM_DRAIN_MS,
    health: deps.health,
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
    attemptTrail: new AttemptTrailRepo(deps.store.db),
    cache: chatCachePort(deps.responseCache),
    policies: policies.router,
    pii: piiMasking,
    // No search engine where Brave cannot be called: the web plugin is refused (503) unless optional.
    search: upstreams.available(SEARCH_PROVIDER)
      ? braveSearchProvider({ ...upstreams.endpoint(SEARCH_PROVIDER), timeoutMs: cfg.WEB_SEARCH_TIMEOUT_MS })
      : undefined,
    searchPriceMicro: krwToMicro(cfg.WEB_SEARCH_PRICE_KRW),
  });
  return { chat, embeddings, policies: policies.service };
}
