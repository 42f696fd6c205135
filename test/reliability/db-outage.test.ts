/**
 * Database outage: a gateway whose PostgreSQL connection goes through a TCP proxy that the
 * test cuts and restores. While the database is unreachable every request that needs it is a
 * fast 503 `service_unavailable` (never a 500, never a hang) and no money moves; once the
 * database is back the gateway serves again by itself, cache invalidation included.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { freshPostgres, postgresAvailable, type TestGateway } from "../harness";
import { openDatabase, type Database } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { SqlLedger } from "../../src/db/repos/ledger";
import { isDatabaseUnavailable } from "../../src/lib/db-errors";
import { fastUser, gatewayOn, within } from "../support/http";
import { TcpProxy } from "../support/tcp-proxy";

const pg = await postgresAvailable();
const QUERY_TIMEOUT_MS = 1500;

describe.skipIf(!pg)("database outage", () => {
  let fresh: { url: string; drop: () => Promise<void> };
  let proxy: TcpProxy;
  let viaProxy: Database;
  let direct: Database;
  let g: TestGateway; // through the proxy
  let other: TestGateway; // a second instance, straight on the database
  let sql: postgres.Sql;

  beforeAll(async () => {
    fresh = await freshPostgres();
    const u = new URL(fresh.url);
    proxy = new TcpProxy(u.hostname, Number(u.port || 5432)).start();
    u.port = String(proxy.port);
    direct = await openDatabase({ url: fresh.url, max: 3 });
    await runMigrations(direct);
    viaProxy = await openDatabase({ url: u.toString(), max: 4, queryTimeoutMs: QUERY_TIMEOUT_MS });
    g = await gatewayOn(viaProxy, "pg");
    other = await gatewayOn(direct, "pg");
    sql = postgres(fresh.url, { max: 1, onnotice: () => {} });
  }, 60_000);

  afterAll(async () => {
    await g?.stop();
    await other?.stop();
    await sql?.end();
    await Promise.race([viaProxy?.close(), Bun.sleep(2000)]);
    await direct?.close();
    proxy?.stop();
    await fresh?.drop();
  });

  // A test that fails during its cut must not leave the next one without a database.
  afterEach(() => proxy?.restore());

  const body = { model: "gpt-4o-mini", messages: [{ role: "user", content: "hello" }], max_tokens: 20 };
  const books = async () => {
    const [r] =
      await sql`select (select count(*) from holds)::int as holds, (select count(*) from ledger_entries)::int as entries,
      (select coalesce(sum(balance_micro), 0)::text from users) as balance, (select count(*) from api_keys)::int as keys, (select count(*) from usage_events)::int as events`;
    return r;
  };

  /** Each request that needs the database: [method, path, token kind, body]. */
  const probes = (jwt: string, key: string, keyId: string) =>
    [
      ["POST", "/v1/chat/completions", key, body],
      ["POST", "/v1/chat/completions", key, { ...body, stream: true }],
      ["POST", "/v1/responses", key, { model: "gpt-4o-mini", input: "hi", max_output_tokens: 20 }],
      ["POST", "/v1/video/generations", key, { model: "veo-3", prompt: "a cat", duration_seconds: 8 }],
      ["GET", `/v1/jobs/${crypto.randomUUID()}`, key, undefined],
      ["GET", "/v1/keys", jwt, undefined],
      ["POST", "/v1/keys", jwt, { name: "during outage" }],
      ["PATCH", `/v1/keys/${keyId}`, jwt, { name: "renamed" }],
      ["GET", "/v1/routing-policies", jwt, undefined],
      ["GET", "/v1/me", jwt, undefined],
    ] as const;

  // Refuse first, then blackhole: after a storm of resets a pooled connection could stay in the
  // connecting state through the later partition (Bun 1.4.5 + postgres.js 3.4.9); the pool
  // watchdog in src/db/client.ts replaces such a pool, and this order proves it does.
  for (const how of ["refuse", "blackhole"] as const) {
    test(`cut (${how}): fast 503s, nothing charged, no 500; restored: serves again by itself`, async () => {
      // Set up through the direct instance; the first call through this one may meet a
      // connection the previous cut left dead (one transient 503), so wait for a 200.
      const u = await fastUser(other, { creditKrw: 1000 });
      const k = await other.newKey(u);
      expect(
        await within(
          5000,
          async () => (await g.call("POST", "/v1/chat/completions", { token: k.key, body })).status === 200,
          100,
        ),
      ).not.toBeNull();
      await g.gw.settlements.quiesce(); // that call's settle lands behind its answer
      const before = await books();

      proxy.cut(how);
      const answers = await Promise.all(
        probes(u.jwt, k.key, k.id).map(async ([method, path, token, b]) => {
          const t = performance.now();
          const r = await g.call(method, path, { token, body: b });
          return { path, method, status: r.status, body: r.body, ms: performance.now() - t };
        }),
      );
      for (const a of answers) {
        expect({ path: a.path, method: a.method, status: a.status }).toEqual({
          path: a.path,
          method: a.method,
          status: 503,
        });
        expect(a.body.detail.error).toBe("service_unavailable");
        expect(a.body.detail.retryable).toBe(true);
        // Fast: the query deadline plus a margin, never a hang.
        expect(a.ms).toBeLessThan(QUERY_TIMEOUT_MS + 2500);
      }
      expect((await g.call("GET", "/readyz")).status).toBe(503);
      // The liveness probe does not need the database.
      expect((await g.call("GET", "/healthz")).status).toBe(200);
      // Nothing moved: no hold, no charge, no key, no event.
      expect(await books()).toEqual(before);

      proxy.restore();
      const seen: string[] = [];
      const took = await within(
        5000,
        async () => {
          const r = await g.call("POST", "/v1/chat/completions", { token: k.key, body });
          if (r.status !== 200) seen.push(`${r.status} ${JSON.stringify(r.body).slice(0, 120)}`);
          return r.status === 200;
        },
        100,
      );
      if (took === null) console.log(`[db-outage ${how}] not recovered:`, seen.slice(0, 3));
      expect(took).not.toBeNull();
      console.log(
        `[db-outage ${how}] slowest 503 ${Math.round(Math.max(...answers.map((a) => a.ms)))} ms; recovered ${Math.round(took!)} ms after restore`,
      );
      expect((await g.call("GET", "/v1/keys", { token: u.jwt })).status).toBe(200);
      expect((await g.call("GET", "/readyz")).status).toBe(200);
      // The books are whole: one more settled call, nothing open.
      const [open] = await sql`select count(*)::int as n from holds where status = 'open' and user_id = ${u.id}`;
      expect(open!.n).toBe(0);
      // The invalidation bus listens again: a key deleted on the other instance is refused here.
      expect((await g.call("GET", "/v1/me", { token: k.key })).status).toBe(200);
      expect((await other.call("DELETE", `/v1/keys/${k.id}`, { token: u.jwt })).status).toBe(200);
      expect(
        await within(3000, async () => (await g.call("GET", "/v1/me", { token: k.key })).status === 401),
      ).not.toBeNull();
    }, 60_000);
  }

  test("holds that pile up during the outage fail together, each within two query deadlines", async () => {
    const u = await fastUser(other, { creditKrw: 1000 });
    const k = await other.newKey(u);
    // This instance's database, counting the ledger's statements.
    const sent = { alone: 0, step: 0 };
    const counted: Database = {
      ...viaProxy,
      kind: viaProxy.kind,
      orm: viaProxy.orm,
      query(text, params) {
        if (text.includes("gw_ledger_step(")) sent.step++;
        else if (text.includes("gw_hold(")) sent.alone++;
        return viaProxy.query(text, params);
      },
    };
    const ledger = new SqlLedger(counted);
    const hold = () =>
      ledger.hold({
        id: crypto.randomUUID(),
        userId: u.id,
        keyId: k.id,
        amountMicro: 1_000n,
        tokens: 1,
        ttlSeconds: 900,
      });
    proxy.cut("refuse");
    // Two holds take the ledger's two slots; the other four wait and go out as one batch.
    const t = performance.now();
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        hold().then(
          (r) => ({ r, e: null as unknown, ms: performance.now() - t }),
          (e: unknown) => ({ r: null, e, ms: performance.now() - t }),
        ),
      ),
    );
    proxy.restore();
    for (const { r, e, ms } of results) {
      expect(r).toBeNull();
      expect(isDatabaseUnavailable(e)).toBe(true);
      // A slot's wait plus the batch's own deadline: the batch is not retried call by call.
      expect(ms).toBeLessThan(2 * QUERY_TIMEOUT_MS + 500);
    }
    expect(sent).toEqual({ alone: 2, step: 1 });
    const [n] = await sql`select count(*)::int as n from holds where user_id = ${u.id}`;
    expect(n!.n).toBe(0);
  }, 60_000);

  test("a settle that meets the outage lands once the database is back: the answered call is charged, once", async () => {
    const u = await fastUser(other, { creditKrw: 1000 });
    const k = await other.newKey(u);
    expect(
      await within(
        5000,
        async () => (await g.call("POST", "/v1/chat/completions", { token: k.key, body })).status === 200,
        100,
      ),
    ).not.toBeNull();
    await g.gw.settlements.quiesce();
    const [start] = await sql`select balance_micro::text as b from users where id = ${u.id}`;
    // The hold is placed at once; the provider answers after 700 ms, by when the database is gone.
    const slow = { ...body, messages: [{ role: "user", content: "slow [sim:latency=700]" }] };
    const answer = g.call("POST", "/v1/chat/completions", { token: k.key, body: slow });
    await Bun.sleep(300);
    proxy.cut("refuse");
    const r = await answer;
    expect(r.status).toBe(200);
    const id = r.headers.get("x-request-id")!;
    expect(g.gw.settlements.pending).toBe(1);
    await Bun.sleep(1500);
    proxy.restore();
    // The retries find the database again.
    expect(await within(15_000, async () => g.gw.settlements.pending === 0, 100)).not.toBeNull();
    const [h] = await sql`select status, charged_micro::text as c from holds where id = ${id}`;
    expect(h!.status).toBe("settled");
    const [after] = await sql`select balance_micro::text as b, held_micro::text as held from users where id = ${u.id}`;
    expect(after!.held).toBe("0");
    expect(BigInt(start!.b) - BigInt(after!.b)).toBe(BigInt(h!.c));
    const [n] = await sql`select count(*)::int as n from ledger_entries where request_id = ${id}`;
    expect(n!.n).toBe(1);
    // The charge is the one the answer announced.
    expect(BigInt(h!.c)).toBeGreaterThan(0n);
    expect(Math.round(Number(h!.c) / 1e6)).toBe(r.body.cost.krw);
  }, 60_000);
});
