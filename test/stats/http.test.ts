/**
 * The statistics and usage-report endpoints over HTTP: real chat calls through the OpenAI SDK
 * (with X-Title / HTTP-Referer), the gateway's own rollup job, public caching, 422s with
 * `loc`, and the usage report's scopes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { loadConfig } from "../../src/config";
import { statsSettings } from "../../src/jobs/stats-rollup";
import { microToKrw } from "../../src/lib/money";
import { fastUser } from "../support/chat";

const APP = `stats-e2e-${crypto.randomUUID().slice(0, 8)}`;
const MODEL = "gpt-4o-mini";

describe("statistics settings", () => {
  test("threshold 3 (accounts a week old, noise on), rollups every 5 s and 10 s caching in production; 1, 1 s and 2 s in demo mode", () => {
    expect(statsSettings(loadConfig({ DEMO_MODE: "false" }))).toEqual({
      minAccounts: 3,
      minAccountAgeHours: 168,
      noise: true,
      intervalMs: 5000,
      maxAgeSeconds: 10,
    });
    expect(statsSettings(loadConfig({ DEMO_MODE: "true" }))).toEqual({
      minAccounts: 1,
      minAccountAgeHours: 0,
      noise: false,
      intervalMs: 1000,
      maxAgeSeconds: 2,
    });
    expect(
      statsSettings(
        loadConfig({ DEMO_MODE: "false", STATS_MIN_DISTINCT_ACCOUNTS: "5", STATS_ROLLUP_INTERVAL_MS: "0" }),
      ),
    ).toEqual({ minAccounts: 5, minAccountAgeHours: 168, noise: true, intervalMs: 0, maxAgeSeconds: 10 });
    expect(
      statsSettings(loadConfig({ DEMO_MODE: "false", STATS_MIN_ACCOUNT_AGE_HOURS: "0", STATS_NOISE: "off" })),
    ).toEqual({ minAccounts: 3, minAccountAgeHours: 0, noise: false, intervalMs: 5000, maxAgeSeconds: 10 });
  });
});

describe("stats and usage report over HTTP", () => {
  let g: TestGateway;
  let owner: TestUser;
  let key: any;
  const usage = { prompt: 0, completion: 0, calls: 0 };

  beforeAll(async () => {
    g = await startTestGateway({ env: { STATS_MIN_DISTINCT_ACCOUNTS: "1", STATS_ROLLUP_INTERVAL_MS: "100" } });
    owner = await g.newUser({ creditKrw: 1000 });
    key = await g.newKey(owner);
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  test("chat calls reach the public statistics through the gateway's own rollup job", async () => {
    const client = new OpenAI({ apiKey: key.key, baseURL: g.url + "/v1", maxRetries: 0 });
    for (const headers of [
      { "X-Title": APP },
      { "X-Title": APP },
      { "HTTP-Referer": "https://referer-app.example/page" },
    ]) {
      const r = await client.chat.completions.create(
        { model: MODEL, messages: [{ role: "user", content: "hello stats" }] },
        { headers },
      );
      usage.prompt += r.usage!.prompt_tokens;
      usage.completion += r.usage!.completion_tokens;
      usage.calls++;
    }
    const failed = await client.chat.completions
      .create(
        { model: MODEL, messages: [{ role: "user", content: "down [sim:fail=503]" }] },
        { headers: { "X-Title": APP } },
      )
      .catch((e) => e);
    expect(failed.status).toBe(502);

    // The job runs every 100 ms here; the rollups follow within a few runs.
    let models: any;
    const deadline = Date.now() + 10_000;
    do {
      models = await g.call("GET", "/v1/stats/models");
      if (models.body.total_calls === 4) break;
      await Bun.sleep(100);
    } while (Date.now() < deadline);
    expect(models.status).toBe(200);
    expect(models.headers.get("cache-control")).toBe("public, max-age=10");
    expect(models.body.period).toBe("daily");
    expect(Number.isNaN(Date.parse(models.body.generated_at))).toBe(false);
    expect(models.body.total_calls).toBe(4);
    expect(models.body.top_models).toEqual([{ model: MODEL, calls: 4 }]);

    const rankings = await g.call("GET", "/v1/stats/rankings");
    expect(rankings.body.period).toBe("weekly");
    expect(rankings.body.leaderboard).toEqual([
      {
        rank: 1,
        model: MODEL,
        provider: "openai",
        maker: expect.any(String),
        tokens: usage.prompt + usage.completion,
        calls: 3,
        trend_pct: null,
      },
    ]);
    expect(rankings.body.market_share).toEqual([
      { provider: "openai", tokens: usage.prompt + usage.completion, share_pct: 100 },
    ]);

    const apps = await g.call("GET", "/v1/stats/apps?period=daily");
    expect(apps.body.apps.map((a: any) => [a.app, a.calls])).toEqual([
      [APP, 2],
      ["referer-app.example", 1],
    ]);

    const ts = await g.call("GET", "/v1/stats/usage-timeseries?range=12w&granularity=week&top=1");
    expect(ts.status).toBe(200);
    expect(ts.body.series).toEqual([MODEL]);
    expect(ts.body.points.length).toBe(12);
    expect(ts.body.points.at(-1).total).toBe(usage.prompt + usage.completion);
    expect(ts.body.total_tokens).toBe(usage.prompt + usage.completion);
  }, 30_000);

  test("invalid query values: 422 naming the field", async () => {
    const cases: [string, string][] = [
      ["/v1/stats/models?period=yearly", "period"],
      ["/v1/stats/rankings?period=", "period"],
      ["/v1/stats/apps?period=DAILY", "period"],
      ["/v1/stats/usage-timeseries?range=7d", "range"],
      ["/v1/stats/usage-timeseries?granularity=month", "granularity"],
      ["/v1/stats/usage-timeseries?top=0", "top"],
      ["/v1/stats/usage-timeseries?top=21", "top"],
      ["/v1/stats/usage-timeseries?top=abc", "top"],
      ["/v1/stats/usage-timeseries?top=2.5", "top"],
    ];
    for (const [path, field] of cases) {
      const r = await g.call("GET", path);
      expect([path, r.status]).toEqual([path, 422]);
      expect(r.body.detail.map((d: any) => d.loc)).toEqual([["query", field]]);
    }
    const two = await g.call("GET", "/v1/stats/usage-timeseries?range=1y&top=99");
    expect(two.body.detail.map((d: any) => d.loc)).toEqual([
      ["query", "range"],
      ["query", "top"],
    ]);
    for (const top of ["1", "20"])
      expect((await g.call("GET", `/v1/stats/usage-timeseries?top=${top}`)).status).toBe(200);
  }, 30_000);

  test("usage report: usage:read keys only; chat-only and legacy (null scopes) keys 403; JWT and no key 401", async () => {
    const readOnly = await g.newKey(owner, { scopes: ["usage:read"] });
    const chatOnly = await g.newKey(owner, { scopes: ["chat"] });
    const both = await g.newKey(owner, { scopes: ["chat", "usage:read"] });
    // A legacy key is "model calls only" in the specification: it cannot read the account's usage.
    expect(key.scopes ?? null).toBeNull();
    for (const k of [chatOnly, key]) {
      const r = await g.call("GET", "/v1/usage/report", { token: k.key });
      expect(r.status).toBe(403);
      expect(r.body.detail.error).toBe("scope_required");
    }
    expect((await g.call("GET", "/v1/usage/report")).status).toBe(401);
    expect((await g.call("GET", "/v1/usage/report", { token: owner.jwt })).status).toBe(401);

    const today = new Date().toISOString().slice(0, 10);
    for (const k of [readOnly, both]) {
      const r = await g.call("GET", "/v1/usage/report", { token: k.key });
      expect(r.status).toBe(200);
      expect(r.headers.get("cache-control")).toBe("private, no-store");
      expect(r.body.to).toBe(today);
      expect(r.body.data.length).toBe(1);
    }
    const r = await g.call("GET", `/v1/usage/report?from=${today}&to=${today}`, { token: readOnly.key });
    const cost = await g.gw.deps.db.query<{ c: string }>(
      "select sum(cost_micro)::text as c from usage_events where user_id = $1",
      [owner.id],
    );
    expect(r.body).toEqual({
      object: "usage_report",
      from: today,
      to: today,
      currency: "KRW",
      generated_at: expect.any(String),
      data: [
        {
          date: today,
          model: MODEL,
          requests: 4,
          failed_requests: 1,
          cache_hits: 0,
          prompt_tokens: usage.prompt,
          completion_tokens: usage.completion,
          total_tokens: usage.prompt + usage.completion,
          cost_krw: microToKrw(BigInt(cost[0]!.c)),
        },
      ],
      totals: {
        requests: 4,
        failed_requests: 1,
        cache_hits: 0,
        prompt_tokens: usage.prompt,
        completion_tokens: usage.completion,
        total_tokens: usage.prompt + usage.completion,
        cost_krw: microToKrw(BigInt(cost[0]!.c)),
      },
    });
    expect(r.body.data[0].cost_krw).toBeGreaterThan(0);
    expect(Number.isInteger(r.body.data[0].cost_krw * 1e6)).toBe(true);

    // Another account sees only its own (empty) usage.
    const stranger = await fastUser(g);
    const theirs = await g.call("GET", "/v1/usage/report", {
      token: (await g.newKey(stranger, { scopes: ["usage:read"] })).key,
    });
    expect(theirs.body.data).toEqual([]);
    expect(theirs.body.totals.requests).toBe(0);
  }, 30_000);

  test("usage report dates: 422 with loc for bad dates, reversed or too long ranges", async () => {
    const k = (await g.newKey(owner, { scopes: ["usage:read"] })).key;
    const cases: [string, string][] = [
      ["from=2026-02-30", "from"],
      ["to=yesterday", "to"],
      ["from=2026-03-05&to=2026-03-04", "from"],
      ["from=2024-01-01&to=2025-12-31", "from"],
    ];
    for (const [q, field] of cases) {
      const r = await g.call("GET", `/v1/usage/report?${q}`, { token: k });
      expect([q, r.status]).toEqual([q, 422]);
      expect(r.body.detail[0].loc).toEqual(["query", field]);
    }
    const ok = await g.call("GET", "/v1/usage/report?from=2025-01-01&to=2026-01-01", { token: k });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ from: "2025-01-01", to: "2026-01-01", data: [] });
  }, 30_000);
});
