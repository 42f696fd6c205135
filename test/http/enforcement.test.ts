/**
 * What API-key authentication enforces at every key authentication point (validity 401, IP
 * allowlist 403, trusted proxies), and which credential each endpoint group accepts. GET
 * /v1/me stands in for a key-authenticated endpoint; scopes are checked on the Authenticator.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { fastUser } from "../support/http";

setDefaultTimeout(30_000);

const me = (g: TestGateway, token?: string, headers?: Record<string, string>) =>
  g.call("GET", "/v1/me", { token, headers });

const kinds = await dbKinds();
for (const kind of kinds) {
  describe(`API key enforcement on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("a missing, malformed or unknown key is 401", async () => {
      const u = await fastUser(g);
      const k = await g.newKey(u);
      for (const [name, r] of [
        ["none", await me(g)],
        ["unknown", await me(g, "sk-gw-" + "x".repeat(40))],
        ["truncated", await me(g, k.key.slice(0, -1))],
        ["prefix only", await me(g, k.key_prefix)],
        ["Basic scheme", await g.call("GET", "/v1/me", { headers: { authorization: `Basic ${k.key}` } })],
        ["empty bearer", await g.call("GET", "/v1/me", { headers: { authorization: "Bearer " } })],
      ] as const) {
        expect([name, r.status]).toEqual([name, 401]);
        expect(r.body.detail.error).toBe("unauthorized");
      }
      expect((await me(g, k.key)).status).toBe(200);
      // The scheme is case-insensitive.
      expect((await g.call("GET", "/v1/me", { headers: { authorization: `bearer ${k.key}` } })).status).toBe(200);
    });

    test("a deleted key is 401 immediately after DELETE (even when cached)", async () => {
      const u = await fastUser(g);
      const k = await g.newKey(u);
      expect((await me(g, k.key)).status).toBe(200);
      expect((await me(g, k.key)).status).toBe(200);
      expect((await g.call("DELETE", `/v1/keys/${k.id}`, { token: u.jwt })).status).toBe(200);
      const r = await me(g, k.key);
      expect(r.status).toBe(401);
      expect(r.body.detail.error).toBe("unauthorized");
    });

    test("an inactive key is 401 until reactivated", async () => {
      const u = await fastUser(g);
      const k = await g.newKey(u);
      expect((await me(g, k.key)).status).toBe(200);
      expect(
        (await g.call("PATCH", `/v1/keys/${k.id}`, { token: u.jwt, body: { is_active: false } })).body.is_active,
      ).toBe(false);
      expect((await me(g, k.key)).status).toBe(401);
      await g.call("PATCH", `/v1/keys/${k.id}`, { token: u.jwt, body: { is_active: true } });
      expect((await me(g, k.key)).status).toBe(200);
      const inactiveAtBirth = await g.newKey(u, { is_active: false });
      expect((await me(g, inactiveAtBirth.key)).status).toBe(401);
    });

    test("an expired key is 401; a future expiry works; expiry can be moved", async () => {
      const u = await fastUser(g);
      const past = await g.newKey(u, { expires_at: new Date(Date.now() - 60_000).toISOString() });
      expect((await me(g, past.key)).status).toBe(401);
      const future = await g.newKey(u, { expires_at: new Date(Date.now() + 3_600_000).toISOString() });
      expect((await me(g, future.key)).status).toBe(200);
      await g.call("PATCH", `/v1/keys/${future.id}`, {
        token: u.jwt,
        body: { expires_at: new Date(Date.now() - 1000).toISOString() },
      });
      expect((await me(g, future.key)).status).toBe(401);
      await g.call("PATCH", `/v1/keys/${future.id}`, { token: u.jwt, body: { expires_at: null } });
      expect((await me(g, future.key)).status).toBe(200);
      if (kind !== kinds[0]) return; // the rest is clock logic, checked once
      // A key that expires while cached stops working at its expiry.
      const expiry = Date.now() + 1500;
      const soon = await g.newKey(u, { expires_at: new Date(expiry).toISOString() });
      const first = await me(g, soon.key);
      if (Date.now() < expiry - 100) expect(first.status).toBe(200);
      await Bun.sleep(Math.max(0, expiry - Date.now()) + 100);
      expect((await me(g, soon.key)).status).toBe(401);
    });

    test("RATE_LIMIT_RPM=0 never limits and sends no counters", async () => {
      expect(g.gw.deps.config.RATE_LIMIT_RPM).toBe(0);
      const u = await fastUser(g);
      const k = await g.newKey(u);
      for (let i = 0; i < 8; i++) {
        const r = await me(g, k.key);
        expect(r.status).toBe(200);
        expect(r.headers.get("x-ratelimit-limit")).toBeNull();
      }
    });

    test("the keys of a deleted account are 401 at once", async () => {
      const u = await fastUser(g);
      const k = await g.newKey(u);
      expect((await me(g, k.key)).status).toBe(200);
      await g.admin("PATCH", `/v1/admin/users/${u.id}`, { deleted: true });
      expect((await me(g, k.key)).status).toBe(401);
    });

    test("ip_allowlist: the loopback client passes 127.0.0.1 and ::1-free lists, 10.0.0.0/8 is 403", async () => {
      const u = await fastUser(g);
      const allowed = await g.newKey(u, { ip_allowlist: ["127.0.0.1"] });
      const cidr = await g.newKey(u, { ip_allowlist: ["10.0.0.0/8", "127.0.0.0/8"] });
      const mapped = await g.newKey(u, { ip_allowlist: ["::ffff:127.0.0.0/104"] });
      const denied = await g.newKey(u, { ip_allowlist: ["10.0.0.0/8"] });
      const v6only = await g.newKey(u, { ip_allowlist: ["::1", "2001:db8::/32"] });
      expect((await me(g, allowed.key)).status).toBe(200);
      expect((await me(g, cidr.key)).status).toBe(200);
      expect((await me(g, mapped.key)).status).toBe(200);
      for (const k of [denied, v6only]) {
        const r = await me(g, k.key);
        expect(r.status).toBe(403);
        expect(r.body.detail.error).toBe("ip_not_allowed");
      }
      // Without a trusted proxy, X-Forwarded-For changes nothing.
      expect((await me(g, denied.key, { "x-forwarded-for": "10.1.2.3" })).status).toBe(403);
      expect((await me(g, allowed.key, { "x-forwarded-for": "10.1.2.3" })).status).toBe(200);
      expect((await me(g, allowed.key, { "x-forwarded-for": "1:2:3:4:5::6:7:8:9" })).status).toBe(200);
      // Changing the allowlist applies at once.
      await g.call("PATCH", `/v1/keys/${denied.id}`, { token: u.jwt, body: { ip_allowlist: null } });
      expect((await me(g, denied.key)).status).toBe(200);
    });

    test("scopes are checked at authentication (Authenticator, needs model/usage:read/any)", async () => {
      const u = await fastUser(g);
      const legacy = await g.newKey(u);
      const chat = await g.newKey(u, { scopes: ["chat"] });
      const usage = await g.newKey(u, { scopes: ["usage:read"] });
      const none = await g.newKey(u, { scopes: [] });
      const auth = g.gw.deps.auth;
      const req = (key: string) => new Request("http://gw/x", { headers: { authorization: `Bearer ${key}` } });
      const status = async (key: string, need: "model" | "chat" | "usage:read" | "any") => {
        try {
          await auth.apiKey(req(key), null, need);
          return 200;
        } catch (e: any) {
          return [e.status, e.errorCode];
        }
      };
      expect(await status(legacy.key, "model")).toBe(200);
      expect(await status(chat.key, "model")).toBe(200);
      expect(await status(usage.key, "model")).toEqual([403, "scope_required"]);
      expect(await status(none.key, "model")).toEqual([403, "scope_required"]);
      expect(await status(usage.key, "usage:read")).toBe(200);
      expect(await status(chat.key, "usage:read")).toEqual([403, "scope_required"]);
      expect(await status(legacy.key, "usage:read")).toEqual([403, "scope_required"]);
      for (const k of [legacy, chat, usage, none]) expect(await status(k.key, "any")).toBe(200);
      // Via HTTP, /v1/me accepts any scope.
      expect((await me(g, usage.key)).status).toBe(200);
      // Scope changes apply at once.
      await g.call("PATCH", `/v1/keys/${usage.id}`, { token: u.jwt, body: { scopes: ["chat", "usage:read"] } });
      expect(await status(usage.key, "model")).toBe(200);
    });

    test("auth matrix: each endpoint group refuses the other credential kinds with 401", async () => {
      const u = await fastUser(g);
      const k = await g.newKey(u);
      const m = await g.call("POST", "/v1/management-keys", { token: u.jwt, body: { name: "m" } });
      expect(m.status).toBe(201);
      const mk = m.body.key;
      const jwtEndpoints: [string, string, unknown][] = [
        ["GET", "/v1/keys", undefined],
        ["POST", "/v1/keys", {}],
        ["GET", "/v1/keys/usage", undefined],
        ["PATCH", `/v1/keys/${k.id}`, { name: "x" }],
        ["DELETE", `/v1/keys/${k.id}`, undefined],
        ["GET", "/v1/management-keys", undefined],
        ["POST", "/v1/management-keys", { name: "x" }],
        ["DELETE", `/v1/management-keys/${m.body.id}`, undefined],
      ];
      for (const [method, path, body] of jwtEndpoints) {
        for (const [cred, token] of [
          ["api key", k.key],
          ["management key", mk],
          ["none", undefined],
          ["admin token", "test-admin-token-0123456789abcdef"],
        ] as const) {
          const r = await g.call(method, path, { token, body });
          expect([method, path, cred, r.status]).toEqual([method, path, cred, 401]);
        }
        // Authentication comes before body validation.
        if (body)
          expect((await g.call(method, path, { token: k.key, body: { name: 42, scopes: "x" } })).status).toBe(401);
      }
      for (const [method, body] of [
        ["GET", undefined],
        ["POST", {}],
      ] as const) {
        for (const token of [u.jwt, k.key, undefined]) {
          expect((await g.call(method, "/v1/provisioning/keys", { token, body })).status).toBe(401);
        }
      }
      expect((await g.call("DELETE", `/v1/provisioning/keys/${k.id}`, { token: u.jwt })).status).toBe(401);
      // Also before body validation there.
      expect(
        (await g.call("POST", "/v1/provisioning/keys", { token: u.jwt, body: { allowed_models: ["x"] } })).status,
      ).toBe(401);
      // A management key is not a dashboard login nor an API key.
      expect((await me(g, mk)).status).toBe(401);
      // Nothing was changed by the refused calls.
      expect((await g.call("GET", "/v1/keys", { token: u.jwt })).body.items.map((x: any) => [x.id, x.name])).toEqual([
        [k.id, "Default"],
      ]);
      expect((await g.call("GET", "/v1/management-keys", { token: u.jwt })).body.total).toBe(1);
      expect((await me(g, k.key)).status).toBe(200);
    });
  });
}

// Address logic, independent of the database: one gateway.
describe("trusted proxies", () => {
  let proxied: TestGateway;
  beforeAll(async () => {
    proxied = await startTestGateway({ db: "pglite", env: { TRUSTED_PROXIES: "127.0.0.1" } });
  }, 60_000);
  afterAll(async () => {
    await proxied?.stop();
  });

  test("TRUSTED_PROXIES: from a trusted peer, X-Forwarded-For decides the client address", async () => {
    const u = await fastUser(proxied);
    const office = await proxied.newKey(u, { ip_allowlist: ["203.0.113.0/24"] });
    const local = await proxied.newKey(u, { ip_allowlist: ["127.0.0.1"] });
    const v6 = await proxied.newKey(u, { ip_allowlist: ["2001:db8::/32"] });
    expect((await me(proxied, office.key, { "x-forwarded-for": "203.0.113.9" })).status).toBe(200);
    expect((await me(proxied, office.key)).status).toBe(403);
    expect((await me(proxied, office.key, { "x-forwarded-for": "198.51.100.1" })).status).toBe(403);
    expect((await me(proxied, local.key, { "x-forwarded-for": "203.0.113.9" })).status).toBe(403);
    expect((await me(proxied, local.key)).status).toBe(200);
    expect((await me(proxied, v6.key, { "x-forwarded-for": "2001:db8::42" })).status).toBe(200);
    // The rightmost untrusted hop counts: a client cannot prepend its own claim.
    expect((await me(proxied, office.key, { "x-forwarded-for": "203.0.113.9, 198.51.100.1" })).status).toBe(403);
    expect((await me(proxied, office.key, { "x-forwarded-for": "198.51.100.1, 203.0.113.9" })).status).toBe(200);
    expect((await me(proxied, office.key, { "x-forwarded-for": "198.51.100.1, 203.0.113.9, 127.0.0.1" })).status).toBe(
      200,
    );
    // A malformed hop is a refusal, not an error.
    for (const xff of ["garbage", "1:2:3:4:5::6:7:8:9", "203.0.113.9:443"]) {
      expect((await me(proxied, office.key, { "x-forwarded-for": xff })).status).toBe(403);
    }
  });
});
