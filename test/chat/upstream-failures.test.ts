/**
 * The retry and fallback loop, counted at the simulator: 2 retries per provider on transient
 * failures, then the next provider; rate limits skip a provider at once and, when every one
 * is saturated, give 429 with Retry-After; rejections stop at the first call. A failed call
 * releases its whole hold.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { chat, chatFetch, errorCode, money, parseSse, simChatCalls, tenant, usageOf, user } from "../support/chat";

// Real servers and databases on a shared machine: generous per-test deadlines.
setDefaultTimeout(20_000);

let g: TestGateway;
let slow: TestGateway;
beforeAll(async () => {
  [g, slow] = await Promise.all([
    startTestGateway(),
    startTestGateway({ env: { UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "200", UPSTREAM_IDLE_TIMEOUT_MS: "300" } }),
  ]);
}, 60_000);
afterAll(async () => {
  await g?.stop();
  await slow?.stop();
});

const consent = (gw: TestGateway, userId: string) =>
  gw.admin("PATCH", `/v1/admin/users/${userId}`, { xborder_training_consent: true });

describe("retries", () => {
  for (const [model, provider] of [
    ["gpt-4o-mini", "openai"],
    ["claude-haiku-4-5", "anthropic"],
    ["gemini-2.5-flash", "google"],
  ] as const) {
    test(`${model}: two transient failures, then success on the third call`, async () => {
      const { sdk: c } = await tenant(g);
      g.gw.sim!.reset();
      const r: any = await c.chat.completions.create({ model, messages: user("flaky [sim:fail=503x2]") });
      expect(r.provider).toBe(provider);
      expect(r.choices[0].message.content).toContain("Simulated reply");
      expect(simChatCalls(g)).toEqual({ [provider]: 3 });
    });
  }

  test("500, 502 and 529 are transient too", async () => {
    const { key } = await tenant(g);
    for (const status of [500, 502, 529]) {
      g.gw.sim!.reset();
      const r = await chat(g, key.key, {
        model: "claude-haiku-4-5",
        messages: user(`flaky ${status} [sim:fail=${status}x2]`),
      });
      expect([status, r.status]).toEqual([status, 200]);
      expect(simChatCalls(g)).toEqual({ anthropic: 3 });
    }
  });

  test("three transient failures on a one-provider model: 502 upstream_unavailable, retryable, 3 calls, nothing charged", async () => {
    const { key, user: u, sdk: c } = await tenant(g, 100);
    g.gw.sim!.reset();
    const r = await chat(g, key.key, { model: "gpt-4o-mini", messages: user("down [sim:fail=503]") });
    expect(r.status).toBe(502);
    expect(errorCode(r.body)).toBe("upstream_unavailable");
    expect(r.body.detail.retryable).toBe(true);
    expect(typeof r.body.detail.message).toBe("string");
    expect(r.body.detail.providers.map((p: any) => p.provider ?? p)).toContain("openai");
    expect(simChatCalls(g)).toEqual({ openai: 3 });
    // The same count over the simulator's HTTP stats endpoint.
    const stats: any = await (await fetch(`${g.gw.sim!.url}/sim/stats`)).json();
    expect(stats.calls.openai["POST /v1/chat/completions"]).toBe(3);
    expect(await money(g, u.id)).toEqual({ balance: 100_000_000n, held: 0n });
    const ev = await usageOf(g, r.headers.get("x-request-id")!);
    expect(ev.status).toBe(502);
    expect(BigInt(ev.cost_micro)).toBe(0n);
    // The SDK sees the same.
    const err: any = await c.chat.completions
      .create({ model: "gpt-4o-mini", messages: user("down [sim:fail=503]") })
      .catch((e) => e);
    expect(err.status).toBe(502);
    expect(err.code).toBe("upstream_unavailable");
  });

  test("an upstream that never answers times out once (not retried at the same provider), then 502, free", async () => {
    const { key, user: u } = await tenant(slow, 100);
    slow.gw.sim!.reset();
    const t0 = performance.now();
    const r = await chat(slow, key.key, { model: "gpt-4o-mini", messages: user("silence [sim:hang]") });
    expect(r.status).toBe(502);
    expect(errorCode(r.body)).toBe("upstream_unavailable");
    // Issue 28 #5: a timeout is most likely the request's own doing; it is not sent three times.
    expect(simChatCalls(slow)).toEqual({ openai: 1 });
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(await money(slow, u.id)).toEqual({ balance: 100_000_000n, held: 0n });
  });
});

describe("a stream that goes quiet upstream", () => {
  for (const model of ["gpt-4o-mini", "claude-haiku-4-5"]) {
    test(`${model}: the idle deadline ends it with the upstream_error event, nothing billed without output`, async () => {
      const { key, user: u } = await tenant(slow, 100);
      const t0 = performance.now();
      const res = await chatFetch(slow, key.key, { model, stream: true, messages: user("stall [sim:chunk_ms=900]") });
      expect(res.status).toBe(200);
      const events = parseSse(await res.text()).filter((e) => e.data !== null);
      expect(performance.now() - t0).toBeLessThan(2500);
      expect(events.at(-1)!.data).toBe("[DONE]");
      expect(events.at(-2)!.json.error).toMatchObject({ code: "upstream_error", partial: "" });
      expect(await money(slow, u.id)).toEqual({ balance: 100_000_000n, held: 0n });
    });
  }
});

describe("fallback across providers", () => {
  test("deepseek-v3: deepseek fails 3 times, together answers (with consent)", async () => {
    const { user: u, sdk: c } = await tenant(g);
    await consent(g, u.id);
    g.gw.sim!.reset();
    const r: any = await c.chat.completions.create({
      model: "deepseek-v3",
      messages: user("fall over [sim:fail@deepseek=503]"),
    });
    expect([r.model, r.provider]).toEqual(["deepseek-v3", "together"]);
    expect(r.choices[0].message.content).toContain("Simulated reply from together/");
    expect(simChatCalls(g)).toEqual({ deepseek: 3, together: 1 });
  });

  test("deepseek-v3 without consent: together is not a candidate, so 502 after deepseek's 3 calls", async () => {
    const { key } = await tenant(g);
    g.gw.sim!.reset();
    const r = await chat(g, key.key, { model: "deepseek-v3", messages: user("no consent [sim:fail@deepseek=503]") });
    expect(r.status).toBe(502);
    expect(simChatCalls(g)).toEqual({ deepseek: 3 });
  });

  test("llama-3.3-70b with consent: together fails, groq answers", async () => {
    const { user: u, sdk: c } = await tenant(g);
    await consent(g, u.id);
    g.gw.sim!.reset();
    const r: any = await c.chat.completions.create({
      model: "llama-3.3-70b",
      messages: user("fall over [sim:fail@together=503]"),
    });
    expect(r.provider).toBe("groq");
    expect(simChatCalls(g)).toEqual({ together: 3, groq: 1 });
  });

  test("every provider down: 502 listing the providers tried", async () => {
    const { key, user: u } = await tenant(g, 50);
    await consent(g, u.id);
    g.gw.sim!.reset();
    const r = await chat(g, key.key, { model: "deepseek-v3", messages: user("all down [sim:fail=503]") });
    expect(r.status).toBe(502);
    expect(errorCode(r.body)).toBe("upstream_unavailable");
    expect(r.body.detail.retryable).toBe(true);
    const tried = new Set(r.body.detail.providers.map((p: any) => p.provider ?? p));
    expect(tried).toEqual(new Set(["deepseek", "together"]));
    expect(simChatCalls(g)).toEqual({ deepseek: 3, together: 3 });
    expect(await money(g, u.id)).toEqual({ balance: 50_000_000n, held: 0n });
  });
});

describe("rate limits", () => {
  test("all candidates rate-limited: 429 upstream_rate_limited with Retry-After, one call each", async () => {
    const { key, user: u } = await tenant(g, 50);
    await consent(g, u.id);
    g.gw.sim!.reset();
    const r = await chat(g, key.key, { model: "llama-3.3-70b", messages: user("busy [sim:fail=429]") });
    expect(r.status).toBe(429);
    expect(errorCode(r.body)).toBe("upstream_rate_limited");
    const ra = Number(r.headers.get("retry-after"));
    expect(Number.isInteger(ra)).toBe(true);
    expect(ra).toBeGreaterThanOrEqual(1);
    expect(simChatCalls(g)).toEqual({ together: 1, groq: 1 });
    expect(await money(g, u.id)).toEqual({ balance: 50_000_000n, held: 0n });
  });

  test("one provider rate-limited: the next one answers at once", async () => {
    const { user: u, sdk: c } = await tenant(g);
    await consent(g, u.id);
    g.gw.sim!.reset();
    const r: any = await c.chat.completions.create({
      model: "llama-3.3-70b",
      messages: user("busy [sim:fail@together=429]"),
    });
    expect(r.provider).toBe("groq");
    expect(simChatCalls(g)).toEqual({ together: 1, groq: 1 });
  });

  test("rate-limited and then down: 502, not 429", async () => {
    const { key, user: u } = await tenant(g);
    await consent(g, u.id);
    g.gw.sim!.reset();
    const r = await chat(g, key.key, {
      model: "llama-3.3-70b",
      messages: user("mixed [sim:fail@together=429] [sim:fail@groq=503]"),
    });
    expect(r.status).toBe(502);
    expect(errorCode(r.body)).toBe("upstream_unavailable");
    expect(simChatCalls(g)).toEqual({ together: 1, groq: 3 });
  });

  for (const [model, provider] of [
    ["gpt-4o-mini", "openai"],
    ["claude-haiku-4-5", "anthropic"],
    ["gemini-2.5-flash", "google"],
  ] as const) {
    test(`${model}: a single rate-limited provider gives 429 with Retry-After`, async () => {
      const { key } = await tenant(g);
      g.gw.sim!.reset();
      const r = await chat(g, key.key, { model, messages: user("busy [sim:fail=429]") });
      expect(r.status).toBe(429);
      expect(r.headers.get("retry-after")).toBe("1");
      expect(simChatCalls(g)).toEqual({ [provider]: 1 });
    });
  }
});

describe("rejections", () => {
  for (const [model, provider] of [
    ["gpt-4o-mini", "openai"],
    ["claude-haiku-4-5", "anthropic"],
    ["gemini-2.5-flash", "google"],
  ] as const) {
    test(`${model}: a 400 from upstream is 502 upstream_request_rejected after exactly 1 call`, async () => {
      const { key, user: u } = await tenant(g, 50);
      g.gw.sim!.reset();
      const r = await chat(g, key.key, { model, messages: user("reject me [sim:fail=400]") });
      expect(r.status).toBe(502);
      expect(errorCode(r.body)).toBe("upstream_request_rejected");
      expect(r.body.detail.retryable).toBe(false);
      expect(r.body.detail.upstream.status).toBe(400);
      expect(r.body.detail.upstream.detail).toBeDefined();
      expect(simChatCalls(g)).toEqual({ [provider]: 1 });
      expect(await money(g, u.id)).toEqual({ balance: 50_000_000n, held: 0n });
    });
  }

  test("a rejection does not fall back to another provider either", async () => {
    const { key, user: u } = await tenant(g);
    await consent(g, u.id);
    g.gw.sim!.reset();
    const r = await chat(g, key.key, { model: "deepseek-v3", messages: user("reject [sim:fail=422]") });
    expect(r.status).toBe(502);
    expect(errorCode(r.body)).toBe("upstream_request_rejected");
    expect(r.body.detail.upstream.status).toBe(422);
    expect(simChatCalls(g)).toEqual({ deepseek: 1 });
  });
});
