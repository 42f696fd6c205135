/**
 * Issue 28 #12: keys are free, so limits per key alone do not bound an account. An account's
 * keys together get ACCOUNT_RATE_LIMIT_RPM (before: 20 keys gave 1,200 calls a minute); an
 * account has at most MAX_KEYS_PER_ACCOUNT live API keys, provisioned child keys included, and
 * as many management keys (before: 300 keys in 0.9 s), also when created concurrently (checked
 * in SQL); and wrong admin tokens from one address are answered 429 past
 * ADMIN_FAILURES_PER_IP (before: 2,000 tries answered in 133 ms). On PostgreSQL and PGlite.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ADMIN_TOKEN, dbKinds, redisAvailable, startTestGateway, type TestGateway } from "../harness";
import { fastUser } from "../support/http";

setDefaultTimeout(60_000);

const LIMITS = {
  ACCOUNT_RATE_LIMIT_RPM: "5",
  RATE_LIMIT_RPM: "60",
  MAX_KEYS_PER_ACCOUNT: "4",
  ADMIN_FAILURES_PER_IP: "5",
  TRUSTED_PROXIES: "127.0.0.1",
};

const keyLimit = {
  detail: { error: "key_limit_exceeded", message: expect.any(String), retryable: false },
  error: { message: expect.any(String), type: expect.any(String), code: "key_limit_exceeded", param: null },
};

/** A fresh client address per test (IPv6 documentation range; Redis keeps counts across runs). */
const addr = () => {
  const [a, b, c] = crypto.getRandomValues(new Uint16Array(3));
  return `2001:db8:${a!.toString(16)}:${b!.toString(16)}::${c!.toString(16)}`;
};

const variants: { name: string; kind: "pg" | "pglite"; env: Record<string, string> }[] = (await dbKinds()).map(
  (kind) => ({ name: `in-process limiter on ${kind}`, kind, env: {} }),
);
// The account's window and the admin-token failures shared by every instance.
if (await redisAvailable())
  variants.push({ name: "Redis limiter", kind: "pglite", env: { REDIS_URL: "redis://127.0.0.1:6379" } });

for (const { name, kind, env } of variants) {
  describe(`tenant limits, ${name}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind, env: { ...LIMITS, VIDEO_POLL_WORKERS: "0", ...env } });
    }, 60_000);
    afterAll(() => g?.stop());

    const liveKeys = async (userId: string) =>
      (
        await g.gw.deps.db.query<{ n: number }>(
          "select count(*)::int as n from api_keys where user_id = $1 and deleted_at is null",
          [userId],
        )
      )[0]!.n;

    test("an account's keys together get ACCOUNT_RATE_LIMIT_RPM; another account is not affected", async () => {
      const user = await fastUser(g);
      const other = await fastUser(g);
      const keys = [];
      for (let i = 0; i < 3; i++) keys.push((await g.newKey(user)).key);
      const statuses: number[] = [];
      for (let i = 0; i < 9; i++) statuses.push((await g.call("GET", "/v1/me", { token: keys[i % 3] })).status);
      // Each key made 3 calls (under its own 60), the account 9: five pass.
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 429]);
      const refused = await g.call("GET", "/v1/me", { token: keys[0] });
      expect(refused.status).toBe(429);
      expect(refused.body.detail.error).toBe("rate_limited");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(refused.headers.get("x-ratelimit-limit")).toBe("5");
      // A new key of the same account does not escape it.
      const fresh = (await g.newKey(user)).key;
      expect((await g.call("GET", "/v1/me", { token: fresh })).status).toBe(429);
      const otherKey = (await g.newKey(other)).key;
      expect((await g.call("GET", "/v1/me", { token: otherKey })).status).toBe(200);
    });

    test("live API keys are capped per account, child keys included: 403 key_limit_exceeded", async () => {
      const user = await fastUser(g);
      await g.newKey(user);
      await g.newKey(user);
      const mk = await g.call("POST", "/v1/management-keys", { token: user.jwt, body: { name: "m" } });
      expect(mk.status).toBe(201);
      const child = (body: unknown = { name: "c" }) =>
        g.call("POST", "/v1/provisioning/keys", { token: mk.body.key, body });
      expect((await child()).status).toBe(201);
      expect((await child()).status).toBe(201);
      // Four live: the dashboard's fifth and the management key's third are refused.
      const dash = await g.call("POST", "/v1/keys", { token: user.jwt, body: { name: "fifth" } });
      expect(dash.status).toBe(403);
      expect(dash.body).toEqual(keyLimit);
      const prov = await child();
      expect(prov.status).toBe(403);
      expect(prov.body).toEqual(keyLimit);
      expect(await liveKeys(user.id)).toBe(4);
      // A deleted key frees its place.
      const list = await g.call("GET", "/v1/keys", { token: user.jwt });
      expect((await g.call("DELETE", `/v1/keys/${list.body.items[0].id}`, { token: user.jwt })).status).toBe(200);
      expect((await g.call("POST", "/v1/keys", { token: user.jwt, body: {} })).status).toBe(201);
      expect(await liveKeys(user.id)).toBe(4);
    });

    test("thirty concurrent creations leave exactly the cap of live keys", async () => {
      const user = await fastUser(g);
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => g.call("POST", "/v1/keys", { token: user.jwt, body: { name: `k${i}` } })),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 201).length).toBe(4);
      expect(statuses.filter((s) => s === 403).length).toBe(26);
      expect(await liveKeys(user.id)).toBe(4);
    });

    test("management keys are capped per account too", async () => {
      const user = await fastUser(g);
      const make = () => g.call("POST", "/v1/management-keys", { token: user.jwt, body: { name: "m" } });
      for (let i = 0; i < 4; i++) expect((await make()).status).toBe(201);
      const r = await make();
      expect(r.status).toBe(403);
      expect(r.body).toEqual(keyLimit);
    });

    test("wrong admin tokens from one address get 429 with Retry-After, before the token is compared", async () => {
      const ip = addr();
      const admin = (token: string, from = ip) =>
        fetch(`${g.url}/v1/admin/users?limit=1`, {
          headers: { authorization: `Bearer ${token}`, "x-forwarded-for": from },
        });
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await admin(`${ADMIN_TOKEN}-wrong-${i}`)).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
      const refused = await admin("another-wrong-token-000000");
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(((await refused.json()) as any).detail.error).toBe("rate_limited");
      // Even the right token is not compared from that address while it is over the limit...
      expect((await admin(ADMIN_TOKEN)).status).toBe(429);
      // ...and works from another one. Wrong /metrics tokens count in the same window.
      expect((await admin(ADMIN_TOKEN, addr())).status).toBe(200);
      const scrape = await fetch(`${g.url}/metrics`, { headers: { "x-forwarded-for": ip } });
      expect(scrape.status).toBe(429);
    });
  });
}
