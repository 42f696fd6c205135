/**
 * POST /v1/responses/{request_id}/feedback: dashboard JWT only, ownership through the usage
 * event, both id forms, replacement of an earlier rating, and the per-model summary the
 * routing engine reads. On both databases (the upsert is one SQL statement).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { dbKinds, startTestGateway, ADMIN_TOKEN, type TestGateway } from "../harness";
import { FeedbackRepo } from "../../src/db/repos/feedback";
import { tenant, usageOf } from "./helpers";

// Every test makes its own tenant (signup, login, key) and calls over real sockets.
setDefaultTimeout(30_000);

for (const kind of await dbKinds()) {
  describe(`feedback on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind });
    }, 30_000);
    afterAll(async () => {
      await g?.stop();
    });

    const rate = (token: string | undefined, id: string, body: unknown) =>
      g.call("POST", `/v1/responses/${id}/feedback`, { token, body });
    const uuidOf = (respId: string) => respId.slice(5).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, "$1-$2-$3-$4-$5");

    test("only a dashboard JWT may rate: no token, API keys, management keys and the admin token get 401", async () => {
      const { user, key, sdk } = await tenant(g);
      const r = await sdk.responses.create({ model: "gpt-4o-mini", input: "rate me" });
      await usageOf(g, r.id);
      const mgmt = await g.call("POST", "/v1/management-keys", { token: user.jwt, body: { name: "m" } });
      expect(mgmt.status).toBe(201);
      for (const token of [undefined, key.key, mgmt.body.key, ADMIN_TOKEN, user.jwt + "x"]) {
        const res = await rate(token, r.id, { rating: "up" });
        expect(res.status).toBe(401);
        expect(res.body.detail.error).toBe("unauthorized");
      }
      expect((await rate(user.jwt, r.id, { rating: "up" })).status).toBe(201);
    });

    test("201 with the stored record, by resp_ id or by request UUID; a second rating replaces the first", async () => {
      const { user, sdk } = await tenant(g);
      const r = await sdk.responses.create({ model: "claude-haiku-4-5", input: "rate me twice" });
      await usageOf(g, r.id);
      const first = await rate(user.jwt, r.id, { rating: "down", comment: "too long", category: "format" });
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({
        request_id: uuidOf(r.id),
        response_id: r.id,
        rating: -1,
        comment: "too long",
        category: "format",
        model: "claude-haiku-4-5",
        provider: "anthropic",
      });
      expect(Date.parse(first.body.created_at)).toBeGreaterThan(Date.now() - 60_000);
      const second = await rate(user.jwt, uuidOf(r.id).toUpperCase(), { rating: 1 });
      expect(second.status).toBe(201);
      expect(second.body).toMatchObject({ request_id: uuidOf(r.id), rating: 1, comment: null, category: null });
      expect(second.body.created_at).toBe(first.body.created_at);
      expect(Date.parse(second.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(first.body.updated_at));
      const rows = await g.gw.deps.db.query<{ n: string | number }>(
        "select count(*) as n from response_feedback where request_id = $1",
        [uuidOf(r.id)],
      );
      expect(Number(rows[0]!.n)).toBe(1);
      const stored = await new FeedbackRepo(g.gw.deps.db).get(uuidOf(r.id), user.id);
      expect(stored).toMatchObject({ rating: 1, comment: null, model: "claude-haiku-4-5" });
    });

    test("a chat completion's id can be rated too (same request ids)", async () => {
      const { user, sdk } = await tenant(g);
      const c = await sdk.chat.completions.create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "chat then rate" }],
      });
      const res = await rate(user.jwt, c.id, { rating: 0 });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ rating: 0, model: "gpt-4o-mini" });
      expect(res.body.request_id.replace(/-/g, "")).toBe(c.id.slice("chatcmpl-".length));
    });

    test("not a UUID is 400 invalid_request; unknown or another user's request is 404", async () => {
      const owner = await tenant(g);
      const other = await tenant(g);
      const r = await owner.sdk.responses.create({ model: "gpt-4o-mini", input: "mine" });
      await usageOf(g, r.id);
      for (const bad of ["nope", "resp_123", "resp_" + "g".repeat(32), "12345678-1234-1234-1234-1234567890123"]) {
        const res = await rate(owner.user.jwt, bad, { rating: "up" });
        expect(res.status).toBe(400);
        expect(res.body.error.type).toBe("invalid_request");
      }
      const unknown = await rate(owner.user.jwt, crypto.randomUUID(), { rating: "up" });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.type).toBe("not_found");
      expect((await rate(other.user.jwt, r.id, { rating: "down" })).status).toBe(404);
      const rows = await g.gw.deps.db.query("select 1 from response_feedback where request_id = $1", [uuidOf(r.id)]);
      expect(rows).toHaveLength(0);
    });

    test("body rules are 422 with their loc", async () => {
      const { user, sdk } = await tenant(g);
      const r = await sdk.responses.create({ model: "gpt-4o-mini", input: "validate" });
      await usageOf(g, r.id);
      const cases: [unknown, string][] = [
        [{}, "rating"],
        [{ rating: "meh" }, "rating"],
        [{ rating: 2 }, "rating"],
        [{ rating: "up", comment: "x".repeat(2001) }, "comment"],
        [{ rating: "up", category: "Not A Tag" }, "category"],
      ];
      for (const [body, field] of cases) {
        const res = await rate(user.jwt, r.id, body);
        expect(res.status).toBe(422);
        expect(res.body.detail.map((d: any) => d.loc.join("."))).toContain(`body.${field}`);
      }
      expect((await rate(user.jwt, r.id, { rating: "up", comment: "x".repeat(2000) })).status).toBe(201);
    });

    test("the routing engine reads counts per model", async () => {
      const a = await tenant(g);
      const ids: string[] = [];
      for (const model of ["gemini-2.5-flash", "gemini-2.5-flash", "gemini-2.5-pro"])
        ids.push((await a.sdk.responses.create({ model, input: `summary ${model}` })).id);
      for (const id of ids) await usageOf(g, id);
      await rate(a.user.jwt, ids[0]!, { rating: "up" });
      await rate(a.user.jwt, ids[1]!, { rating: "down" });
      await rate(a.user.jwt, ids[2]!, { rating: "up" });
      const repo = new FeedbackRepo(g.gw.deps.db);
      const mine = await repo.byModel({ since: new Date(Date.now() - 60_000), userId: a.user.id });
      expect(mine).toEqual([
        { model: "gemini-2.5-flash", up: 1, neutral: 0, down: 1, total: 2 },
        { model: "gemini-2.5-pro", up: 1, neutral: 0, down: 0, total: 1 },
      ]);
      expect(await repo.byModel({ since: new Date(Date.now() + 60_000), userId: a.user.id })).toEqual([]);
    });
  });
}
