/**
 * The policy cache across instances: two gateways on one PostgreSQL database, each with its
 * own connection pool and cache. A change made through one is seen by calls on the other
 * well inside a second (the invalidation bus), not after the cache's TTL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { openDatabase, type Database } from "../../src/db/client";
import { buildGateway } from "../../src/gateway";
import { ADMIN_TOKEN, freshPostgres, postgresAvailable, TestGateway, UNLIMITED_ENV } from "../harness";
import { createPolicy, quickUser, rawChat } from "./helpers";

async function instanceOn(db: Database): Promise<TestGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), "gw-test-"));
  const cfg = loadConfig({
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    JWT_SECRET: "test-jwt-secret-0123456789abcdef0123456789",
    RATE_LIMIT_RPM: "0",
    DEMO_MODE: "false",
    SIMULATOR: "on",
    LOG_LEVEL: "silent",
    RETRY_BASE_MS: "5",
    ...UNLIMITED_ENV,
  });
  const gw = await buildGateway(cfg, { db });
  gw.app.listen({ port: 0, hostname: "127.0.0.1" });
  return new TestGateway(gw, `http://127.0.0.1:${gw.app.server!.port}`, "pg", async () =>
    rmSync(dataDir, { recursive: true, force: true }),
  );
}

/** Polls until `probe` holds; the elapsed milliseconds, or null after `ms`. */
async function within(ms: number, probe: () => Promise<boolean>): Promise<number | null> {
  const start = performance.now();
  for (;;) {
    if (await probe()) return performance.now() - start;
    if (performance.now() - start > ms) return null;
    await Bun.sleep(20);
  }
}

describe.skipIf(!(await postgresAvailable()))("policy cache invalidation across instances (PostgreSQL)", () => {
  let a: TestGateway;
  let b: TestGateway;
  let dbs: Database[] = [];
  let drop = async () => {};
  beforeAll(async () => {
    const fresh = await freshPostgres();
    drop = fresh.drop;
    dbs = [await openDatabase({ url: fresh.url, max: 3 }), await openDatabase({ url: fresh.url, max: 3 })];
    a = await instanceOn(dbs[0]!);
    b = await instanceOn(dbs[1]!);
  }, 90_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    for (const db of dbs) await db.close();
    await drop();
  });

  test("deactivating, editing and deleting through one instance reaches the other's cache at once", async () => {
    const user = await quickUser(a, 100);
    const key = await a.newKey(user);
    const p = await createPolicy(a, user, { policy_type: "fallback", entries: [{ model: "gpt-4o-mini" }] });
    // Warm instance B's cache.
    expect((await rawChat(b, key, `orch/${p.slug}`, "hi")).body.model).toBe("gpt-4o-mini");

    await a.call("PATCH", `/v1/routing-policies/${p.id}`, { token: user.jwt, body: { is_active: false } });
    const off = await within(
      1000,
      async () => (await rawChat(b, key, `orch/${p.slug}`, "hi")).body?.detail?.error === "policy_inactive",
    );
    expect(off).not.toBeNull();

    await a.call("PATCH", `/v1/routing-policies/${p.id}`, {
      token: user.jwt,
      body: { is_active: true, entries: [{ model: "gemini-2.5-flash" }] },
    });
    expect(
      await within(
        1000,
        async () => (await rawChat(b, key, `orch/${p.slug}`, "hi")).body?.model === "gemini-2.5-flash",
      ),
    ).not.toBeNull();

    await a.call("DELETE", `/v1/routing-policies/${p.id}`, { token: user.jwt });
    expect(
      await within(
        1000,
        async () => (await rawChat(b, key, `orch/${p.slug}`, "hi")).body?.detail?.error === "policy_not_found",
      ),
    ).not.toBeNull();

    // A policy created on A after B cached "not found" for its slug is callable on B at once.
    const again = await createPolicy(a, user, {
      slug: p.slug,
      policy_type: "fallback",
      entries: [{ model: "claude-haiku-4-5" }],
    });
    expect(
      await within(
        1000,
        async () => (await rawChat(b, key, `orch/${again.slug}`, "hi")).body?.model === "claude-haiku-4-5",
      ),
    ).not.toBeNull();
  });
});
