/**
 * Helpers of the tests that drive the HTTP API (http, security, console, reliability and
 * others): forged JWTs, a pair of gateways on one PostgreSQL
 * database (two instances, as in production behind a load balancer).
 */
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { openDatabase, type Database } from "../../src/db/client";
import { buildGateway } from "../../src/gateway";
import { signJwt } from "../../src/lib/jwt";
import { ADMIN_TOKEN, freshPostgres, TEST_BYOK_KEY, TestGateway, UNLIMITED_ENV, type TestUser } from "../harness";

export const TEST_JWT_SECRET = "test-jwt-secret-0123456789abcdef0123456789";

const b64 = (v: unknown) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64url");

/** An HS256 token over any header and claims (to forge expired or foreign-algorithm tokens). */
export function forgeJwt(
  header: Record<string, unknown>,
  claims: Record<string, unknown>,
  secret = TEST_JWT_SECRET,
): string {
  const h = b64(header);
  const b = b64(claims);
  const sig = createHmac("sha256", secret).update(`${h}.${b}`).digest("base64url");
  return `${h}.${b}.${sig}`;
}

export function decodeJwtPart(part: string): any {
  return JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
}

const PASSWORD = "correct horse battery";
let passwordHash: Promise<string> | null = null;

/**
 * A new account (own tenant) without the two argon2 rounds of signup + login, which cost a
 * quarter second each: the row is inserted through the repository with a precomputed hash
 * of the usual password, and the access token is signed exactly as login signs it. Signup
 * and login themselves are covered in accounts.test.ts.
 */
export async function fastUser(
  g: TestGateway,
  opts: { creditKrw?: number; industry?: string; regulated?: boolean } = {},
): Promise<TestUser> {
  passwordHash ??= Bun.password.hash(PASSWORD, { algorithm: "argon2id" });
  const email = `f${crypto.randomUUID().slice(0, 12)}@test.example`;
  const industry = opts.industry ?? "general";
  const regulated = opts.regulated ?? (industry !== "general" && industry !== "education");
  const row = await g.gw.deps.users.create({ email, passwordHash: await passwordHash, industry, regulated });
  if (!row) throw new Error("fastUser: insert failed");
  if (opts.creditKrw) await g.credit(row.id, opts.creditKrw);
  const jwt = signJwt({ sub: row.id, typ: "access" }, g.gw.deps.jwtSecret, g.gw.deps.config.JWT_TTL_SECONDS);
  return { id: row.id, email, password: PASSWORD, jwt };
}

/** A gateway on an already-open database (the database stays open when it stops). */
export async function gatewayOn(
  db: Database,
  kind: "pg" | "pglite",
  env: Record<string, string> = {},
): Promise<TestGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), "gw-test-"));
  const cfg = loadConfig({
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    JWT_SECRET: TEST_JWT_SECRET,
    BYOK_ENCRYPTION_KEY: TEST_BYOK_KEY,
    RATE_LIMIT_RPM: "0",
    DEMO_MODE: "false",
    SIMULATOR: "on",
    LOG_LEVEL: "silent",
    RETRY_BASE_MS: "5",
    ...UNLIMITED_ENV,
    ...env,
  });
  const gw = await buildGateway(cfg, { db });
  gw.app.listen({ port: 0, hostname: "127.0.0.1" });
  return new TestGateway(gw, `http://127.0.0.1:${gw.app.server!.port}`, kind, async () => {
    rmSync(dataDir, { recursive: true, force: true });
  });
}

/**
 * Two gateway instances on one fresh PostgreSQL database, each with its own connection pool
 * (so an invalidation can only travel through the database, as between two processes).
 */
export async function twoInstancesOnPostgres(
  env: Record<string, string> = {},
): Promise<{ a: TestGateway; b: TestGateway; stop: () => Promise<void> }> {
  const fresh = await freshPostgres();
  const dbA = await openDatabase({ url: fresh.url, max: 3 });
  const a = await gatewayOn(dbA, "pg", env);
  const dbB = await openDatabase({ url: fresh.url, max: 3 });
  const b = await gatewayOn(dbB, "pg", env);
  return {
    a,
    b,
    stop: async () => {
      await a.stop();
      await b.stop();
      await dbA.close();
      await dbB.close();
      await fresh.drop();
    },
  };
}

/** Polls `probe` until it returns true or `ms` pass; returns the elapsed milliseconds or null. */
export async function within(ms: number, probe: () => Promise<boolean>, every = 25): Promise<number | null> {
  const start = performance.now();
  for (;;) {
    if (await probe()) return performance.now() - start;
    if (performance.now() - start > ms) return null;
    await Bun.sleep(every);
  }
}
