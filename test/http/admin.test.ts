/** Operator endpoints (operator contract): token, top-ups, flags, settings, orgs, issued keys. */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { ADMIN_TOKEN, dbKinds, startTestGateway, type TestGateway } from "../harness";
import { fastUser } from "../support/http";

setDefaultTimeout(30_000);

const UNKNOWN_UUID = "00000000-0000-4000-8000-000000000000";

for (const kind of await dbKinds()) {
  describe(`admin on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("a missing or wrong admin token is 401 on every operator endpoint", async () => {
      const u = await fastUser(g);
      const calls: [string, string, unknown][] = [
        ["POST", `/v1/admin/users/${u.id}/topups`, { amount_krw: 1000 }],
        ["PATCH", `/v1/admin/users/${u.id}`, { regulated: true }],
        ["GET", "/v1/admin/settings", undefined],
        ["PATCH", "/v1/admin/settings", { "routing.orchestrators_enabled": true }],
        ["POST", "/v1/admin/orgs", { name: "o", owner_user_id: u.id }],
        ["POST", `/v1/admin/users/${u.id}/delegated-keys`, {}],
        ["POST", `/v1/admin/users/${u.id}/byok-keys`, { provider: "openai", provider_api_key: "sk-x" }],
      ];
      for (const [method, path, body] of calls) {
        for (const token of [undefined, "wrong-token", ADMIN_TOKEN + "x", ADMIN_TOKEN.slice(0, -1), u.jwt]) {
          const r = await g.call(method, path, { token, body });
          expect([method, path, r.status]).toEqual([method, path, 401]);
        }
      }
      // The token is checked before the body: an invalid body without the token is 401 too.
      expect((await g.call("POST", `/v1/admin/users/${u.id}/topups`, { body: { amount_krw: "lots" } })).status).toBe(
        401,
      );
      expect((await g.call("PATCH", "/v1/admin/settings", { token: "wrong", body: { nope: 1 } })).status).toBe(401);
      // Nothing happened: no credit, not regulated, settings unchanged.
      const me = await g.call("GET", "/v1/me", { token: u.jwt });
      expect(me.body).toMatchObject({ balance_krw: 0, regulated: false });
      expect((await g.admin("GET", "/v1/admin/settings")).body["routing.orchestrators_enabled"]).toBe(false);
    });

    test("top-up takes ceil(3%) from the amount paid", async () => {
      const u = await fastUser(g);
      const cases: [number, number, number][] = [
        [1000, 30, 970],
        [101, 4, 97],
        [100, 3, 97],
        [1, 1, 0],
        [34, 2, 32],
        [10_000, 300, 9700],
        [33_333, 1000, 32_333],
      ];
      let balance = 0;
      for (const [paid, fee, credited] of cases) {
        const r = await g.admin("POST", `/v1/admin/users/${u.id}/topups`, { amount_krw: paid });
        balance += credited;
        expect(r.status).toBe(201);
        expect(r.body).toEqual({ paid_krw: paid, fee_krw: fee, credited_krw: credited, balance_krw: balance });
      }
      expect((await g.call("GET", "/v1/me", { token: u.jwt })).body.balance_krw).toBe(balance);
    });

    test("top-up amounts that are not integers ≥ 1 are 422 at body.amount_krw", async () => {
      const u = await fastUser(g);
      for (const amount_krw of [0, 1.5, -5, "1000", null]) {
        const r = await g.admin("POST", `/v1/admin/users/${u.id}/topups`, { amount_krw });
        expect([amount_krw, r.status]).toEqual([amount_krw, 422]);
        expect(r.body.detail.map((d: any) => d.loc)).toContainEqual(["body", "amount_krw"]);
      }
      const missing = await g.admin("POST", `/v1/admin/users/${u.id}/topups`, {});
      expect(missing.status).toBe(422);
      expect((await g.call("GET", "/v1/me", { token: u.jwt })).body.balance_krw).toBe(0);
    });

    test("a non-UUID user id is 400 invalid_request; an unknown or deleted one is 404", async () => {
      for (const [method, suffix, body] of [
        ["POST", "/topups", { amount_krw: 10 }],
        ["PATCH", "", { regulated: true }],
        ["POST", "/delegated-keys", {}],
        ["POST", "/byok-keys", { provider: "openai", provider_api_key: "sk-x" }],
      ] as const) {
        const bad = await g.admin(method, `/v1/admin/users/not-a-uuid${suffix}`, body);
        expect(bad.status).toBe(400);
        expect(bad.body).toEqual({
          error: { message: expect.any(String), type: "invalid_request", code: "invalid_request", param: "user_id" },
        });
        const unknown = await g.admin(method, `/v1/admin/users/${UNKNOWN_UUID}${suffix}`, body);
        expect(unknown.status).toBe(404);
      }
      const u = await fastUser(g);
      await g.admin("PATCH", `/v1/admin/users/${u.id}`, { deleted: true });
      expect((await g.admin("POST", `/v1/admin/users/${u.id}/topups`, { amount_krw: 10 })).status).toBe(404);
    });

    test("PATCH user flags changes only what is sent and answers the /v1/me shape", async () => {
      const u = await fastUser(g, { creditKrw: 250 });
      const r = await g.admin("PATCH", `/v1/admin/users/${u.id}`, { regulated: true });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({
        user_id: u.id,
        email: u.email,
        balance_krw: 250,
        held_krw: 0,
        regulated: true,
        xborder_training_consent: false,
      });
      const r2 = await g.admin("PATCH", `/v1/admin/users/${u.id}`, { xborder_training_consent: true });
      expect(r2.body).toMatchObject({ regulated: true, xborder_training_consent: true });
      expect((await g.call("GET", "/v1/me", { token: u.jwt })).body).toEqual(r2.body);
      const r3 = await g.admin("PATCH", `/v1/admin/users/${u.id}`, { regulated: false });
      expect(r3.body).toMatchObject({ regulated: false, xborder_training_consent: true });
      const bad = await g.admin("PATCH", `/v1/admin/users/${u.id}`, { regulated: "yes" });
      expect(bad.status).toBe(422);
      expect(bad.body.detail.map((d: any) => d.loc)).toContainEqual(["body", "regulated"]);
      // Undeleting brings the account back.
      await g.admin("PATCH", `/v1/admin/users/${u.id}`, { deleted: true });
      expect((await g.call("GET", "/v1/me", { token: u.jwt })).status).toBe(401);
      await g.admin("PATCH", `/v1/admin/users/${u.id}`, { deleted: false });
      expect((await g.call("GET", "/v1/me", { token: u.jwt })).status).toBe(200);
    });

    test("settings: defaults, PATCH persists and answers the whole object, bad input is 422", async () => {
      const initial = await g.admin("GET", "/v1/admin/settings");
      expect(initial.status).toBe(200);
      expect(initial.body).toMatchObject({ "routing.policies_enabled": true, "routing.orchestrators_enabled": false });

      const p = await g.admin("PATCH", "/v1/admin/settings", { "routing.orchestrators_enabled": true });
      expect(p.status).toBe(200);
      expect(p.body).toEqual({ ...initial.body, "routing.orchestrators_enabled": true });
      expect((await g.admin("GET", "/v1/admin/settings")).body).toEqual(p.body);
      // Persisted in the database, not only in this process's memory.
      const rows = await g.gw.deps.db.query<{ key: string; value: unknown }>(
        "select key, value from settings where key = $1",
        ["routing.orchestrators_enabled"],
      );
      expect(rows[0]?.value).toBe(true);
      const fresh = await (await import("../../src/db/repos/settings")).SettingsStore.prototype.load.call({
        db: g.gw.deps.db,
        current: {},
      });
      expect(fresh["routing.orchestrators_enabled"]).toBe(true);

      for (const body of [
        { "routing.unknown": true },
        { "routing.policies_enabled": "off" },
        { "routing.policies_enabled": false, other: 1 },
      ]) {
        const bad = await g.admin("PATCH", "/v1/admin/settings", body);
        expect(bad.status).toBe(422);
        expect(bad.body.detail.length).toBeGreaterThan(0);
        expect(bad.body.detail[0].loc[0]).toBe("body");
      }
      const unknown = await g.admin("PATCH", "/v1/admin/settings", { "routing.unknown": true });
      expect(unknown.body.detail[0].loc).toEqual(["body", "routing.unknown"]);
      // A rejected PATCH changes nothing, not even its valid part.
      expect((await g.admin("GET", "/v1/admin/settings")).body).toEqual(p.body);

      const back = await g.admin("PATCH", "/v1/admin/settings", {
        "routing.orchestrators_enabled": false,
        "routing.policies_enabled": true,
      });
      expect(back.body).toEqual(initial.body);
    });

    test("orgs and members: 201 shapes, ids checked", async () => {
      const owner = await fastUser(g);
      const member = await fastUser(g);
      const o = await g.admin("POST", "/v1/admin/orgs", { name: "Team A", owner_user_id: owner.id });
      expect(o.status).toBe(201);
      expect(Object.keys(o.body).sort()).toEqual(["name", "org_id"]);
      expect(o.body.name).toBe("Team A");
      const m = await g.admin("POST", `/v1/admin/orgs/${o.body.org_id}/members`, {
        user_id: member.id,
        role: "member",
        monthly_budget_krw: 5000,
      });
      expect(m.status).toBe(201);
      expect(m.body).toEqual({ org_id: o.body.org_id, user_id: member.id, role: "member", monthly_budget_krw: 5000 });
      const a = await g.admin("POST", `/v1/admin/orgs/${o.body.org_id}/members`, { user_id: member.id, role: "admin" });
      expect(a.status).toBe(201);
      expect(a.body).toEqual({ org_id: o.body.org_id, user_id: member.id, role: "admin", monthly_budget_krw: null });

      expect(
        (await g.admin("POST", `/v1/admin/orgs/${o.body.org_id}/members`, { user_id: member.id, role: "boss" })).status,
      ).toBe(422);
      expect(
        (await g.admin("POST", "/v1/admin/orgs/nope/members", { user_id: member.id, role: "member" })).status,
      ).toBe(400);
      expect(
        (await g.admin("POST", `/v1/admin/orgs/${UNKNOWN_UUID}/members`, { user_id: member.id, role: "member" }))
          .status,
      ).toBe(404);
      expect(
        (await g.admin("POST", `/v1/admin/orgs/${o.body.org_id}/members`, { user_id: UNKNOWN_UUID, role: "member" }))
          .status,
      ).toBe(404);
      expect((await g.admin("POST", "/v1/admin/orgs", { name: "x", owner_user_id: "nope" })).status).toBe(400);
      expect((await g.admin("POST", "/v1/admin/orgs", { name: "x", owner_user_id: UNKNOWN_UUID })).status).toBe(404);
      expect((await g.admin("POST", "/v1/admin/orgs", { name: "", owner_user_id: owner.id })).status).toBe(422);
    });

    test("delegated and BYOK keys: 201 records with the secret, usable as API keys", async () => {
      const u = await fastUser(g);
      const d = await g.admin("POST", `/v1/admin/users/${u.id}/delegated-keys`, { name: "first-party" });
      expect(d.status).toBe(201);
      expect(d.body.key).toStartWith("sk-gw-");
      expect(d.body).toMatchObject({
        name: "first-party",
        kind: "delegated",
        is_active: true,
        pii_masking_enabled: true,
      });
      expect(d.body.key_prefix).toBe(d.body.key.slice(0, d.body.key_prefix.length));
      const dNoBody = await g.admin("POST", `/v1/admin/users/${u.id}/delegated-keys`);
      expect(dNoBody.status).toBe(201);
      expect(dNoBody.body.key).toStartWith("sk-gw-");

      const b = await g.admin("POST", `/v1/admin/users/${u.id}/byok-keys`, {
        provider: "openai",
        provider_api_key: "sk-user-own-credential",
      });
      expect(b.status).toBe(201);
      expect(b.body.key).toStartWith("sk-gw-");
      expect(b.body).toMatchObject({ kind: "byok", byok_provider: "openai" });
      // The provider credential is never echoed.
      expect(JSON.stringify(b.body)).not.toContain("sk-user-own-credential");
      const unknownProvider = await g.admin("POST", `/v1/admin/users/${u.id}/byok-keys`, {
        provider: "nope",
        provider_api_key: "x",
      });
      expect(unknownProvider.status).toBe(422);
      expect(unknownProvider.body.detail[0].loc).toEqual(["body", "provider"]);
      expect((await g.admin("POST", `/v1/admin/users/${u.id}/byok-keys`, { provider: "openai" })).status).toBe(422);

      for (const k of [d.body, b.body]) {
        const me = await g.call("GET", "/v1/me", { token: k.key });
        expect(me.status).toBe(200);
        expect(me.body.user_id).toBe(u.id);
      }
      const list = await g.call("GET", "/v1/keys", { token: u.jwt });
      expect(list.body.items.map((k: any) => k.kind).sort()).toEqual(["byok", "delegated", "delegated"]);
      expect(JSON.stringify(list.body)).not.toContain("sk-user-own-credential");
    });
  });
}

describe("admin endpoints without ADMIN_TOKEN", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({ db: "pglite", env: { ADMIN_TOKEN: "" } });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  test("are 404 (disabled) outside demo mode, whatever token is sent", async () => {
    expect(g.gw.deps.adminToken).toBeNull();
    const u = await fastUser(g);
    for (const token of [undefined, ADMIN_TOKEN, "anything-at-all-0123456789"]) {
      for (const [method, path] of [
        ["GET", "/v1/admin/settings"],
        ["POST", `/v1/admin/users/${u.id}/topups`],
        ["PATCH", `/v1/admin/users/${u.id}`],
      ] as const) {
        const r = await g.call(method, path, { token, body: method === "GET" ? undefined : { amount_krw: 10 } });
        expect([path, r.status]).toEqual([path, 404]);
        expect(r.body.error.type).toBe("not_found");
      }
    }
  });
});

describe("admin token in demo mode", () => {
  test("is generated, kept in DATA_DIR and enforced when ADMIN_TOKEN is unset", async () => {
    const g = await startTestGateway({ db: "pglite", env: { ADMIN_TOKEN: "", DEMO_MODE: "true" } });
    try {
      const token = g.gw.deps.adminToken;
      expect(token).toBeString();
      expect(token!.length).toBeGreaterThanOrEqual(16);
      expect((await g.call("GET", "/v1/admin/settings", { token: token! })).status).toBe(200);
      expect((await g.call("GET", "/v1/admin/settings", { token: ADMIN_TOKEN })).status).toBe(401);
    } finally {
      await g.stop();
    }
  }, 60_000);
});
