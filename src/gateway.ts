/**
 * Builds a whole gateway from a Config: database (migrated), caches, limiter, invalidation
 * bus, settings, routes. Used by src/main.ts and by the tests, so both run the same wiring.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "./config";
import { openDatabase, type Database, type OpenOptions } from "./db/client";
import { runMigrations } from "./db/migrate";
import { InvalidationBus } from "./db/invalidation";
import { KeyRepo } from "./db/repos/keys";
import { SettingsStore } from "./db/repos/settings";
import { UserRepo } from "./db/repos/users";
import { KeyCache } from "./core/auth/key-cache";
import { Authenticator } from "./http/auth";
import { createApp } from "./http/app";
import type { AppDeps } from "./http/deps";
import { GatewayMetrics } from "./http/metrics";
import { MemoryRateLimiter } from "./lib/rate-limit/memory";
import { RedisRateLimiter } from "./lib/rate-limit/redis";
import type { RateLimiter } from "./lib/rate-limit/types";
import { randomToken } from "./lib/secrets";

export interface BuildOptions {
  /** Use this already-open database instead of opening one from the config. */
  db?: Database;
  dbOptions?: OpenOptions;
}

export interface Gateway {
  app: ReturnType<typeof createApp>;
  deps: AppDeps;
  stop(): Promise<void>;
}

/** A secret from the environment, or one generated once and kept in DATA_DIR. */
export function persistentSecret(cfg: Config, file: string, given: string | undefined, length: number): string {
  if (given) return given;
  mkdirSync(cfg.DATA_DIR, { recursive: true });
  const path = join(cfg.DATA_DIR, file);
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  const s = randomToken(length);
  writeFileSync(path, s, { mode: 0o600 });
  return s;
}

export async function buildGateway(cfg: Config, opts: BuildOptions = {}): Promise<Gateway> {
  const db = opts.db ?? (await openDatabase(opts.dbOptions ?? (cfg.DATABASE_URL ? { url: cfg.DATABASE_URL } : { dataDir: cfg.DATA_DIR })));
  await runMigrations(db);

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
  });
  await bus.start();

  const limiter: RateLimiter = cfg.REDIS_URL ? new RedisRateLimiter(cfg.REDIS_URL) : new MemoryRateLimiter();
  const metrics = new GatewayMetrics();
  const auth = new Authenticator({
    keys,
    users,
    cache,
    limiter,
    jwtSecret,
    adminToken,
    rateLimitRpm: cfg.RATE_LIMIT_RPM,
    trustedProxies: cfg.TRUSTED_PROXIES,
  });

  const deps: AppDeps = {
    config: cfg,
    db,
    auth,
    keys,
    users,
    settings,
    bus,
    metrics,
    jwtSecret,
    adminToken,
    chatProviderIds: () => ["openai", "anthropic", "google", "deepseek", "together", "groq"],
  };
  const app = createApp(deps);

  return {
    app,
    deps,
    async stop() {
      settings.stop();
      await bus.stop();
      await limiter.close();
      if (!opts.db) await db.close();
    },
  };
}
