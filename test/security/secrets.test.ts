/**
 * Secrets: API keys and management keys are stored only as hashes; the full secret never
 * appears in a log line, an error or a list; dashboard tokens of deleted accounts and
 * algorithm-confused tokens are refused everywhere; the admin token is compared in constant
 * time. (Expiry, tampering, alg:none and foreign secrets: test/http/accounts.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from "../harness";
import { fastUser, forgeJwt } from "../support/http";
import { log } from "../../src/lib/log";
import { captureLog } from "../support/capture-log";

let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway({ db: "pglite", env: { VIDEO_POLL_WORKERS: "0", STATS_ROLLUP_INTERVAL_MS: "100" } });
}, 60_000);
afterAll(async () => {
  await g?.stop();
});

describe("secrets", () => {
  test("never in logs, errors or lists; stored only as hashes", async () => {
    const u = await fastUser(g, { creditKrw: 1000 });
    const secrets: string[] = [];
    const bodies: string[] = [];
    const logs = await captureLog(async () => {
      const k = await g.newKey(u, { name: "main" });
      const m = (await g.call("POST", "/v1/management-keys", { token: u.jwt, body: { name: "mgmt" } })).body;
      const c = (await g.call("POST", "/v1/provisioning/keys", { token: m.key, body: { name: "child" } })).body;
      const d = (await g.admin("POST", `/v1/admin/users/${u.id}/delegated-keys`, { name: "delegated" })).body;
      secrets.push(k.key, m.key, c.key, d.key);
      expect(secrets.every((x) => typeof x === "string" && x.length >= 24)).toBe(true);
      const chat = (token: string, content: string, extra: Record<string, unknown> = {}) =>
        g.call("POST", "/v1/chat/completions", {
          token,
          body: { model: "gpt-4o-mini", messages: [{ role: "user", content }], max_tokens: 10, ...extra },
        });
      // Successes, upstream failures, validation errors and wrong credentials of every kind.
      for (const r of [
        await chat(k.key, "hi"),
        await chat(c.key, "hi [sim:fail=500]"),
        await chat(k.key, "hi", { temperature: 9 }),
        await chat(k.key, "hi", { model: "no-such-model" }),
        await chat(k.key.slice(0, -1) + (k.key.endsWith("A") ? "B" : "A"), "near miss"),
        await chat(m.key, "a management key is no API key"),
        await g.call("GET", "/v1/keys", { token: k.key }),
        await g.call("GET", "/v1/provisioning/keys", { token: k.key }),
        await g.call("GET", "/v1/provisioning/keys", { token: m.key.slice(0, -2) }),
        await g.call("POST", "/v1/video/generations", {
          token: k.key,
          body: { prompt: "x", images: [`https://user:${k.key}@example.com/a.png`] },
        }),
        await g.call("GET", "/v1/keys", { token: u.jwt }),
        await g.call("GET", "/v1/keys/usage", { token: u.jwt }),
        await g.call("GET", "/v1/management-keys", { token: u.jwt }),
        await g.call("GET", "/v1/provisioning/keys", { token: m.key }),
        await g.call("PATCH", `/v1/keys/${k.id}`, { token: u.jwt, body: { name: "renamed" } }),
      ]) {
        bodies.push(JSON.stringify(r.body) + JSON.stringify([...r.headers]));
      }
      await Bun.sleep(400); // background jobs get to log too
      log.debug("capture check");
    });
    expect(logs).toContain("capture check"); // debug logging was really on and captured
    for (const s of secrets) {
      // The creation answer carries it once; nothing after that does.
      for (const b of bodies) expect(b.includes(s)).toBe(false);
      expect(logs.includes(s)).toBe(false);
    }
    expect(logs.includes(u.jwt)).toBe(false);

    // Stored only as hashes: no column of any table holds a secret.
    const tables = await g.gw.deps.db.query<{ t: string }>(
      "select table_name as t from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
    );
    expect(tables.length).toBeGreaterThan(5);
    for (const { t } of tables) {
      const rows = await g.gw.deps.db.query<{ r: string }>(`select t::text as r from "${t}" t`);
      for (const s of secrets)
        expect({ table: t, leaked: rows.some((x) => x.r.includes(s)) }).toEqual({ table: t, leaked: false });
    }
    // The prefix shown in lists is a strict, short prefix of the secret.
    const list = (await g.call("GET", "/v1/keys", { token: u.jwt })).body;
    const rec = JSON.stringify(list);
    const prefixes = [...rec.matchAll(/"key_prefix":"([^"]+)"/g)].map((m) => m[1]!);
    expect(prefixes.length).toBeGreaterThan(1);
    for (const p of prefixes) {
      expect(secrets.some((x) => x.startsWith(p))).toBe(true);
      expect(p.length).toBeLessThan(16);
    }
  });

  test("dashboard tokens: a deleted account's token is refused on every JWT endpoint; alg confusion too", async () => {
    const u = await fastUser(g);
    const pol = {
      slug: `s-${crypto.randomUUID().slice(0, 8)}`,
      display_name: "x",
      policy_type: "fallback",
      entries: [{ model: "gpt-4o-mini" }],
    };
    const endpoints: [string, string, unknown][] = [
      ["GET", "/v1/me", undefined],
      ["GET", "/v1/keys", undefined],
      ["POST", "/v1/keys", {}],
      ["GET", "/v1/management-keys", undefined],
      ["POST", "/v1/routing-policies", pol],
      ["POST", `/v1/responses/${crypto.randomUUID()}/feedback`, { rating: "up" }],
    ];
    expect((await g.call("GET", "/v1/keys", { token: u.jwt })).status).toBe(200);
    // RS256 in the header over an HMAC signature (the classic confusion), and HS384.
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: u.id, typ: "access", iat: now, exp: now + 600 };
    for (const alg of ["RS256", "HS384", "ES256", "none"]) {
      expect((await g.call("GET", "/v1/keys", { token: forgeJwt({ alg, typ: "JWT" }, claims) })).status).toBe(401);
    }
    expect((await g.admin("PATCH", `/v1/admin/users/${u.id}`, { deleted: true })).status).toBe(200);
    for (const [method, path, body] of endpoints)
      expect({ path, status: (await g.call(method, path, { token: u.jwt, body })).status }).toEqual({
        path,
        status: 401,
      });
  });

  test("admin token: compared as fixed-length digests in constant time; near misses are 401", async () => {
    const near = [
      ADMIN_TOKEN.slice(0, -1),
      ADMIN_TOKEN + "x",
      ADMIN_TOKEN.slice(0, -1) + "X",
      "",
      "x",
      ADMIN_TOKEN.toUpperCase(),
      `${ADMIN_TOKEN}${ADMIN_TOKEN}`,
    ];
    for (const t of near)
      expect((await g.call("GET", "/v1/admin/settings", { token: t || undefined })).status).toBe(401);
    expect((await g.admin("GET", "/v1/admin/settings")).status).toBe(200);
    // The comparison itself: digests of both sides through timingSafeEqual, no early length exit.
    const src = await Bun.file(new URL("../../src/http/auth.ts", import.meta.url)).text();
    const cmp = src.slice(
      src.indexOf("export function tokenEquals("),
      src.indexOf("\n}\n", src.indexOf("export function tokenEquals(")),
    );
    expect(cmp).toContain("timingSafeEqual(");
    expect(cmp).toMatch(/createHash\("sha256"\)[^;]*given/);
    expect(cmp).not.toMatch(/\.length\s*!==/);
    const check = src.slice(
      src.indexOf("  private async checkAdmin("),
      src.indexOf("\n  }\n", src.indexOf("  private async checkAdmin(")),
    );
    expect(check).toContain("tokenEquals(bearer(request), this.deps.adminToken)");
    expect(check).not.toMatch(/===\s*this\.d\.adminToken|this\.d\.adminToken\s*===/);
  });
});
