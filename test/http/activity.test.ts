/**
 * GET /v1/activity, /v1/activity/summary and /v1/generations/{id}: the account's calls, read
 * back with their cost as the ledger charged it, page by page, filtered, and never another
 * tenant's or (for an API key) another key's.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway, type TestUser } from "../harness";
import { fastUser } from "../support/http";

setDefaultTimeout(30_000);

const chat = (g: TestGateway, key: string, model = "gpt-4o-mini", extra: Record<string, string> = {}) =>
  g.call("POST", "/v1/chat/completions", {
    token: key,
    headers: extra,
    body: { model, messages: [{ role: "user", content: "hi" }], max_tokens: 8 },
  });

for (const kind of await dbKinds()) {
  describe(`activity on ${kind}`, () => {
    let g: TestGateway;
    let u: TestUser;
    let other: TestUser;
    let a: any;
    let b: any;
    const ids: string[] = [];
    beforeAll(async () => {
      g = await startTestGateway({ db: kind });
      u = await fastUser(g, { creditKrw: 10_000 });
      other = await fastUser(g, { creditKrw: 1_000 });
      a = await g.newKey(u, { name: "a", scopes: ["chat", "usage:read"] });
      b = await g.newKey(u, { name: "b", scopes: ["chat", "usage:read"] });
      for (let i = 0; i < 5; i++)
        ids.push((await chat(g, a.key, "gpt-4o-mini", { "x-title": "app-a" })).headers.get("x-request-id")!);
      for (let i = 0; i < 2; i++) ids.push((await chat(g, b.key, "claude-haiku-4-5")).headers.get("x-request-id")!);
      const o = await g.newKey(other, { scopes: ["chat", "usage:read"] });
      await chat(g, o.key);
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("the dashboard lists every call newest first with the ledger's charge", async () => {
      const r = await g.call("GET", "/v1/activity", { token: u.jwt });
      expect(r.status).toBe(200);
      expect(r.body.data.map((x: any) => x.request_id)).toEqual([...ids].reverse());
      const charges = await g.gw.deps.db.query<{ request_id: string; amount_micro: string }>(
        "select request_id, amount_micro::text from ledger_entries where user_id = $1 and kind = 'charge'",
        [u.id],
      );
      expect(charges.length).toBe(7);
      for (const c of charges) {
        const item = r.body.data.find((x: any) => x.request_id === c.request_id);
        expect(item.cost_krw).toBe(-Number(c.amount_micro) / 1e6);
        expect(item.cost_krw).toBeGreaterThan(0);
      }
      const first = r.body.data[6];
      expect(first).toMatchObject({ key_id: a.id, model: "gpt-4o-mini", app: "app-a", status: 200, cache_hit: false });
      expect(first.prompt_tokens).toBeGreaterThan(0);
      expect(first.completion_tokens).toBeGreaterThan(0);
      expect(first.latency_ms).toBeGreaterThanOrEqual(0);
      expect(r.body.has_more).toBe(false);
      expect(r.body.next_cursor).toBeNull();
    });

    test("pages of 2 cover every call once, in order", async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const r: any = await g.call("GET", `/v1/activity?limit=2${cursor ? `&cursor=${cursor}` : ""}`, {
          token: u.jwt,
        });
        expect(r.status).toBe(200);
        seen.push(...r.body.data.map((x: any) => x.request_id));
        cursor = r.body.next_cursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(4);
      expect(seen).toEqual([...ids].reverse());
    });

    test("filters by key, model, status and date", async () => {
      const get = async (q: string) => (await g.call("GET", `/v1/activity?${q}`, { token: u.jwt })).body.data.length;
      expect(await get(`key_id=${b.id}`)).toBe(2);
      expect(await get("model=gpt-4o-mini")).toBe(5);
      expect(await get("status=success")).toBe(7);
      expect(await get("status=error")).toBe(0);
      expect(await get("status=200")).toBe(7);
      const today = new Date().toISOString().slice(0, 10);
      expect(await get(`from=${today}&to=${today}`)).toBe(7);
      expect(await get("to=2020-01-01")).toBe(0);
    });

    test("bad query fields are a 422 naming each, before anything is read", async () => {
      const r = await g.call("GET", "/v1/activity?limit=0&cursor=nope&status=abc&key_id=1&from=yesterday", {
        token: u.jwt,
      });
      expect(r.status).toBe(422);
      expect(r.body.detail.map((x: any) => x.loc[1]).sort()).toEqual(["cursor", "from", "key_id", "limit", "status"]);
      expect((await g.call("GET", "/v1/activity?limit=201", { token: u.jwt })).status).toBe(422);
      expect((await g.call("GET", "/v1/activity?limit=1&limit=2", { token: u.jwt })).status).toBe(422);
      expect((await g.call("GET", "/v1/activity")).status).toBe(401);
    });

    test("an API key with usage:read sees only its own calls; without it, 403", async () => {
      const r = await g.call("GET", "/v1/activity", { token: b.key });
      expect(r.status).toBe(200);
      expect(r.body.data.map((x: any) => x.request_id)).toEqual(ids.slice(5).reverse());
      expect((await g.call("GET", `/v1/activity?key_id=${a.id}`, { token: b.key })).body.data).toEqual([]);
      expect((await g.call("GET", `/v1/generations/${ids[0]}`, { token: b.key })).status).toBe(404);
      expect((await g.call("GET", `/v1/generations/${ids[6]}`, { token: b.key })).status).toBe(200);
      const chatOnly = await g.newKey(u, { scopes: ["chat"] });
      const refused = await g.call("GET", "/v1/activity", { token: chatOnly.key });
      expect(refused.status).toBe(403);
      expect(refused.body.detail.error).toBe("scope_required");
    });

    test("a generation reads as OpenRouter's; another account's request id is 404", async () => {
      const r = await g.call("GET", `/v1/generations/${ids[0]}`, { token: u.jwt });
      expect(r.status).toBe(200);
      expect(r.body.data).toMatchObject({
        id: ids[0],
        model: "gpt-4o-mini",
        api_key_id: a.id,
        status: 200,
        app: "app-a",
      });
      expect(r.body.data.total_cost_krw).toBeGreaterThan(0);
      expect(r.body.data.total_cost).toBeCloseTo(r.body.data.total_cost_krw / 1400, 8);
      expect((await g.call("GET", `/v1/generations/${ids[0]}`, { token: other.jwt })).status).toBe(404);
      expect((await g.call("GET", `/v1/activity`, { token: other.jwt })).body.data.length).toBe(1);
      const bad = await g.call("GET", "/v1/generations/not-a-uuid", { token: u.jwt });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe("invalid_request");
    });

    test("the summary adds up the days by model, status and provider", async () => {
      const r = await g.call("GET", "/v1/activity/summary?days=7", { token: u.jwt });
      expect(r.status).toBe(200);
      expect(r.body.totals.requests).toBe(7);
      const list = (await g.call("GET", "/v1/activity", { token: u.jwt })).body.data;
      const sum = list.reduce((s: number, x: any) => s + x.cost_krw, 0);
      expect(r.body.totals.cost_krw).toBeCloseTo(sum, 6);
      expect(r.body.by_model.map((x: any) => [x.model, x.requests]).sort()).toEqual([
        ["claude-haiku-4-5", 2],
        ["gpt-4o-mini", 5],
      ]);
      expect(r.body.by_status).toEqual([{ date: new Date().toISOString().slice(0, 10), status: 200, requests: 7 }]);
      expect(r.body.latency.length).toBe(2);
      for (const l of r.body.latency) expect(l.p95_ms).toBeGreaterThanOrEqual(l.p50_ms);
      expect((await g.call("GET", "/v1/activity/summary?days=91", { token: u.jwt })).status).toBe(422);
      expect((await g.call("GET", "/v1/activity/summary", { token: a.key })).status).toBe(401);
    });
  });
}

describe("activity names the API, the stream, its first token and a failure's code", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway();
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  test("chat JSON and stream, Responses, and an upstream failure each recorded as such", async () => {
    const u = await fastUser(g, { creditKrw: 10_000 });
    const key = (await g.newKey(u)).key;
    const id = async (r: Promise<{ headers: Headers }>) => (await r).headers.get("x-request-id")!;
    const plain = await id(chat(g, key));
    const streamRes = await fetch(g.url + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-4o-mini",
        stream: true,
        messages: [{ role: "user", content: "stream it" }],
        max_tokens: 8,
      }),
    });
    await streamRes.text();
    const streamed = streamRes.headers.get("x-request-id")!;
    const responses = await id(
      g.call("POST", "/v1/responses", {
        token: key,
        body: { model: "gpt-4o-mini", input: "hi", max_output_tokens: 16 },
      }),
    );
    const failed = await id(
      g.call("POST", "/v1/chat/completions", {
        token: key,
        body: { model: "gpt-4o-mini", messages: [{ role: "user", content: "down [sim:fail=503]" }], max_tokens: 8 },
      }),
    );
    await g.gw.settlements.quiesce();
    const items = (await g.call("GET", "/v1/activity", { token: u.jwt })).body.data;
    const by = (rid: string) => items.find((x: any) => x.request_id === rid);
    expect(by(plain)).toMatchObject({ api: "chat", streamed: false, ttft_ms: null, error_code: null, status: 200 });
    expect(by(streamed)).toMatchObject({ api: "chat", streamed: true, error_code: null, status: 200 });
    expect(by(streamed).ttft_ms).toBeGreaterThanOrEqual(0);
    expect(by(streamed).ttft_ms).toBeLessThanOrEqual(by(streamed).latency_ms);
    expect(by(responses)).toMatchObject({ api: "responses", status: 200 });
    expect(by(failed)).toMatchObject({ api: "chat", status: 502, error_code: "upstream_unavailable", cost_krw: 0 });
    const gen = (await g.call("GET", `/v1/generations/${streamed}`, { token: u.jwt })).body.data;
    expect(gen).toMatchObject({ streamed: true, api: "chat", error_code: null });
    expect(gen.time_to_first_token).toBe(by(streamed).ttft_ms);
  });
});
