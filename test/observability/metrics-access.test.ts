/**
 * Issue 28 #10: /metrics was public and showed one account's exact tokens and KRW per model.
 * It now takes a bearer token (METRICS_TOKEN, or the admin token when that is unset; 404 with
 * neither), and no
 * series names an account, key or user, or splits money or tokens by model or provider: an
 * account that is the only caller of a model cannot have its figures read off /metrics.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from "../harness";

const METRICS_TOKEN = "metrics-scraper-token-0123456789";

async function chat(g: TestGateway, key: string, model: string) {
  const r = await g.call("POST", "/v1/chat/completions", {
    token: key,
    body: { model, messages: [{ role: "user", content: `metrics privacy ${crypto.randomUUID()}` }] },
  });
  expect(r.status).toBe(200);
}

describe("who may read /metrics", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({ env: { METRICS_TOKEN } });
  }, 60_000);
  afterAll(() => g?.stop());

  const scrape = (token?: string) =>
    fetch(`${g.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

  test("no token or a wrong one is 401; METRICS_TOKEN is 200; the admin token is not the scraper's", async () => {
    const none = await scrape();
    expect(none.status).toBe(401);
    expect(((await none.json()) as any).detail.error).toBe("unauthorized");
    expect((await scrape("not-the-metrics-token")).status).toBe(401);
    expect((await scrape(ADMIN_TOKEN)).status).toBe(401);
    const ok = await scrape(METRICS_TOKEN);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("# TYPE gateway_http_requests_total counter");
  });

  test("the only caller of a model: its ids, and its tokens and KRW for that model, are nowhere in /metrics", async () => {
    const alone = await g.newUser({ creditKrw: 10_000 });
    const aloneKey = await g.newKey(alone);
    const crowd = await g.newUser({ creditKrw: 10_000 });
    const crowdKey = await g.newKey(crowd);
    await chat(g, aloneKey.key, "claude-haiku-4-5");
    await chat(g, aloneKey.key, "claude-haiku-4-5");
    await chat(g, crowdKey.key, "gpt-4o-mini");
    await Bun.sleep(100);
    const text = await (await scrape(METRICS_TOKEN)).text();
    const [mine] = await g.gw.deps.db.query<{ p: string; c: string; cost: string }>(
      "select sum(prompt_tokens) as p, sum(completion_tokens) as c, sum(cost_micro) as cost from usage_events where user_id = $1",
      [alone.id],
    );
    expect(Number(mine!.cost)).toBeGreaterThan(0);
    for (const id of [alone.id, aloneKey.id, crowd.id, crowdKey.id, alone.email]) expect(text).not.toContain(id);
    const samples = text.split("\n").filter((l) => l && !l.startsWith("#"));
    // No label of any series names an account, key, user or organization.
    for (const l of samples) expect(l).not.toMatch(/(account|key|user|org)(_id)?="/);
    // Money and tokens are process totals: no series of theirs names the model or provider.
    const money = samples.filter((l) => /^gateway_(tokens|cost_krw)_total/.test(l));
    expect(money.length).toBeGreaterThan(0);
    for (const l of money) expect(l).not.toMatch(/model=|provider=/);
    // Its exact figures are no sample's value (the totals include the other account's call).
    const values = new Set(money.map((l) => Number(l.slice(l.lastIndexOf(" ") + 1))));
    expect(values.has(Number(mine!.cost) / 1e6)).toBe(false);
    expect(values.has(Number(mine!.p))).toBe(false);
    expect(values.has(Number(mine!.c))).toBe(false);
  });
});

describe("/metrics without METRICS_TOKEN", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway();
  }, 60_000);
  afterAll(() => g?.stop());

  test("takes the admin token; nothing else", async () => {
    expect((await fetch(`${g.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${g.url}/metrics`, { headers: { authorization: "Bearer sk-gw-nope" } })).status).toBe(401);
    expect(await g.metrics()).toContain("process_resident_memory_bytes");
  });
});

describe("/metrics with neither token configured", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({ env: { ADMIN_TOKEN: "" } }); // empty is unset
  }, 60_000);
  afterAll(() => g?.stop());

  test("does not exist: 404 with any token", async () => {
    for (const headers of [{}, { authorization: `Bearer ${ADMIN_TOKEN}` }] as Record<string, string>[]) {
      const r = await fetch(`${g.url}/metrics`, { headers });
      expect(r.status).toBe(404);
      expect(((await r.json()) as any).error.type).toBe("not_found");
    }
  });
});
