/**
 * Test harness: a real gateway on a real database (PostgreSQL or PGlite), listening on a
 * loopback port, and helpers that make each test its own tenant (no seeded ids).
 */
import { afterAll, beforeAll } from "bun:test";
import postgres from "postgres";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { openDatabase, type Database } from "../src/db/client";
import { runMigrations } from "../src/db/migrate";
import { buildGateway, type Gateway } from "../src/gateway";

export type DbKind = "pglite" | "pg";
export const ADMIN_TOKEN = "test-admin-token-0123456789abcdef";
/** BYOK_ENCRYPTION_KEY of the test gateways (32 bytes, hex). */
export const TEST_BYOK_KEY = "0123456789abcdef".repeat(4);

/**
 * Authentication throttles (wrong admin tokens included), the per-account request rate, the
 * cap on keys per account and per-key / per-account concurrency limits off: the suites sign
 * up many accounts from 127.0.0.1, send invalid keys on purpose, make many keys and run
 * bursts on one key. The suites of those limits (auth-throttle, concurrency, fairness,
 * tenant-limits) turn them on. Circuit
 * breaking is off too: the suites send failure directives on purpose, and an opened circuit
 * would carry one test's failures into the next one's attempt counts (test/health turns it on).
 */
export const UNLIMITED_ENV: Record<string, string> = {
  SIGNUP_RATE_PER_IP: "0",
  LOGIN_RATE_PER_IP: "0",
  LOGIN_FAILURES_PER_EMAIL: "0",
  INVALID_KEY_RATE_PER_IP: "0",
  ADMIN_FAILURES_PER_IP: "0",
  ACCOUNT_RATE_LIMIT_RPM: "0",
  MAX_KEYS_PER_ACCOUNT: "0",
  CONCURRENCY_PER_ACCOUNT: "0",
  CONCURRENCY_PER_KEY: "0",
  CIRCUIT_BREAKER: "off",
};
const SERVER_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

let pgReachable: Promise<boolean> | null = null;
/** PostgreSQL runs when reachable; in CI it must be (a silent skip would hide a regression). */
export function postgresAvailable(): Promise<boolean> {
  pgReachable ??= (async () => {
    const sql = postgres(SERVER_URL, { max: 1, connect_timeout: 2, onnotice: () => {} });
    try {
      await sql`select 1`;
      return true;
    } catch {
      if (process.env.CI) throw new Error(`CI needs PostgreSQL at ${SERVER_URL}`);
      return false;
    } finally {
      await sql.end({ timeout: 1 });
    }
  })();
  return pgReachable;
}

/** Database kinds to run a suite on: PGlite always, PostgreSQL when reachable. */
export async function dbKinds(): Promise<DbKind[]> {
  return (await postgresAvailable()) ? ["pg", "pglite"] : ["pglite"];
}

let template: Promise<Blob> | null = null;
/** A migrated PGlite data dump, made once per process; each test gateway loads a copy. */
function pgliteTemplate(): Promise<Blob> {
  template ??= (async () => {
    const db = await openDatabase({});
    await runMigrations(db);
    const dump = await db.dump!();
    await db.close();
    return dump;
  })();
  return template;
}

/** A fresh PostgreSQL database on the test server; returns its URL and a dropper. */
export async function freshPostgres(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `gw_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = SERVER_URL.replace(/\/[^/]*$/, `/${name}`);
  return {
    url,
    drop: async () => {
      const a = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await a.end();
    },
  };
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface TestUser {
  id: string;
  email: string;
  password: string;
  jwt: string;
}

export class TestGateway {
  constructor(
    readonly gw: Gateway,
    readonly url: string,
    readonly kind: DbKind,
    private cleanup: () => Promise<void>,
  ) {}

  async call<T = any>(
    method: string,
    path: string,
    opts: { token?: string; body?: unknown; headers?: Record<string, string>; raw?: string } = {},
  ): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined = opts.raw;
    if (opts.body !== undefined) {
      headers["content-type"] ??= "application/json";
      body = JSON.stringify(opts.body);
    }
    const res = await fetch(this.url + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {}
    return { status: res.status, body: parsed as T, headers: res.headers };
  }

  /** GET /metrics as the operator's scraper (the test gateways' admin token; no METRICS_TOKEN). */
  async metrics(): Promise<string> {
    const r = await fetch(this.url + "/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
    return r.text();
  }

  admin<T = any>(method: string, path: string, body?: unknown): Promise<Reply<T>> {
    return this.call<T>(method, path, { token: ADMIN_TOKEN, body });
  }

  /** A new account (own tenant), logged in, optionally topped up (credited KRW, fee excluded). */
  async newUser(opts: { creditKrw?: number; industry?: string } = {}): Promise<TestUser> {
    const email = `u${crypto.randomUUID().slice(0, 12)}@test.example`;
    const password = "correct horse battery";
    const s = await this.call("POST", "/v1/auth/signup", {
      body: { email, password, ...(opts.industry && { industry: opts.industry }) },
    });
    if (s.status !== 201) throw new Error(`signup failed: ${s.status} ${JSON.stringify(s.body)}`);
    const l = await this.call("POST", "/v1/auth/login", { body: { email, password } });
    if (opts.creditKrw) await this.credit(s.body.user_id, opts.creditKrw);
    return { id: s.body.user_id, email, password, jwt: l.body.access_token };
  }

  /** Credits exactly `krw` (the top-up pays the 3% fee on top). */
  async credit(userId: string, krw: number): Promise<void> {
    // paid − ceil(paid × 3%) = krw; search the smallest paid amount that credits ≥ krw.
    let paid = Math.ceil(krw / 0.97);
    while (paid - Math.ceil((paid * 3) / 100) < krw) paid++;
    while (paid - 1 - Math.ceil(((paid - 1) * 3) / 100) >= krw) paid--;
    const r = await this.admin("POST", `/v1/admin/users/${userId}/topups`, { amount_krw: paid });
    if (r.status !== 201) throw new Error(`topup failed: ${r.status} ${JSON.stringify(r.body)}`);
  }

  /** Creates an API key for the user; returns the record with its secret. */
  async newKey(user: TestUser, body: Record<string, unknown> = {}): Promise<any> {
    const r = await this.call("POST", "/v1/keys", { token: user.jwt, body });
    if (r.status !== 201) throw new Error(`key creation failed: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  async stop(): Promise<void> {
    await this.gw.app.stop(true);
    await this.gw.stop();
    await this.cleanup();
  }
}

export async function startTestGateway(opts: { db?: DbKind; env?: Record<string, string> } = {}): Promise<TestGateway> {
  const kind = opts.db ?? "pglite";
  const dataDir = mkdtempSync(join(tmpdir(), "gw-test-"));
  let db: Database;
  let dropPg = async () => {};
  if (kind === "pg") {
    const fresh = await freshPostgres();
    dropPg = fresh.drop;
    db = await openDatabase({ url: fresh.url, max: 5 });
  } else {
    db = await openDatabase({ loadDataDir: await pgliteTemplate() });
  }
  const cfg = loadConfig({
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    JWT_SECRET: "test-jwt-secret-0123456789abcdef0123456789",
    BYOK_ENCRYPTION_KEY: TEST_BYOK_KEY,
    RATE_LIMIT_RPM: "0",
    DEMO_MODE: "false",
    // The suites talk to the built-in simulator outside demo mode: the explicit opt-in.
    SIMULATOR: "on",
    LOG_LEVEL: "silent",
    RETRY_BASE_MS: "5",
    // A fixed catalog day, before the shipped catalog's deprecations: a provider's deprecation or
    // retirement day passing never changes what the suites see. Lifecycle tests pin their own.
    CATALOG_TODAY: "2026-01-01",
    ...UNLIMITED_ENV,
    ...opts.env,
  });
  const gw = await buildGateway(cfg, { db });
  gw.app.listen({ port: 0, hostname: "127.0.0.1" });
  const url = `http://127.0.0.1:${gw.app.server!.port}`;
  return new TestGateway(gw, url, kind, async () => {
    await db.close();
    await dropPg();
    rmSync(dataDir, { recursive: true, force: true });
  });
}

let redisReachable: Promise<boolean> | null = null;
/**
 * Redis runs the shared-limiter tests when reachable at 127.0.0.1:6379; a newcomer's machine
 * may have none, CI must (a silent skip there would hide a regression).
 */
export function redisAvailable(): Promise<boolean> {
  redisReachable ??= (async () => {
    try {
      const sock = await Bun.connect({ hostname: "127.0.0.1", port: 6379, socket: { data() {} } });
      sock.end();
      return true;
    } catch {
      if (process.env.CI) throw new Error("CI needs Redis at 127.0.0.1:6379");
      return false;
    }
  })();
  return redisReachable;
}

/**
 * A gateway for the enclosing describe block: started before its tests, stopped after them.
 * Read it inside a test with the returned getter.
 */
export function suiteGateway(opts: Parameters<typeof startTestGateway>[0] = {}): () => TestGateway {
  let g: TestGateway | undefined;
  beforeAll(async () => {
    g = await startTestGateway(opts);
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });
  return () => {
    if (!g) throw new Error("the suite's gateway is not started");
    return g;
  };
}
