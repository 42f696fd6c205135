/**
 * The simulator answers in demo mode only. Outside it (and without `SIMULATOR=on`) a provider
 * without a credential is unavailable: routing skips it, a call that has no other provider is
 * refused with 503 `provider_not_configured` before any hold (streams too: a JSON error, no
 * SSE), nothing is charged or recorded, and `GET /v1/models` says what is available. A BYOK
 * key's own provider stays callable. `SIMULATOR=on` keeps the simulator, with a warning at start.
 *
 * Here an external simulator plays the configured vendors: Together (`TOGETHER_API_KEY` and
 * `TOGETHER_BASE_URL` point at it) and, for BYOK only, OpenAI's base URL (no credential).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway, type TestUser } from "../harness";
import { loadConfig, ConfigError } from "../../src/config";
import { startSimulator, type Simulator } from "../../src/sim";
import { captureLog } from "../support/capture-log";
import { chatFetch, fastUser, user } from "../support/chat";
import { createPolicy } from "./helpers";

setDefaultTimeout(60_000);

let ext: Simulator;
beforeAll(async () => {
  ext = await startSimulator();
});
afterAll(async () => {
  await ext?.stop();
});

/** Calls the external simulator received per provider (every path). */
function extCalls(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [p, routes] of Object.entries(ext.stats().calls))
    out[p] = Object.values(routes).reduce((a, b) => a + b, 0);
  return out;
}

/** Everything the database holds about an account's money: balance, held, holds, ledger, usage, jobs. */
async function moneyTrail(g: TestGateway, userId: string) {
  await g.gw.settlements.quiesce(userId);
  const q = async (sql: string) => Number((await g.gw.deps.db.query<{ n: string }>(sql, [userId]))[0]!.n);
  const u = (
    await g.gw.deps.db.query<{ b: string; h: string }>(
      "select balance_micro::text as b, held_micro::text as h from users where id = $1",
      [userId],
    )
  )[0]!;
  return {
    balance: u.b,
    held: u.h,
    holds: await q("select count(*)::text as n from holds where user_id = $1"),
    ledger: await q("select count(*)::text as n from ledger_entries where user_id = $1 and kind <> 'topup'"),
    usage: await q("select count(*)::text as n from usage_events where user_id = $1"),
    jobs: await q("select count(*)::text as n from video_jobs where user_id = $1"),
  };
}

/** The structured refusal: 503, `provider_not_configured`, not retryable, naming the providers. */
function expectNotConfigured(r: { status: number; body: any }, providers: string[]) {
  expect(r.status).toBe(503);
  expect(r.body.detail).toMatchObject({ error: "provider_not_configured", retryable: false });
  expect(typeof r.body.detail.message).toBe("string");
  expect(r.body.detail.providers).toEqual(providers);
}

describe("SIMULATOR in the configuration", () => {
  test("on/off/true/false/1/0; unset follows demo mode; anything else stops the start", () => {
    for (const v of ["on", "true", "1"])
      expect(loadConfig({ DATABASE_URL: "postgres://u@h/db", SIMULATOR: v }).simulator).toBe(true);
    for (const v of ["off", "false", "0"]) expect(loadConfig({ SIMULATOR: v }).simulator).toBe(false);
    expect(loadConfig({}).simulator).toBe(true); // demo mode
    expect(loadConfig({ DATABASE_URL: "postgres://u@h/db" }).simulator).toBe(false);
    expect(loadConfig({ DEMO_MODE: "false" }).simulator).toBe(false);
    expect(() => loadConfig({ SIMULATOR: "yes" })).toThrow(ConfigError);
    expect(() => loadConfig({ SIMULATOR: "yes" })).toThrow(/SIMULATOR/);
  });
});

describe("demo mode without SIMULATOR", () => {
  let g: TestGateway;
  beforeAll(async () => {
    // An empty value is unset: the harness's SIMULATOR=on does not apply.
    g = await startTestGateway({
      env: { DEMO_MODE: "true", SIMULATOR: "", VIDEO_POLL_WORKERS: "0", STATS_ROLLUP_INTERVAL_MS: "0" },
    });
  });
  afterAll(async () => {
    await g?.stop();
  });

  test("the simulator stands in for every provider without a credential, as before", async () => {
    expect(g.gw.deps.config.simulator).toBe(true);
    expect(g.gw.upstreams.simulated()).toEqual(expect.arrayContaining(["openai", "anthropic", "veo", "brave"]));
    const c = await fastUser(g, { creditKrw: 1000 });
    const k = (await g.newKey(c)).key;
    const r = await g.call("POST", "/v1/chat/completions", {
      token: k,
      body: { model: "gpt-4o-mini", messages: user("demo") },
    });
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content).toStartWith("Simulated reply from openai/");
  });
});

for (const kind of await dbKinds()) {
  describe(`outside demo mode without SIMULATOR on ${kind}`, () => {
    let g: TestGateway;
    let u: TestUser;
    let key: string;
    beforeAll(async () => {
      g = await startTestGateway({
        db: kind,
        env: {
          SIMULATOR: "off",
          VIDEO_POLL_WORKERS: "0",
          STATS_ROLLUP_INTERVAL_MS: "0",
          TOGETHER_API_KEY: "together-test-credential",
          TOGETHER_BASE_URL: ext.baseUrl("together"),
          // A base URL without a credential leaves OpenAI unavailable (BYOK keys still reach it here).
          OPENAI_BASE_URL: ext.baseUrl("openai"),
        },
      });
      u = await fastUser(g, { creditKrw: 1000 });
      key = (await g.newKey(u)).key;
    });
    afterAll(async () => {
      await g?.stop();
    });

    test("no simulator is started", () => {
      expect(g.gw.sim).toBeNull();
      expect(g.gw.upstreams.simulated()).toEqual([]);
    });

    test("chat to an unconfigured provider: 503 before any hold, nothing charged or recorded, no upstream call", async () => {
      const before = await moneyTrail(g, u.id);
      const calls = extCalls();
      const r = await g.call("POST", "/v1/chat/completions", {
        token: key,
        body: { model: "gpt-4o-mini", messages: user("hello") },
      });
      expectNotConfigured(r, ["openai"]);
      // A client-chosen request id holds first on the normal path: still refused before it.
      const named = await g.call("POST", "/v1/chat/completions", {
        token: key,
        body: { model: "claude-haiku-4-5", messages: user("hello") },
        headers: { "x-request-id": crypto.randomUUID() },
      });
      expectNotConfigured(named, ["anthropic"]);
      expect(await moneyTrail(g, u.id)).toEqual(before);
      expect(extCalls()).toEqual(calls);
    });

    test("a stream is refused with a JSON error before any SSE starts", async () => {
      const before = await moneyTrail(g, u.id);
      const res = await chatFetch(g, key, { model: "gemini-2.5-flash", messages: user("stream"), stream: true });
      expect(res.status).toBe(503);
      expect(res.headers.get("content-type")).toContain("application/json");
      expectNotConfigured({ status: res.status, body: await res.json() }, ["google"]);
      expect(await moneyTrail(g, u.id)).toEqual(before);
    });

    test("Responses (JSON and stream) likewise", async () => {
      const before = await moneyTrail(g, u.id);
      expectNotConfigured(
        await g.call("POST", "/v1/responses", { token: key, body: { model: "gpt-4o-mini", input: "hello" } }),
        ["openai"],
      );
      const res = await fetch(`${g.url}/v1/responses`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "claude-sonnet-4-5", input: "hello", stream: true }),
      });
      expect(res.headers.get("content-type")).toContain("application/json");
      expectNotConfigured({ status: res.status, body: await res.json() }, ["anthropic"]);
      expect(await moneyTrail(g, u.id)).toEqual(before);
    });

    test("video to an unconfigured vendor: 503, no job, no hold", async () => {
      const before = await moneyTrail(g, u.id);
      const r = await g.call("POST", "/v1/video/generations", {
        token: key,
        body: { model: "veo-3", prompt: "a paper boat", duration_seconds: 8 },
        headers: { "idempotency-key": crypto.randomUUID() },
      });
      expectNotConfigured(r, ["veo"]);
      expect(await moneyTrail(g, u.id)).toEqual(before);
      expect(extCalls().veo ?? 0).toBe(0);
    });

    test("a model with one configured provider is routed to it only", async () => {
      const c = await fastUser(g, { creditKrw: 1000 });
      // deepseek-v3: DeepSeek first in the catalog (unconfigured), then Together (configured, trains on data).
      await g.admin("PATCH", `/v1/admin/users/${c.id}`, { xborder_training_consent: true });
      const k = (await g.newKey(c)).key;
      const calls = extCalls();
      const r = await g.call("POST", "/v1/chat/completions", {
        token: k,
        body: { model: "deepseek-v3", messages: user("route me") },
      });
      expect(r.status).toBe(200);
      expect(r.body.provider).toBe("together");
      const s = await chatFetch(g, k, { model: "deepseek-v3", messages: user("stream me"), stream: true });
      expect(s.status).toBe(200);
      expect(await s.text()).toContain("[DONE]");
      const after = extCalls();
      expect(after.together! - (calls.together ?? 0)).toBe(2);
      expect(after.deepseek ?? 0).toBe(calls.deepseek ?? 0);
      const trail = await moneyTrail(g, c.id);
      expect(trail.usage).toBe(2);
      expect(BigInt(trail.balance)).toBeLessThan(1000_000_000n); // charged: a real provider answered
      expect(trail.held).toBe("0");
    });

    test("provider preferences naming only unconfigured providers: the same refusal", async () => {
      const c = await fastUser(g, { creditKrw: 1000 });
      await g.admin("PATCH", `/v1/admin/users/${c.id}`, { xborder_training_consent: true });
      const k = (await g.newKey(c)).key;
      const before = await moneyTrail(g, c.id);
      const only = await g.call("POST", "/v1/chat/completions", {
        token: k,
        body: { model: "deepseek-v3", messages: user("x"), provider: { only: ["deepseek"] } },
      });
      expectNotConfigured(only, ["deepseek"]);
      const order = await g.call("POST", "/v1/chat/completions", {
        token: k,
        body: { model: "deepseek-v3", messages: user("x"), provider: { order: ["deepseek"], allow_fallbacks: false } },
      });
      expectNotConfigured(order, ["deepseek"]);
      // Pinned to the unconfigured provider.
      expectNotConfigured(
        await g.call("POST", "/v1/chat/completions", {
          token: k,
          body: { model: "deepseek-v3@deepseek", messages: user("x") },
        }),
        ["deepseek"],
      );
      expect(await moneyTrail(g, c.id)).toEqual(before);
    });

    test("a routing policy naming only unconfigured models: the same refusal; a configured entry answers", async () => {
      const c = await fastUser(g, { creditKrw: 1000 });
      await g.admin("PATCH", `/v1/admin/users/${c.id}`, { xborder_training_consent: true });
      const k = (await g.newKey(c)).key;
      const dead = await createPolicy(g, c, {
        policy_type: "fallback",
        entries: [{ model: "gpt-4o-mini" }, { model: "claude-haiku-4-5" }],
      });
      const before = await moneyTrail(g, c.id);
      const r = await g.call("POST", "/v1/chat/completions", {
        token: k,
        body: { model: `orch/${dead.slug}`, messages: user("x") },
      });
      expect(r.status).toBe(503);
      expect(r.body.detail).toMatchObject({ error: "provider_not_configured", retryable: false });
      expect(await moneyTrail(g, c.id)).toEqual(before);
      const live = await createPolicy(g, c, {
        policy_type: "fallback",
        entries: [{ model: "gpt-4o-mini" }, { model: "deepseek-v3" }],
      });
      const ok = await g.call("POST", "/v1/chat/completions", {
        token: k,
        body: { model: `orch/${live.slug}`, messages: user("x") },
      });
      expect(ok.status).toBe(200);
      expect(ok.body.provider).toBe("together");
    });

    test("the web plugin without a configured search engine: 503 unless optional (then no search, no search charge)", async () => {
      const c = await fastUser(g, { creditKrw: 1000 });
      await g.admin("PATCH", `/v1/admin/users/${c.id}`, { xborder_training_consent: true });
      const k = (await g.newKey(c)).key;
      const before = await moneyTrail(g, c.id);
      const r = await g.call("POST", "/v1/chat/completions", {
        token: k,
        body: { model: "deepseek-v3", messages: user("news"), plugins: [{ id: "web" }] },
      });
      expectNotConfigured(r, ["brave"]);
      expect(await moneyTrail(g, c.id)).toEqual(before);
      const calls = extCalls();
      const opt = await g.call("POST", "/v1/chat/completions", {
        token: k,
        body: { model: "deepseek-v3", messages: user("news"), plugins: [{ id: "web", optional: true }] },
      });
      expect(opt.status).toBe(200);
      expect(opt.body.choices[0].message.annotations ?? []).toEqual([]);
      expect(extCalls().brave ?? 0).toBe(calls.brave ?? 0);
      // Tokens only: a whole-won charge of a short call is far below the 7 KRW search price.
      expect(opt.body.cost.krw).toBeLessThan(7);
    });

    test("the semantic response cache matches exactly when the embedding provider is unconfigured", async () => {
      const c = await fastUser(g, { creditKrw: 1000 });
      await g.admin("PATCH", `/v1/admin/users/${c.id}`, { xborder_training_consent: true });
      const k = (await g.newKey(c, { response_cache_mode: "semantic" })).key;
      const calls = extCalls();
      const first = await g.call("POST", "/v1/chat/completions", {
        token: k,
        body: { model: "deepseek-v3", messages: user("What is the capital of Korea?") },
      });
      expect(first.status).toBe(200);
      const again = await g.call("POST", "/v1/chat/completions", {
        token: k,
        body: { model: "deepseek-v3", messages: user("What is the capital of Korea?") },
      });
      expect(again.status).toBe(200);
      expect(again.body.cached).toBe(true);
      // No embedding went anywhere: OpenAI (the embedding model's provider) has no credential.
      expect(extCalls().openai ?? 0).toBe(calls.openai ?? 0);
    });

    test("GET /v1/models marks what this deployment can call", async () => {
      const r = await g.call("GET", "/v1/models");
      expect(r.status).toBe(200);
      const byId = new Map<string, any>(r.body.data.map((m: any) => [m.id, m]));
      expect(byId.get("gpt-4o-mini")).toMatchObject({
        available: false,
        providers: [{ id: "openai", available: false }],
      });
      expect(byId.get("deepseek-v3")).toMatchObject({
        available: true,
        providers: [
          { id: "deepseek", available: false },
          { id: "together", available: true },
        ],
      });
      expect(byId.get("veo-3")).toMatchObject({ available: false, providers: [{ id: "veo", available: false }] });
      expect(byId.get("text-embedding-3-small").available).toBe(false);
      // Routing parents: available when some candidate is (deepseek-v3 is one of benchmark_smart's).
      expect(byId.get("benchmark_smart").available).toBe(true);
      expect(byId.get("perfect").available).toBe(false);
      const one = await g.call("GET", "/v1/models/llama-3.3-70b");
      expect(one.body).toMatchObject({
        available: true,
        providers: [
          { id: "together", available: true },
          { id: "groq", available: false },
        ],
      });
    });

    test("a BYOK key's own provider stays callable without an operator credential (and is not charged)", async () => {
      const c = await fastUser(g, { creditKrw: 1000 });
      const b = await g.admin("POST", `/v1/admin/users/${c.id}/byok-keys`, {
        provider: "openai",
        provider_api_key: "sk-own-credential",
      });
      expect(b.status).toBe(201);
      const before = await moneyTrail(g, c.id);
      const calls = extCalls();
      const r = await g.call("POST", "/v1/chat/completions", {
        token: b.body.key,
        body: { model: "gpt-4o-mini", messages: user("my own key") },
      });
      expect(r.status).toBe(200);
      expect(r.body.provider).toBe("openai");
      const s = await chatFetch(g, b.body.key, {
        model: "gpt-4o-mini",
        messages: user("my own key, streamed"),
        stream: true,
      });
      expect(s.status).toBe(200);
      expect(await s.text()).toContain("[DONE]");
      expect(extCalls().openai! - (calls.openai ?? 0)).toBe(2);
      const after = await moneyTrail(g, c.id);
      expect(after.balance).toBe(before.balance);
      expect(after.held).toBe("0");
    });
  });

  describe(`SIMULATOR=on outside demo mode on ${kind}`, () => {
    let g: TestGateway;
    let logs = "";
    beforeAll(async () => {
      logs = await captureLog(async () => {
        g = await startTestGateway({
          db: kind,
          env: {
            SIMULATOR: "on",
            VIDEO_POLL_WORKERS: "0",
            STATS_ROLLUP_INTERVAL_MS: "0",
            TOGETHER_API_KEY: "together-test-credential",
            TOGETHER_BASE_URL: ext.baseUrl("together"),
          },
        });
      });
    });
    afterAll(async () => {
      await g?.stop();
    });

    test("the start warns, naming the simulated providers (not the configured one)", () => {
      const line = logs
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .find((l) => l.level === "warn" && String(l.msg).startsWith("SIMULATOR=on"));
      expect(line).toBeDefined();
      expect(line.simulated).toEqual(
        expect.arrayContaining(["openai", "anthropic", "google", "deepseek", "groq", "veo", "brave"]),
      );
      expect(line.simulated).not.toContain("together");
    });

    test("the same calls are served (and charged) by the simulator", async () => {
      const c = await fastUser(g, { creditKrw: 100_000 });
      const k = (await g.newKey(c)).key;
      const r = await g.call("POST", "/v1/chat/completions", {
        token: k,
        body: { model: "gpt-4o-mini", messages: user("hello") },
      });
      expect(r.status).toBe(200);
      const s = await chatFetch(g, k, { model: "gemini-2.5-flash", messages: user("stream"), stream: true });
      expect(s.status).toBe(200);
      expect(await s.text()).toContain("[DONE]");
      expect(
        (await g.call("POST", "/v1/responses", { token: k, body: { model: "gpt-4o-mini", input: "hello" } })).status,
      ).toBe(200);
      const v = await g.call("POST", "/v1/video/generations", {
        token: k,
        body: { model: "veo-3", prompt: "a paper boat", duration_seconds: 8 },
      });
      expect(v.status).toBe(202);
      const trail = await moneyTrail(g, c.id);
      expect(trail.usage).toBe(3);
      expect(trail.jobs).toBe(1);
      const models = await g.call("GET", "/v1/models");
      expect(models.body.data.every((m: any) => m.available === true)).toBe(true);
    });
  });
}
