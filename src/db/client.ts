/**
 * The database behind one interface: PostgreSQL through postgres.js when a URL is given,
 * otherwise embedded PGlite in a data directory (or in memory for tests), both started from the
 * shipped initdb result (pglite-template.ts). Drizzle runs on both; hot paths use `query`
 * (raw, prepared) to skip the query builder's overhead.
 */
import { drizzle as drizzlePg } from "drizzle-orm/postgres-js";
import { drizzle as drizzleLite } from "drizzle-orm/pglite";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import postgres from "postgres";
import { PGlite } from "@electric-sql/pglite";
import { mkdirSync, existsSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import * as schema from "./schema";
import { pgliteAssets } from "./pglite-assets";
import { pgliteMemory } from "./pglite-memory";
import { seedFromTemplate, templateDump } from "./pglite-template";

export type Orm = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  readonly kind: "postgres" | "pglite";
  readonly orm: Orm;
  /** Raw parameterized query; rows as objects. bigint columns come back as strings. */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /**
   * Subscribe to a NOTIFY channel; resolves to an unsubscribe function. `onListen` runs each
   * time the subscription is (re-)established, e.g. after a lost connection came back.
   */
  listen(channel: string, onPayload: (payload: string) => void, onListen?: () => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
  /** PGlite only: a dump of the data directory (tests clone a migrated template from it). */
  dump?(): Promise<Blob>;
}

export interface OpenOptions {
  url?: string;
  /** PGlite data directory; ignored when `url` is set. Omit both for an in-memory PGlite. */
  dataDir?: string;
  /** A PGlite data dump to start from (tests: a migrated template). */
  loadDataDir?: Blob | File;
  /** postgres.js pool size. */
  max?: number;
  /**
   * PostgreSQL only: a query not answered within this many milliseconds is cancelled and
   * fails with code QUERY_TIMEOUT (0 or unset: no limit). While the server is unreachable
   * postgres.js may keep a query waiting for a connection indefinitely (a peer that accepts
   * and closes makes it reconnect forever), so the request path sets this to fail fast.
   */
  queryTimeoutMs?: number;
}

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  return opts.url ? openPostgres(opts.url, opts.max ?? 10, opts.queryTimeoutMs ?? 0) : openPglite(opts);
}

/** The error a timed-out query fails with (the HTTP edge renders it as 503). */
function queryTimeoutError(ms: number): Error {
  return Object.assign(new Error(`database query timed out after ${ms} ms`), { code: "QUERY_TIMEOUT" });
}

async function openPostgres(url: string, max: number, timeoutMs: number): Promise<Database> {
  const make = () => {
    const pool = postgres(url, {
      max,
      onnotice: () => {},
      // Fail fast when the database is down instead of queueing requests forever.
      connect_timeout: 5,
      idle_timeout: 60,
      // Reconnect attempts back off to at most 1 s (postgres.js' default grows to 20 s), so
      // the pool is usable again within a second of the database coming back.
      backoff: (n: number) => Math.min(0.05 * 2 ** n, 1),
      types: { bigint: postgres.BigInt },
    });
    if (timeoutMs > 0) withQueryDeadline(pool, timeoutMs, onTimeout, onAnswer);
    return pool;
  };
  /**
   * The pool watchdog. After some outage sequences (a partition right after a storm of
   * resets) pooled connections can stay "connecting" for good while the server is back. When
   * queries keep timing out, a fresh probe connection decides: if it answers, the database is
   * fine and the pool is not, so a new pool takes over. The old one is abandoned, not ended:
   * ending it rejects its stuck connection attempts where nobody listens; its idle
   * connections close on their own (idle_timeout).
   */
  let timeouts = 0;
  let probing = false;
  let lastRebuild = 0;
  function onAnswer() {
    timeouts = 0;
  }
  function onTimeout() {
    if (++timeouts < 3 || probing || Date.now() - lastRebuild < 5000) return;
    probing = true;
    const probe = postgres(url, { max: 1, connect_timeout: 2, idle_timeout: 1, onnotice: () => {} });
    const answered = probe`select 1`.then(
      () => true,
      () => false,
    );
    Promise.race([answered, Bun.sleep(2500).then(() => false)])
      .then((ok) => {
        if (!ok) return; // the database itself is down: the pool reconnects once it is back
        sql = make();
        orm = drizzlePg(sql, { schema }) as unknown as Orm;
        lastRebuild = Date.now();
        timeouts = 0;
      })
      .finally(() => {
        probing = false;
      });
  }
  let sql = make();
  let orm = drizzlePg(sql, { schema }) as unknown as Orm;
  return {
    kind: "postgres",
    get orm() {
      return orm;
    },
    async query<T>(text: string, params: unknown[] = []) {
      return (await sql.unsafe(text, params as never[], { prepare: true })) as unknown as T[];
    },
    async listen(channel, onPayload, onListen) {
      const sub = await sql.listen(channel, onPayload, onListen);
      return async () => {
        await sub.unlisten().catch(() => {});
      };
    },
    async notify(channel, payload) {
      await sql.notify(channel, payload);
    },
    async close() {
      await sql.end({ timeout: 5 });
    },
  };
}

/** What postgres.js keeps on a query object (not in its public types). */
interface PendingQuery {
  state: unknown;
  strings: string[];
  args: unknown[];
  options: { onexecute?: unknown };
  reject(e: unknown): void;
  /** Sends the server a cancel request; its promise rejects when that connection fails. */
  canceller: ((q: PendingQuery) => Promise<void>) | null;
  then(a: () => void, b: () => void): unknown;
}

/**
 * Every query of this pool (the ORM's included: they all go through `unsafe`) fails with
 * QUERY_TIMEOUT at the deadline. A query not sent yet (waiting for a connection) is also
 * turned into a harmless `select 1`: postgres.js' own cancel of such a query leaves the
 * connection it was waiting for connected but never back in the pool, so after an outage
 * the pool would stay dead (checked with a TCP proxy cutting the connection: see
 * test/reliability/db-outage.test.ts). A query already sent is cancelled on the server (best effort;
 * over a dead connection the cancel cannot arrive, and the caller has stopped waiting).
 */
function withQueryDeadline(
  sql: postgres.Sql<any>,
  timeoutMs: number,
  onTimeout: () => void,
  onAnswer: () => void,
): void {
  const unsafe = sql.unsafe.bind(sql);
  (sql as { unsafe: unknown }).unsafe = (text: string, params?: never[], o?: never) => {
    const q = unsafe(text, params, o) as unknown as PendingQuery;
    const timer = setTimeout(() => {
      if (q.state === null) {
        q.strings = ["select 1"];
        q.args = [];
        // A transaction's `begin` would reserve its connection when it runs: nobody would release it.
        q.options.onexecute = undefined;
      } else if (q.canceller) {
        // `q.cancel()` would drop the promise of the cancel request (a rejection nobody handles).
        const cancel = q.canceller;
        q.canceller = null;
        cancel(q).catch(() => {});
      }
      q.reject(queryTimeoutError(timeoutMs));
      onTimeout();
    }, timeoutMs);
    // Settled in time: never cancel later (the backend may be running someone else's query by then).
    const clear = () => clearTimeout(timer);
    q.then(() => {
      clear();
      onAnswer();
    }, clear);
    return q;
  };
}

async function openPglite(opts: OpenOptions): Promise<Database> {
  let release = () => {};
  let pg: PGlite;
  if (opts.dataDir) {
    mkdirSync(opts.dataDir, { recursive: true });
    release = lockDataDir(opts.dataDir);
    try {
      await seedFromTemplate(join(opts.dataDir, "pglite"));
      pg = await PGlite.create(join(opts.dataDir, "pglite"), { ...(await pgliteAssets()), ...pgliteMemory });
    } catch (e) {
      release();
      throw e;
    }
  } else {
    const loadDataDir = opts.loadDataDir ?? (await templateDump());
    pg = await PGlite.create({ ...(await pgliteAssets()), ...pgliteMemory, ...(loadDataDir && { loadDataDir }) });
  }
  const orm = drizzleLite(pg, { schema }) as unknown as Orm;
  // PGlite serves one query at a time; it queues the rest itself.
  return {
    kind: "pglite",
    orm,
    async query<T>(text: string, params: unknown[] = []) {
      const r = await pg.query(text, params);
      return r.rows as T[];
    },
    async listen(channel, onPayload) {
      const unsub = await pg.listen(channel, onPayload);
      return async () => {
        await unsub().catch(() => {});
      };
    },
    async notify(channel, payload) {
      await pg.query("select pg_notify($1, $2)", [channel, payload]);
    },
    async close() {
      await pg.close();
      release();
    },
    async dump() {
      return pg.dumpDataDir("none");
    },
  };
}

/**
 * PGlite has no cross-process lock: two processes on one directory would corrupt it. A lock
 * file with our pid refuses a second live process and takes over a stale one.
 */
function lockDataDir(dir: string): () => void {
  const lock = join(dir, "gateway.lock");
  if (existsSync(lock)) {
    const pid = Number(readFileSync(lock, "utf8").trim());
    if (pid && pid !== process.pid && isAlive(pid)) {
      throw new Error(`data directory ${dir} is in use by process ${pid}; stop it or set DATA_DIR elsewhere`);
    }
  }
  writeFileSync(lock, String(process.pid));
  return () => rmSync(lock, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
