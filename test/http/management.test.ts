/** Management keys (dashboard JWT) and the provisioning API they unlock (docs/decisions.md #11). */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { fastUser } from "../support/http";

setDefaultTimeout(30_000);

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

for (const kind of await dbKinds()) {
  describe(`management and provisioning keys on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    const newMgmt = async (jwt: string, name = "automation") => {
      const r = await g.call("POST", "/v1/management-keys", { token: jwt, body: { name } });
      expect(r.status).toBe(201);
      return r.body;
    };

    test("POST /v1/management-keys: 201 { id, name, key_prefix, created_at, last_used_at, key }; GET lists without key", async () => {
      const u = await fastUser(g);
      const m = await newMgmt(u.jwt, "deploy bot");
      expect(Object.keys(m).sort()).toEqual(["created_at", "id", "key", "key_prefix", "last_used_at", "name"]);
      expect(m.key).toStartWith("mk-gw-");
      expect(m.key.startsWith(m.key_prefix)).toBe(true);
      expect(m.key_prefix).toStartWith("mk-gw-");
      expect(m.name).toBe("deploy bot");
      expect(m.created_at).toMatch(ISO);
      expect(m.last_used_at).toBeNull();

      const bad = await g.call("POST", "/v1/management-keys", { token: u.jwt, body: {} });
      expect(bad.status).toBe(422);
      expect(bad.body.detail.map((d: any) => d.loc)).toContainEqual(["body", "name"]);

      // Using it records last_used_at.
      expect((await g.call("GET", "/v1/provisioning/keys", { token: m.key })).status).toBe(200);
      const list = await g.call("GET", "/v1/management-keys", { token: u.jwt });
      expect(list.status).toBe(200);
      expect(list.body.total).toBe(1);
      const item = list.body.items[0];
      expect(Object.keys(item).sort()).toEqual(["created_at", "id", "key_prefix", "last_used_at", "name"]);
      expect(item).toMatchObject({ id: m.id, name: "deploy bot", key_prefix: m.key_prefix, created_at: m.created_at });
      expect(item.last_used_at).toMatch(ISO);
      expect(JSON.stringify(list.body)).not.toContain(m.key);
      // Another user sees none of them.
      const other = await fastUser(g);
      expect((await g.call("GET", "/v1/management-keys", { token: other.jwt })).body).toEqual({ items: [], total: 0 });
    });

    test("a child key is an ordinary API key of the owner; only name and monthly_budget_krw are settable", async () => {
      const u = await fastUser(g, { creditKrw: 100 });
      const m = await newMgmt(u.jwt);
      const c = await g.call("POST", "/v1/provisioning/keys", {
        token: m.key,
        body: { name: "tenant-1", monthly_budget_krw: 5000 },
      });
      expect(c.status).toBe(201);
      expect(c.body.key).toStartWith("sk-gw-");
      expect(c.body).toMatchObject({
        name: "tenant-1",
        monthly_budget_krw: 5000,
        pii_masking_enabled: true,
        allowed_models: null,
        expires_at: null,
        is_active: true,
        response_cache_mode: "off",
      });
      const me = await g.call("GET", "/v1/me", { token: c.body.key });
      expect(me.status).toBe(200);
      expect(me.body.user_id).toBe(u.id);
      // The owner sees it among their keys, without the secret.
      const owned = (await g.call("GET", "/v1/keys", { token: u.jwt })).body.items;
      expect(owned.map((k: any) => k.id)).toEqual([c.body.id]);
      expect(owned[0].key).toBeUndefined();

      const defaults = await g.call("POST", "/v1/provisioning/keys", { token: m.key, body: {} });
      expect(defaults.status).toBe(201);
      expect(defaults.body).toMatchObject({ name: "Default", monthly_budget_krw: null });
      const noBody = await g.call("POST", "/v1/provisioning/keys", { token: m.key });
      expect(noBody.status).toBe(201);

      for (const [field, value] of [
        ["allowed_models", ["gpt-4o"]],
        ["pii_masking_enabled", false],
        ["expires_at", new Date(Date.now() + 86_400_000).toISOString()],
        ["scopes", ["chat"]],
        ["ip_allowlist", ["127.0.0.1"]],
        ["monthly_token_limit", 10],
        ["response_cache_mode", "exact"],
        ["is_active", true],
        ["anything", 1],
      ] as const) {
        const r = await g.call("POST", "/v1/provisioning/keys", { token: m.key, body: { name: "x", [field]: value } });
        expect([field, r.status]).toEqual([field, 422]);
        expect(r.body.detail.map((d: any) => d.loc)).toContainEqual(["body", field]);
      }
      expect(
        (await g.call("POST", "/v1/provisioning/keys", { token: m.key, body: { monthly_budget_krw: -1 } })).status,
      ).toBe(422);
      // Only the three accepted requests created keys.
      expect((await g.call("GET", "/v1/provisioning/keys", { token: m.key })).body.total).toBe(3);
    });

    test("each management key lists and deletes only its own children", async () => {
      const u = await fastUser(g);
      const m1 = await newMgmt(u.jwt, "one");
      const m2 = await newMgmt(u.jwt, "two");
      const a = (await g.call("POST", "/v1/provisioning/keys", { token: m1.key, body: { name: "a" } })).body;
      const b = (await g.call("POST", "/v1/provisioning/keys", { token: m2.key, body: { name: "b" } })).body;
      const own = await g.newKey(u, { name: "dashboard" });

      const l1 = await g.call("GET", "/v1/provisioning/keys", { token: m1.key });
      expect(l1.status).toBe(200);
      expect(l1.body.total).toBe(1);
      expect(l1.body.items.map((k: any) => k.id)).toEqual([a.id]);
      expect(l1.body.items[0].key).toBeUndefined();
      expect(
        (await g.call("GET", "/v1/provisioning/keys", { token: m2.key })).body.items.map((k: any) => k.id),
      ).toEqual([b.id]);

      // m2 cannot delete m1's child, nor a dashboard key, nor another user's child.
      expect((await g.call("DELETE", `/v1/provisioning/keys/${a.id}`, { token: m2.key })).status).toBe(404);
      expect((await g.call("DELETE", `/v1/provisioning/keys/${own.id}`, { token: m2.key })).status).toBe(404);
      const stranger = await fastUser(g);
      const ms = await newMgmt(stranger.jwt);
      expect((await g.call("DELETE", `/v1/provisioning/keys/${b.id}`, { token: ms.key })).status).toBe(404);
      expect((await g.call("GET", "/v1/me", { token: a.key })).status).toBe(200);
      const bad = await g.call("DELETE", "/v1/provisioning/keys/not-a-uuid", { token: m1.key });
      expect(bad.status).toBe(400);
      expect(bad.body.error.type).toBe("invalid_request");

      const d = await g.call("DELETE", `/v1/provisioning/keys/${a.id}`, { token: m1.key });
      expect(d.status).toBe(200);
      expect((await g.call("GET", "/v1/me", { token: a.key })).status).toBe(401);
      expect((await g.call("GET", "/v1/provisioning/keys", { token: m1.key })).body.total).toBe(0);
      expect((await g.call("DELETE", `/v1/provisioning/keys/${a.id}`, { token: m1.key })).status).toBe(404);
      expect((await g.call("GET", "/v1/keys", { token: u.jwt })).body.items.map((k: any) => k.id).sort()).toEqual(
        [b.id, own.id].sort(),
      );
    });

    test("deleting a management key disables it and leaves its children working", async () => {
      const u = await fastUser(g);
      const m = await newMgmt(u.jwt);
      const child = (await g.call("POST", "/v1/provisioning/keys", { token: m.key, body: { name: "c" } })).body;
      const intruder = await fastUser(g);
      expect((await g.call("DELETE", `/v1/management-keys/${m.id}`, { token: intruder.jwt })).status).toBe(404);
      expect((await g.call("DELETE", "/v1/management-keys/xyz", { token: u.jwt })).status).toBe(400);
      const d = await g.call("DELETE", `/v1/management-keys/${m.id}`, { token: u.jwt });
      expect(d.status).toBe(200);
      expect((await g.call("DELETE", `/v1/management-keys/${m.id}`, { token: u.jwt })).status).toBe(404);
      expect((await g.call("GET", "/v1/management-keys", { token: u.jwt })).body.total).toBe(0);
      expect((await g.call("GET", "/v1/provisioning/keys", { token: m.key })).status).toBe(401);
      expect((await g.call("POST", "/v1/provisioning/keys", { token: m.key, body: {} })).status).toBe(401);
      expect((await g.call("GET", "/v1/me", { token: child.key })).status).toBe(200);
      // The owner can still manage the orphaned child from the dashboard.
      expect((await g.call("DELETE", `/v1/keys/${child.id}`, { token: u.jwt })).status).toBe(200);
      expect((await g.call("GET", "/v1/me", { token: child.key })).status).toBe(401);
    });

    test("every key record names the management key that minted it (null for dashboard keys)", async () => {
      const u = await fastUser(g);
      const m = await newMgmt(u.jwt);
      const child = (await g.call("POST", "/v1/provisioning/keys", { token: m.key, body: { name: "c" } })).body;
      const own = await g.newKey(u, { name: "dashboard" });
      expect(child.management_key_id).toBe(m.id);
      expect(own.management_key_id).toBeNull();
      const parents = async () =>
        Object.fromEntries(
          (await g.call("GET", "/v1/keys", { token: u.jwt })).body.items.map((k: any) => [k.id, k.management_key_id]),
        );
      expect(await parents()).toEqual({ [child.id]: m.id, [own.id]: null });
      expect((await g.call("GET", "/v1/provisioning/keys", { token: m.key })).body.items[0].management_key_id).toBe(
        m.id,
      );
      expect(
        (await g.call("PATCH", `/v1/keys/${child.id}`, { token: u.jwt, body: { name: "renamed" } })).body
          .management_key_id,
      ).toBe(m.id);
      // After the parent is deleted (children kept), the children still name it: a leak can be traced.
      expect((await g.call("DELETE", `/v1/management-keys/${m.id}`, { token: u.jwt })).status).toBe(200);
      expect(await parents()).toEqual({ [child.id]: m.id, [own.id]: null });
    });

    test("DELETE /v1/management-keys/{id}?cascade=true deletes its children too; other keys keep working", async () => {
      const u = await fastUser(g, { creditKrw: 100 });
      const m1 = await newMgmt(u.jwt, "leaked");
      const m2 = await newMgmt(u.jwt, "other");
      const child = async (m: any, name: string) =>
        (await g.call("POST", "/v1/provisioning/keys", { token: m.key, body: { name } })).body;
      const [a1, a2, gone] = [await child(m1, "a1"), await child(m1, "a2"), await child(m1, "gone")];
      const b = await child(m2, "b");
      const own = await g.newKey(u, { name: "dashboard" });
      expect((await g.call("DELETE", `/v1/provisioning/keys/${gone.id}`, { token: m1.key })).status).toBe(200);
      // Every key was used (so its principal sits in the key cache) before the cascade.
      for (const k of [a1, a2, b, own]) expect((await g.call("GET", "/v1/me", { token: k.key })).status).toBe(200);

      const d = await g.call("DELETE", `/v1/management-keys/${m1.id}?cascade=true`, { token: u.jwt });
      expect(d.status).toBe(200);
      expect(d.body.ok).toBe(true);
      expect(d.body.id).toBe(m1.id);
      expect([...d.body.deleted_key_ids].sort()).toEqual([a1.id, a2.id].sort());
      for (const k of [a1, a2]) {
        expect((await g.call("GET", "/v1/me", { token: k.key })).status).toBe(401);
        const r = await g.call("POST", "/v1/chat/completions", {
          token: k.key,
          body: { model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] },
        });
        expect(r.status).toBe(401);
      }
      expect((await g.call("GET", "/v1/provisioning/keys", { token: m1.key })).status).toBe(401);
      for (const k of [b, own]) expect((await g.call("GET", "/v1/me", { token: k.key })).status).toBe(200);
      expect((await g.call("GET", "/v1/provisioning/keys", { token: m2.key })).body.total).toBe(1);
      const left = (await g.call("GET", "/v1/keys", { token: u.jwt })).body.items.map((k: any) => k.id).sort();
      expect(left).toEqual([b.id, own.id].sort());
      // Gone is gone: a second delete is 404, cascade or not.
      expect((await g.call("DELETE", `/v1/management-keys/${m1.id}?cascade=true`, { token: u.jwt })).status).toBe(404);
    });

    test("cascade=false (and no cascade) keeps the children; a cascade value other than true/false is 422 and deletes nothing", async () => {
      const u = await fastUser(g);
      const m = await newMgmt(u.jwt);
      const c = (await g.call("POST", "/v1/provisioning/keys", { token: m.key, body: { name: "c" } })).body;
      for (const v of ["yes", "1", "TRUE", ""]) {
        const r = await g.call("DELETE", `/v1/management-keys/${m.id}?cascade=${v}`, { token: u.jwt });
        expect([v, r.status]).toEqual([v, 422]);
        expect(r.body.detail.map((x: any) => x.loc)).toEqual([["query", "cascade"]]);
      }
      const twice = await g.call("DELETE", `/v1/management-keys/${m.id}?cascade=true&cascade=true`, { token: u.jwt });
      expect(twice.status).toBe(422);
      expect((await g.call("GET", "/v1/provisioning/keys", { token: m.key })).status).toBe(200);
      // Another account's cascade is a 404 that touches nothing.
      const intruder = await fastUser(g);
      expect((await g.call("DELETE", `/v1/management-keys/${m.id}?cascade=true`, { token: intruder.jwt })).status).toBe(
        404,
      );
      expect((await g.call("GET", "/v1/me", { token: c.key })).status).toBe(200);

      const d = await g.call("DELETE", `/v1/management-keys/${m.id}?cascade=false`, { token: u.jwt });
      expect(d.status).toBe(200);
      expect(d.body).toEqual({ ok: true, id: m.id });
      expect((await g.call("GET", "/v1/me", { token: c.key })).status).toBe(200);
      expect((await g.call("GET", "/v1/provisioning/keys", { token: m.key })).status).toBe(401);
    });

    test("a management key of a deleted account is 401", async () => {
      const u = await fastUser(g);
      const m = await newMgmt(u.jwt);
      expect((await g.call("GET", "/v1/provisioning/keys", { token: m.key })).status).toBe(200);
      await g.admin("PATCH", `/v1/admin/users/${u.id}`, { deleted: true });
      expect((await g.call("GET", "/v1/provisioning/keys", { token: m.key })).status).toBe(401);
      expect((await g.call("GET", "/v1/provisioning/keys", { token: "mk-gw-" + "y".repeat(40) })).status).toBe(401);
    });
  });
}
