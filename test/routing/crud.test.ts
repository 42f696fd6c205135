/**
 * `/v1/routing-policies*`: every rule of the policy and entry tables, ownership, organization
 * permissions, and the config DSL, on PostgreSQL and PGlite (unique indexes and JSON columns
 * are the database's business).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { quickUser, uniqueSlug } from "./helpers";

const UNKNOWN_UUID = "00000000-0000-4000-8000-000000000000";
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const locs = (r: { body: any }) => (r.body.detail as any[]).map((d) => d.loc.join("."));

for (const kind of await dbKinds()) {
  describe(`routing policy CRUD on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind });
    }, 30_000);
    afterAll(async () => {
      await g?.stop();
    });

    const post = (jwt: string, body: Record<string, unknown>) =>
      g.call("POST", "/v1/routing-policies", { token: jwt, body });
    const valid = (over: Record<string, unknown> = {}) => ({
      slug: uniqueSlug(),
      display_name: "My policy",
      policy_type: "fallback",
      entries: [{ model: "gpt-4o-mini", retries: 2 }, { model: "anthropic/claude-haiku-4-5" }],
      ...over,
    });

    test("POST: 201 with the record; vendor ids stored in short form; retries default 0; active by default", async () => {
      const u = await quickUser(g);
      const body = valid({ config: { limits: { max_escalations: 1 } } });
      const r = await post(u.jwt, body);
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({
        slug: body.slug,
        display_name: "My policy",
        policy_type: "fallback",
        entries: [
          { model: "gpt-4o-mini", weight: null, retries: 2 },
          { model: "claude-haiku-4-5", weight: null, retries: 0 },
        ],
        config: { limits: { max_escalations: 1 } },
        org_id: null,
        created_by: u.id,
        is_active: true,
      });
      expect(r.body.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.body.created_at).toMatch(ISO);
      expect(r.body.updated_at).toMatch(ISO);
      const inactive = await post(
        u.jwt,
        valid({
          is_active: false,
          org_id: "",
          policy_type: "weighted",
          entries: [{ model: "deepseek-v3@together", weight: 7 }],
        }),
      );
      expect(inactive.status).toBe(201);
      expect(inactive.body).toMatchObject({
        is_active: false,
        org_id: null,
        entries: [{ model: "deepseek-v3@together", weight: 7, retries: 0 }],
      });
    });

    test("GET: {items, total}, newest first, only the caller's", async () => {
      const u = await quickUser(g);
      const other = await quickUser(g);
      const a = await post(u.jwt, valid());
      const b = await post(u.jwt, valid());
      await post(other.jwt, valid());
      const r = await g.call("GET", "/v1/routing-policies", { token: u.jwt });
      expect(r.status).toBe(200);
      expect(r.body.total).toBe(2);
      expect(r.body.items.map((p: any) => p.id)).toEqual([b.body.id, a.body.id]);
      const one = await g.call("GET", `/v1/routing-policies/${a.body.id}`, { token: u.jwt });
      expect(one.body).toEqual(a.body);
    });

    test("409 on a slug the user already has; another user may use the same slug", async () => {
      const u = await quickUser(g);
      const body = valid();
      expect((await post(u.jwt, body)).status).toBe(201);
      const dup = await post(u.jwt, { ...body, display_name: "again" });
      expect(dup.status).toBe(409);
      expect(dup.body.detail.error).toBe("conflict");
      const other = await quickUser(g);
      expect((await post(other.jwt, body)).status).toBe(201);
    });

    test("422 for every table rule: slug pattern, display_name 1–100, 1–10 entries, model 1–100, weight 1–10000, retries 0–3, policy_type, config an object", async () => {
      const u = await quickUser(g);
      const cases: [Record<string, unknown>, string][] = [
        [valid({ slug: "Upper" }), "body.slug"],
        [valid({ slug: "-lead" }), "body.slug"],
        [valid({ slug: "a".repeat(64) }), "body.slug"],
        [valid({ slug: "under_score" }), "body.slug"],
        [valid({ display_name: "" }), "body.display_name"],
        [valid({ display_name: "x".repeat(101) }), "body.display_name"],
        [valid({ entries: [] }), "body.entries"],
        [valid({ entries: Array.from({ length: 11 }, () => ({ model: "gpt-4o-mini" })) }), "body.entries"],
        [valid({ entries: [{ model: "" }] }), "body.entries.0.model"],
        [valid({ entries: [{ model: "m".repeat(101) }] }), "body.entries.0.model"],
        [valid({ entries: [{ model: "gpt-4o-mini", weight: 0 }] }), "body.entries.0.weight"],
        [valid({ entries: [{ model: "gpt-4o-mini", weight: 10001 }] }), "body.entries.0.weight"],
        [valid({ entries: [{ model: "gpt-4o-mini", retries: 4 }] }), "body.entries.0.retries"],
        [valid({ entries: [{ model: "gpt-4o-mini", retries: -1 }] }), "body.entries.0.retries"],
        [valid({ policy_type: "random" }), "body.policy_type"],
        [valid({ config: "fast" }), "body.config"],
        [valid({ config: [1] }), "body.config"],
        [valid({ org_id: "not-a-uuid" }), "body.org_id"],
      ];
      for (const [body, loc] of cases) {
        const r = await post(u.jwt, body);
        expect(r.status, JSON.stringify(body).slice(0, 120)).toBe(422);
        expect(
          locs(r).some((l) => l.startsWith(loc)),
          `${loc} in ${locs(r)}`,
        ).toBe(true);
      }
      const missing = await post(u.jwt, {});
      expect(missing.status).toBe(422);
      expect(locs(missing)).toEqual(
        expect.arrayContaining(["body.slug", "body.display_name", "body.policy_type", "body.entries"]),
      );
      // The limits themselves are fine.
      const edge = await post(
        u.jwt,
        valid({
          slug: "a" + "b".repeat(62),
          display_name: "x".repeat(100),
          entries: Array.from({ length: 10 }, () => ({ model: "gpt-4o-mini", weight: 10000, retries: 3 })),
        }),
      );
      expect(edge.status).toBe(201);
    });

    test("400 invalid_policy_entry: another policy, routing parents, retired parents, unknown, non-chat and unpriced models", async () => {
      const u = await quickUser(g);
      for (const model of [
        "policy/other",
        "orch/other",
        "benchmark_smart",
        "analytics_smart",
        "perfect",
        "pleum-smart",
        "pleum-perfect",
        "no-such-model",
        "veo-3",
        "text-embedding-3-small",
        "gpt-4o-mini@groq",
      ]) {
        const r = await post(u.jwt, valid({ entries: [{ model: "gpt-4o-mini" }, { model }] }));
        expect(r.status, model).toBe(400);
        expect(r.body.detail.error, model).toBe("invalid_policy_entry");
        expect(r.body.detail.message).toContain("entries[1]");
      }
      // The config's models follow the same rule.
      const judge = await post(u.jwt, valid({ policy_type: "cascade", config: { judge_model: "perfect" } }));
      expect(judge.status).toBe(400);
      expect(judge.body.detail.message).toContain("config.judge_model");
      const synth = await post(
        u.jwt,
        valid({ policy_type: "parallel", config: { synthesis: { model: "pleum-perfect" } } }),
      );
      expect(synth.status).toBe(400);
      expect(synth.body.detail.message).toContain("config.synthesis.model");
    });

    test("the config DSL: every documented key accepted; unknown keys and wrong shapes are 422", async () => {
      const u = await quickUser(g);
      const full = {
        response_check: {
          empty: true,
          refusal: true,
          truncated: false,
          invalid_json: true,
          min_chars: 5,
          must_include: ["sources"],
        },
        judge_model: "openai/gpt-4o-mini",
        hard_categories: ["math", "coding"],
        deep_categories: ["reasoning"],
        synthesis: { model: "gpt-4o", instructions: "Be concise." },
        latency: { metric: "ttft", exploration: 0.1 },
        routing_prefs: {
          order: ["deepseek"],
          ignore: ["together"],
          sort: "price",
          max_price: { prompt: 5 },
          allow_fallbacks: true,
        },
        limits: { max_cost_krw: 50, max_escalations: 2, deadline_ms: 30000 },
      };
      const ok = await post(u.jwt, valid({ policy_type: "cascade", config: full }));
      expect(ok.status).toBe(201);
      expect(ok.body.config).toEqual({ ...full, judge_model: "gpt-4o-mini" });
      const bad: [Record<string, unknown>, string][] = [
        [{ hard_category: ["math"] }, "body.config"],
        [{ hard_categories: ["cooking"] }, "body.config.hard_categories"],
        [{ response_check: { empty: "yes" } }, "body.config.response_check"],
        [{ response_check: { banana: true } }, "body.config.response_check"],
        [{ limits: { max_escalations: -1 } }, "body.config.limits"],
        [{ limits: { deadline_ms: 5 } }, "body.config.limits"],
        [{ limits: { max_cost_krw: 0 } }, "body.config.limits"],
        [{ latency: { exploration: 0.9 } }, "body.config.latency"],
        [{ routing_prefs: { sort: "random" } }, "body.config.routing_prefs"],
        [{ synthesis: 5 }, "body.config.synthesis"],
      ];
      for (const [config, loc] of bad) {
        const r = await post(u.jwt, valid({ config }));
        expect(r.status, JSON.stringify(config)).toBe(422);
        expect(
          locs(r).some((l) => l.startsWith(loc)),
          `${loc} in ${locs(r)}`,
        ).toBe(true);
      }
      // PATCH validates the same way.
      const patched = await g.call("PATCH", `/v1/routing-policies/${ok.body.id}`, {
        token: u.jwt,
        body: { config: { limits: { max_escalations: 99 } } },
      });
      expect(patched.status).toBe(422);
    });

    test("PATCH changes only the fields sent; slug is immutable (422 when changed, accepted unchanged)", async () => {
      const u = await quickUser(g);
      const created = (await post(u.jwt, valid({ config: { limits: { max_escalations: 1 } } }))).body;
      await Bun.sleep(5);
      const name = await g.call("PATCH", `/v1/routing-policies/${created.id}`, {
        token: u.jwt,
        body: { display_name: "Renamed" },
      });
      expect(name.status).toBe(200);
      const updatedAt = name.body.updated_at;
      expect(Date.parse(updatedAt)).toBeGreaterThan(Date.parse(created.updated_at));
      expect(name.body).toEqual({ ...created, display_name: "Renamed", updated_at: updatedAt });
      const all = await g.call("PATCH", `/v1/routing-policies/${created.id}`, {
        token: u.jwt,
        body: {
          policy_type: "weighted",
          entries: [{ model: "gemini-2.5-flash", weight: 3 }],
          is_active: false,
          config: {},
        },
      });
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({
        slug: created.slug,
        display_name: "Renamed",
        policy_type: "weighted",
        entries: [{ model: "gemini-2.5-flash", weight: 3, retries: 0 }],
        is_active: false,
        config: {},
      });
      const slug = await g.call("PATCH", `/v1/routing-policies/${created.id}`, {
        token: u.jwt,
        body: { slug: "another-slug", display_name: "x" },
      });
      expect(slug.status).toBe(422);
      expect(locs(slug)).toEqual(["body.slug"]);
      const same = await g.call("PATCH", `/v1/routing-policies/${created.id}`, {
        token: u.jwt,
        body: { slug: created.slug, display_name: "Same slug" },
      });
      expect(same.status).toBe(200);
      expect(same.body.slug).toBe(created.slug);
      const empty = await g.call("PATCH", `/v1/routing-policies/${created.id}`, { token: u.jwt, body: {} });
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual(same.body);
      const badEntry = await g.call("PATCH", `/v1/routing-policies/${created.id}`, {
        token: u.jwt,
        body: { entries: [{ model: "benchmark_smart" }] },
      });
      expect(badEntry.status).toBe(400);
      expect(badEntry.body.detail.error).toBe("invalid_policy_entry");
      const badField = await g.call("PATCH", `/v1/routing-policies/${created.id}`, {
        token: u.jwt,
        body: { display_name: "" },
      });
      expect(badField.status).toBe(422);
    });

    test("DELETE → {ok: true}; then 404 everywhere; the slug is free again", async () => {
      const u = await quickUser(g);
      const body = valid();
      const created = (await post(u.jwt, body)).body;
      const del = await g.call("DELETE", `/v1/routing-policies/${created.id}`, { token: u.jwt });
      expect(del.status).toBe(200);
      expect(del.body).toEqual({ ok: true });
      for (const m of ["GET", "PATCH", "DELETE"]) {
        const r = await g.call(m, `/v1/routing-policies/${created.id}`, {
          token: u.jwt,
          ...(m === "PATCH" && { body: { display_name: "x" } }),
        });
        expect(r.status, m).toBe(404);
      }
      expect((await g.call("GET", "/v1/routing-policies", { token: u.jwt })).body.total).toBe(0);
      expect((await post(u.jwt, body)).status).toBe(201);
    });

    test("another user's policy or a missing one: 404; a non-UUID id: 400 invalid_request", async () => {
      const owner = await quickUser(g);
      const stranger = await quickUser(g);
      const p = (await post(owner.jwt, valid())).body;
      for (const [m, body] of [
        ["GET", undefined],
        ["PATCH", { display_name: "mine" }],
        ["DELETE", undefined],
      ] as const) {
        const r = await g.call(m, `/v1/routing-policies/${p.id}`, { token: stranger.jwt, body });
        expect(r.status, m).toBe(404);
        expect(r.body.error.type).toBe("not_found");
        expect((await g.call(m, `/v1/routing-policies/${UNKNOWN_UUID}`, { token: owner.jwt, body })).status).toBe(404);
        const bad = await g.call(m, "/v1/routing-policies/not-a-uuid", { token: owner.jwt, body });
        expect(bad.status, m).toBe(400);
        expect(bad.body.error.type).toBe("invalid_request");
      }
      expect((await g.call("GET", `/v1/routing-policies/${p.id}`, { token: owner.jwt })).body.display_name).toBe(
        "My policy",
      );
    });

    test("dashboard JWT only: no token, a bad token or an API key is 401", async () => {
      const u = await quickUser(g);
      const key = await g.newKey(u);
      for (const token of [undefined, "nonsense", key.key]) {
        expect((await g.call("GET", "/v1/routing-policies", { token })).status).toBe(401);
        expect((await g.call("POST", "/v1/routing-policies", { token, body: valid() })).status).toBe(401);
      }
    });

    test("organization policies: members create, see and list them; edit and delete by the creator and owners/admins", async () => {
      const owner = await quickUser(g);
      const admin = await quickUser(g);
      const member = await quickUser(g);
      const creator = await quickUser(g);
      const outsider = await quickUser(g);
      const org = await g.admin("POST", "/v1/admin/orgs", { name: "Team", owner_user_id: owner.id });
      expect(org.status).toBe(201);
      const orgId = org.body.org_id;
      for (const [u, role] of [
        [admin, "admin"],
        [member, "member"],
        [creator, "member"],
      ] as const) {
        expect((await g.admin("POST", `/v1/admin/orgs/${orgId}/members`, { user_id: u.id, role })).status).toBe(201);
      }
      const denied = await post(outsider.jwt, valid({ org_id: orgId }));
      expect(denied.status).toBe(403);
      expect(denied.body.detail.error).toBe("org_membership_required");
      expect((await post(outsider.jwt, valid({ org_id: UNKNOWN_UUID }))).body.detail.error).toBe(
        "org_membership_required",
      );

      const p = await post(creator.jwt, valid({ org_id: orgId.toUpperCase() }));
      expect(p.status).toBe(201);
      expect(p.body.org_id).toBe(orgId);
      const personal = await post(member.jwt, valid());
      for (const u of [owner, admin, member, creator]) {
        const list = await g.call("GET", "/v1/routing-policies", { token: u.jwt });
        expect(list.body.items.map((x: any) => x.id)).toContain(p.body.id);
        expect((await g.call("GET", `/v1/routing-policies/${p.body.id}`, { token: u.jwt })).status).toBe(200);
      }
      // A member's personal policy stays personal.
      expect(
        (await g.call("GET", "/v1/routing-policies", { token: owner.jwt })).body.items.map((x: any) => x.id),
      ).not.toContain(personal.body.id);
      expect((await g.call("GET", "/v1/routing-policies", { token: outsider.jwt })).body.total).toBe(0);
      expect((await g.call("GET", `/v1/routing-policies/${p.body.id}`, { token: outsider.jwt })).status).toBe(404);
      expect(
        (
          await g.call("PATCH", `/v1/routing-policies/${p.body.id}`, {
            token: outsider.jwt,
            body: { display_name: "x" },
          })
        ).status,
      ).toBe(404);

      const byMember = await g.call("PATCH", `/v1/routing-policies/${p.body.id}`, {
        token: member.jwt,
        body: { display_name: "member edit" },
      });
      expect(byMember.status).toBe(403);
      expect(byMember.body.detail.error).toBe("forbidden");
      expect((await g.call("DELETE", `/v1/routing-policies/${p.body.id}`, { token: member.jwt })).status).toBe(403);
      expect(
        (
          await g.call("PATCH", `/v1/routing-policies/${p.body.id}`, {
            token: creator.jwt,
            body: { display_name: "by creator" },
          })
        ).body.display_name,
      ).toBe("by creator");
      expect(
        (
          await g.call("PATCH", `/v1/routing-policies/${p.body.id}`, {
            token: admin.jwt,
            body: { display_name: "by admin" },
          })
        ).body.display_name,
      ).toBe("by admin");
      const moved = await g.call("PATCH", `/v1/routing-policies/${p.body.id}`, {
        token: admin.jwt,
        body: { org_id: "" },
      });
      expect(moved.status).toBe(422);
      expect((await g.call("DELETE", `/v1/routing-policies/${p.body.id}`, { token: owner.jwt })).body).toEqual({
        ok: true,
      });

      // A slug is unique within an organization too.
      const slug = uniqueSlug("org");
      expect((await post(admin.jwt, valid({ slug, org_id: orgId }))).status).toBe(201);
      expect((await post(creator.jwt, valid({ slug, org_id: orgId }))).status).toBe(409);
      expect((await post(creator.jwt, valid({ slug }))).status).toBe(201); // a personal one with that slug is fine
    });
  });
}
