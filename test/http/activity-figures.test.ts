/**
 * Issue 31 C and E over HTTP, on PGlite and PostgreSQL: `/v1/activity/summary`'s month and
 * per-key figures count a deleted key's calls and equal the ledger's charges; `/v1/activity`
 * finds a call by its request id (a malformed one is 422); `/v1/generations/{id}` carries the
 * attempt trail of a retried call, and `null` for a call answered at the first try.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway, type TestUser } from "../harness";
import { fastUser } from "../support/http";

setDefaultTimeout(30_000);

const chat = (g: TestGateway, key: string, content = "hi") =>
  g.call("POST", "/v1/chat/completions", {
    token: key,
    body: { model: "gpt-4o-mini", messages: [{ role: "user", content }], max_tokens: 8 },
  });

for (const kind of await dbKinds()) {
  describe(`activity figures on ${kind}`, () => {
    let g: TestGateway;
    let u: TestUser;
    let kept: any;
    let gone: any;
    let plain: string;
    let retried: string;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind });
      u = await fastUser(g, { creditKrw: 10_000 });
      kept = await g.newKey(u, { name: "kept" });
      gone = await g.newKey(u, { name: "gone" });
      plain = (await chat(g, kept.key)).headers.get("x-request-id")!;
      const r = await chat(g, gone.key, "flaky [sim:fail=503x2]");
      expect(r.status).toBe(200);
      retried = r.headers.get("x-request-id")!;
      await chat(g, gone.key);
      await g.gw.settlements.quiesce();
      expect((await g.call("DELETE", `/v1/keys/${gone.id}`, { token: u.jwt })).status).toBe(200);
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("the month's spend and requests count the deleted key, and equal the ledger", async () => {
      const r = await g.call("GET", "/v1/activity/summary", { token: u.jwt });
      expect(r.status).toBe(200);
      const [{ charged }] = await g.gw.deps.db.query<{ charged: string }>(
        "select (-sum(amount_micro))::text as charged from ledger_entries where user_id = $1 and kind = 'charge'",
        [u.id],
      );
      expect(r.body.month.requests).toBe(3);
      expect(r.body.month.cost_krw).toBe(Number(charged) / 1e6);
      const byKey = Object.fromEntries(r.body.month.by_key.map((k: any) => [k.name, k]));
      expect(byKey.gone).toMatchObject({ key_id: gone.id, deleted: true, requests: 2 });
      expect(byKey.kept).toMatchObject({ key_id: kept.id, deleted: false, requests: 1 });
      expect(r.body.first_activity).toBe(new Date().toISOString().slice(0, 10));
      expect(r.body.latency_by_modality.map((x: any) => x.modality)).toEqual(["text"]);
    });

    test("a request id finds its one call; a malformed one is 422", async () => {
      const r = await g.call("GET", `/v1/activity?request_id=${retried}`, { token: u.jwt });
      expect(r.body.data.map((x: any) => x.request_id)).toEqual([retried]);
      const bad = await g.call("GET", "/v1/activity?request_id=nope", { token: u.jwt });
      expect(bad.status).toBe(422);
    });

    test("the generation carries a retried call's attempts, and null for a first-try answer", async () => {
      const r = await g.call("GET", `/v1/generations/${retried}`, { token: u.jwt });
      expect(r.body.data.attempts.map((a: any) => [a.provider, a.outcome, a.status])).toEqual([
        ["openai", "retry", 503],
        ["openai", "retry", 503],
        ["openai", "ok", null],
      ]);
      for (const a of r.body.data.attempts) expect(a.ms).toBeGreaterThanOrEqual(0);
      const p = await g.call("GET", `/v1/generations/${plain}`, { token: u.jwt });
      expect(p.body.data.attempts).toBeNull();
      // Another account never reads the trail: the request itself is 404 to it.
      const other = await fastUser(g, { creditKrw: 10 });
      expect((await g.call("GET", `/v1/generations/${retried}`, { token: other.jwt })).status).toBe(404);
    });
  });
}
