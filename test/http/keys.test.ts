/** `/v1/keys*` (dashboard JWT): the API key table of the specification, with its rules. */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { fastUser } from "../support/http";

setDefaultTimeout(30_000);

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const UNKNOWN_UUID = "00000000-0000-4000-8000-000000000000";
const locs = (r: { body: any }) => r.body.detail.map((d: any) => d.loc);

for (const kind of await dbKinds()) {
  describe(`keys on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("POST with an empty body: 201 and every field of the key table with its default", async () => {
      const u = await fastUser(g);
      const before = Date.now();
      const r = await g.call("POST", "/v1/keys", { token: u.jwt, body: {} });
      expect(r.status).toBe(201);
      const k = r.body;
      expect(k).toMatchObject({
        name: "Default",
        allowed_models: null,
        monthly_budget_krw: null,
        monthly_token_limit: null,
        expires_at: null,
        is_active: true,
        pii_masking_enabled: true,
        response_cache_mode: "off",
        scopes: null,
        ip_allowlist: null,
      });
      expect(k.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(k.key).toStartWith("sk-gw-");
      expect(k.key.length).toBeGreaterThan(30);
      expect(k.key_prefix).toStartWith("sk-gw-");
      expect(k.key.startsWith(k.key_prefix)).toBe(true);
      expect(k.key_prefix.length).toBeLessThan(k.key.length);
      expect(k.created_at).toMatch(ISO);
      expect(Math.abs(Date.parse(k.created_at) - before)).toBeLessThan(60_000);
      // No body at all is the same as {}.
      const none = await g.call("POST", "/v1/keys", { token: u.jwt });
      expect(none.status).toBe(201);
      expect(none.body).toMatchObject({ name: "Default", pii_masking_enabled: true, response_cache_mode: "off" });
      expect(none.body.key).not.toBe(k.key);
    });

    test("POST with every field set echoes them back", async () => {
      const u = await fastUser(g);
      const expires = new Date(Date.now() + 86_400_000).toISOString();
      const body = {
        name: "ci",
        allowed_models: ["gpt-4o-mini", "claude-sonnet-4"],
        monthly_budget_krw: 50_000,
        monthly_token_limit: 1_000_000,
        expires_at: expires,
        is_active: true,
        pii_masking_enabled: false,
        response_cache_mode: "semantic",
        scopes: ["chat", "usage:read"],
        ip_allowlist: ["127.0.0.1", "10.0.0.0/8", "2001:db8::/32", "::1", "::ffff:192.0.2.1"],
      };
      const r = await g.call("POST", "/v1/keys", { token: u.jwt, body });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ ...body, expires_at: expires });
      const listed = (await g.call("GET", "/v1/keys", { token: u.jwt })).body.items[0];
      expect(listed).toMatchObject({ ...body, expires_at: expires });
      expect(listed.created_at).toBe(r.body.created_at);
    });

    test("invalid field values are 422 with their loc", async () => {
      const u = await fastUser(g);
      const cases: [Record<string, unknown>, (string | number)[]][] = [
        [{ scopes: ["admin"] }, ["body", "scopes", 0]],
        [{ scopes: ["chat", "write"] }, ["body", "scopes", 1]],
        [{ scopes: "chat" }, ["body", "scopes"]],
        [{ response_cache_mode: "fuzzy" }, ["body", "response_cache_mode"]],
        [{ pii_masking_enabled: "no" }, ["body", "pii_masking_enabled"]],
        [{ monthly_budget_krw: -1 }, ["body", "monthly_budget_krw"]],
        [{ monthly_budget_krw: 1.5 }, ["body", "monthly_budget_krw"]],
        [{ monthly_token_limit: -5 }, ["body", "monthly_token_limit"]],
        [{ expires_at: "tomorrow" }, ["body", "expires_at"]],
        [{ name: "" }, ["body", "name"]],
        [{ ip_allowlist: ["127.0.0.1", "not-an-ip"] }, ["body", "ip_allowlist", 1]],
        [{ ip_allowlist: ["300.1.1.1"] }, ["body", "ip_allowlist", 0]],
        [{ ip_allowlist: ["10.0.0.0/33"] }, ["body", "ip_allowlist", 0]],
        [{ ip_allowlist: ["2001:db8::/129"] }, ["body", "ip_allowlist", 0]],
        [{ ip_allowlist: ["1:2:3:4:5::6:7:8:9"] }, ["body", "ip_allowlist", 0]],
        [{ ip_allowlist: ["1::2::3"] }, ["body", "ip_allowlist", 0]],
        [{ ip_allowlist: ["10.0.0.1/8/8"] }, ["body", "ip_allowlist", 0]],
        [{ ip_allowlist: "127.0.0.1" }, ["body", "ip_allowlist"]],
        [{ ip_allowlist: ["::1", 5] }, ["body", "ip_allowlist", 1]],
        [{ ip_allowlist: ["1".repeat(65)] }, ["body", "ip_allowlist", 0]],
        [{ allowed_models: ["gpt-4o", ""] }, ["body", "allowed_models", 1]],
      ];
      for (const [body, loc] of cases) {
        const r = await g.call("POST", "/v1/keys", { token: u.jwt, body });
        expect([body, r.status]).toEqual([body, 422]);
        expect([body, locs(r)]).toEqual([body, expect.arrayContaining([loc])]);
      }
      // Several bad allowlist entries are all reported, each at its index.
      const many = await g.call("POST", "/v1/keys", { token: u.jwt, body: { ip_allowlist: ["x", "127.0.0.1", "y"] } });
      expect(locs(many)).toEqual([
        ["body", "ip_allowlist", 0],
        ["body", "ip_allowlist", 2],
      ]);
      // None of these created a key.
      expect((await g.call("GET", "/v1/keys", { token: u.jwt })).body.items).toEqual([]);
    });

    test("IPv4, IPv6, mapped and CIDR allowlist entries are accepted", async () => {
      const u = await fastUser(g);
      const entries = [
        "192.0.2.7",
        "198.51.100.0/24",
        "0.0.0.0/0",
        "::1",
        "2001:db8::/32",
        "fe80::1:2",
        "::ffff:10.1.2.3",
        "::/0",
        "2001:DB8:0:0:0:0:0:1/128",
      ];
      const r = await g.call("POST", "/v1/keys", { token: u.jwt, body: { ip_allowlist: entries } });
      expect(r.status).toBe(201);
      expect(r.body.ip_allowlist).toEqual(entries);
    });

    test("GET /v1/keys lists the caller's keys, never the secret", async () => {
      const u = await fastUser(g);
      const other = await fastUser(g);
      const a = await g.newKey(u, { name: "a" });
      const b = await g.newKey(u, { name: "b" });
      await g.newKey(other, { name: "other" });
      const r = await g.call("GET", "/v1/keys", { token: u.jwt });
      expect(r.status).toBe(200);
      expect(r.body.total).toBe(2);
      expect(r.body.items.map((k: any) => k.id).sort()).toEqual([a.id, b.id].sort());
      for (const item of r.body.items) {
        expect(item.key).toBeUndefined();
        expect(item.key_prefix).toStartWith("sk-gw-");
      }
      expect(JSON.stringify(r.body)).not.toContain(a.key);
      expect(JSON.stringify(r.body)).not.toContain(b.key);
    });

    test("PATCH changes only the fields sent", async () => {
      const u = await fastUser(g);
      const k = await g.newKey(u, {
        name: "orig",
        allowed_models: ["m1"],
        monthly_budget_krw: 100,
        scopes: ["chat"],
        ip_allowlist: ["127.0.0.1"],
      });
      const { key: _secret, ...record } = k;
      const r = await g.call("PATCH", `/v1/keys/${k.id}`, { token: u.jwt, body: { name: "renamed" } });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ ...record, name: "renamed" });
      expect(r.body.key).toBeUndefined();

      const r2 = await g.call("PATCH", `/v1/keys/${k.id}`, {
        token: u.jwt,
        body: { monthly_budget_krw: null, response_cache_mode: "exact", scopes: null },
      });
      expect(r2.body).toEqual({
        ...record,
        name: "renamed",
        monthly_budget_krw: null,
        response_cache_mode: "exact",
        scopes: null,
      });
      const r3 = await g.call("PATCH", `/v1/keys/${k.id}`, { token: u.jwt, body: {} });
      expect(r3.status).toBe(200);
      expect(r3.body).toEqual(r2.body);
      const listed = (await g.call("GET", "/v1/keys", { token: u.jwt })).body.items[0];
      expect(listed).toEqual(r2.body);
      // PATCH validates like POST.
      const bad = await g.call("PATCH", `/v1/keys/${k.id}`, { token: u.jwt, body: { ip_allowlist: ["::1", "nope"] } });
      expect(bad.status).toBe(422);
      expect(locs(bad)).toEqual([["body", "ip_allowlist", 1]]);
      expect(
        (await g.call("PATCH", `/v1/keys/${k.id}`, { token: u.jwt, body: { scopes: ["everything"] } })).status,
      ).toBe(422);
    });

    test("another user's key is 404 on PATCH and DELETE; a non-UUID id is 400 invalid_request", async () => {
      const owner = await fastUser(g);
      const intruder = await fastUser(g);
      const k = await g.newKey(owner);
      const p = await g.call("PATCH", `/v1/keys/${k.id}`, { token: intruder.jwt, body: { name: "mine now" } });
      expect(p.status).toBe(404);
      expect(p.body.error.type).toBe("not_found");
      expect((await g.call("DELETE", `/v1/keys/${k.id}`, { token: intruder.jwt })).status).toBe(404);
      expect((await g.call("PATCH", `/v1/keys/${UNKNOWN_UUID}`, { token: owner.jwt, body: {} })).status).toBe(404);
      expect((await g.call("DELETE", `/v1/keys/${UNKNOWN_UUID}`, { token: owner.jwt })).status).toBe(404);
      for (const method of ["PATCH", "DELETE"]) {
        const r = await g.call(method, "/v1/keys/123", { token: owner.jwt, body: method === "PATCH" ? {} : undefined });
        expect(r.status).toBe(400);
        expect(r.body).toEqual({
          error: { message: expect.any(String), type: "invalid_request", code: "invalid_request", param: "id" },
        });
      }
      // The key is untouched and still works.
      const listed = (await g.call("GET", "/v1/keys", { token: owner.jwt })).body.items;
      expect(listed.map((x: any) => [x.id, x.name])).toEqual([[k.id, "Default"]]);
      expect((await g.call("GET", "/v1/me", { token: k.key })).status).toBe(200);
    });

    test("DELETE removes the key from the list and refuses it at once", async () => {
      const u = await fastUser(g);
      const k = await g.newKey(u);
      const keep = await g.newKey(u);
      expect((await g.call("GET", "/v1/me", { token: k.key })).status).toBe(200);
      const d = await g.call("DELETE", `/v1/keys/${k.id}`, { token: u.jwt });
      expect(d.status).toBe(200);
      expect((await g.call("GET", "/v1/me", { token: k.key })).status).toBe(401);
      expect((await g.call("DELETE", `/v1/keys/${k.id}`, { token: u.jwt })).status).toBe(404);
      expect((await g.call("PATCH", `/v1/keys/${k.id}`, { token: u.jwt, body: { is_active: true } })).status).toBe(404);
      expect((await g.call("GET", "/v1/me", { token: k.key })).status).toBe(401);
      const list = (await g.call("GET", "/v1/keys", { token: u.jwt })).body;
      expect(list.items.map((x: any) => x.id)).toEqual([keep.id]);
    });

    test("regulated accounts cannot create or patch a key with masking off (403 pii_masking_required)", async () => {
      const finance = await fastUser(g, { industry: "finance" });
      const flagged = await fastUser(g);
      expect((await g.admin("PATCH", `/v1/admin/users/${flagged.id}`, { regulated: true })).body.regulated).toBe(true);
      for (const u of [finance, flagged]) {
        const c = await g.call("POST", "/v1/keys", { token: u.jwt, body: { pii_masking_enabled: false } });
        expect(c.status).toBe(403);
        expect(c.body.detail.error).toBe("pii_masking_required");
        expect(typeof c.body.detail.message).toBe("string");
        const k = await g.newKey(u, { pii_masking_enabled: true });
        const p = await g.call("PATCH", `/v1/keys/${k.id}`, { token: u.jwt, body: { pii_masking_enabled: false } });
        expect(p.status).toBe(403);
        expect(p.body.detail.error).toBe("pii_masking_required");
        // Other changes go through; masking stays on.
        const ok = await g.call("PATCH", `/v1/keys/${k.id}`, {
          token: u.jwt,
          body: { name: "fine", pii_masking_enabled: true },
        });
        expect(ok.status).toBe(200);
        expect(ok.body.pii_masking_enabled).toBe(true);
        const list = (await g.call("GET", "/v1/keys", { token: u.jwt })).body.items;
        expect(list.map((x: any) => x.pii_masking_enabled)).toEqual([true]);
      }
      // An unregulated education account may turn masking off.
      const edu = await fastUser(g, { industry: "education" });
      const e = await g.call("POST", "/v1/keys", { token: edu.jwt, body: { pii_masking_enabled: false } });
      expect(e.status).toBe(201);
      expect(e.body.pii_masking_enabled).toBe(false);
    });

    test("GET /v1/keys/usage: this month's counters per key", async () => {
      const u = await fastUser(g);
      const a = await g.newKey(u, { name: "a", monthly_budget_krw: 1000, monthly_token_limit: 5000 });
      const b = await g.newKey(u, { name: "b" });
      const deleted = await g.newKey(u, { name: "gone" });
      await g.call("DELETE", `/v1/keys/${deleted.id}`, { token: u.jwt });
      const r = await g.call("GET", "/v1/keys/usage", { token: u.jwt });
      expect(r.status).toBe(200);
      expect(r.body.month).toBe(new Date().toISOString().slice(0, 7));
      expect(r.body.total).toBe(2);
      const byId = Object.fromEntries(r.body.items.map((i: any) => [i.key_id, i]));
      expect(byId[a.id]).toEqual({
        key_id: a.id,
        name: "a",
        key_prefix: a.key_prefix,
        spent_krw: 0,
        held_krw: 0,
        tokens: 0,
        requests: 0,
        monthly_budget_krw: 1000,
        monthly_token_limit: 5000,
      });
      expect(byId[b.id]).toMatchObject({
        name: "b",
        spent_krw: 0,
        monthly_budget_krw: null,
        monthly_token_limit: null,
      });
      expect(byId[deleted.id]).toBeUndefined();
      expect(JSON.stringify(r.body)).not.toContain(a.key);
    });
  });
}
