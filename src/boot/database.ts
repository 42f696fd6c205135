/**
 * The process's persistent state: the database (opened from the config unless one is handed
 * in, then migrated), the secrets kept beside it, and what keeps this process's view of it
 * current on every instance: the invalidation bus, the settings store and the key cache.
 */
import type { Config } from "../config";
import { openDatabase, type Database, type OpenOptions } from "../db/client";
import { InvalidationBus } from "../db/invalidation";
import { runMigrations } from "../db/migrate";
import { KeyRepo } from "../db/repos/keys";
import { SettingsStore } from "../db/repos/settings";
import { SessionRepo } from "../db/repos/sessions";
import { UserRepo } from "../db/repos/users";
import { KeyCache } from "../core/auth/key-cache";
import type { SecretBox } from "../lib/secret-box";
import { byokBox, persistentSecret } from "./secrets";

export interface StoreOptions {
  /** Use this already-open database instead of opening one from the config (it stays open on stop). */
  db?: Database;
  dbOptions?: OpenOptions;
}

export interface Store {
  db: Database;
  /** PostgreSQL URL a worker thread may open its own connection to; unset when the database was handed in (tests poll inline). */
  workerUrl?: string;
  /** Seals BYOK credentials; null where no key is configured (outside demo mode). */
  byok: SecretBox | null;
  jwtSecret: string;
  /** The admin token: given, or generated in demo mode; null leaves the admin routes closed. */
  adminToken: string | null;
  keys: KeyRepo;
  users: UserRepo;
  /** The console's sign-in sessions (docs/console.md, "Sessions"). */
  sessions: SessionRepo;
  keyCache: KeyCache;
  bus: InvalidationBus;
  settings: SettingsStore;
  /** Stops the settings refresh and the bus (the database is closed by `close`, last of all). */
  stop(): Promise<void>;
  /** Closes the database when this store opened it. */
  close(): Promise<void>;
}

export async function openStore(cfg: Config, opts: StoreOptions): Promise<Store> {
  const db =
    opts.db ??
    (await openDatabase(
      opts.dbOptions ??
        (cfg.DATABASE_URL
          ? { url: cfg.DATABASE_URL, queryTimeoutMs: cfg.DB_QUERY_TIMEOUT_MS }
          : { dataDir: cfg.DATA_DIR }),
    ));
  await runMigrations(db);
  // Before anything starts: a BYOK key that cannot open the stored credentials stops the start here.
  const byok = await byokBox(cfg, db);
  const jwtSecret = persistentSecret(cfg, "jwt-secret", cfg.JWT_SECRET, 48);
  const adminToken = cfg.ADMIN_TOKEN ?? (cfg.demoMode ? persistentSecret(cfg, "admin-token", undefined, 32) : null);

  const keyCache = new KeyCache();
  const bus = new InvalidationBus(db);
  const settings = new SettingsStore(db);
  await settings.load();
  settings.startRefresh();
  bus.on((ev) => {
    if (ev.t === "key") keyCache.invalidateKey(ev.id);
    else if (ev.t === "user") keyCache.invalidateUser(ev.id);
    else if (ev.t === "settings") settings.load().catch(() => {});
    else if (ev.t === "all") {
      keyCache.clear();
      settings.load().catch(() => {});
    }
  });
  await bus.start();

  return {
    db,
    workerUrl: opts.db ? undefined : (opts.dbOptions?.url ?? cfg.DATABASE_URL),
    byok,
    jwtSecret,
    adminToken,
    keys: new KeyRepo(db),
    users: new UserRepo(db),
    sessions: new SessionRepo(db, { idleSeconds: cfg.SESSION_IDLE_SECONDS, maxSeconds: cfg.SESSION_MAX_SECONDS }),
    keyCache,
    bus,
    settings,
    async stop() {
      settings.stop();
      await bus.stop();
    },
    async close() {
      if (!opts.db) await db.close();
    },
  };
}
