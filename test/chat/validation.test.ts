/**
 * The chat request contract (docs/decisions.md #1): what the Limits table bounds is range-checked
 * (422 with the exact `loc`), everything else passes through to the provider untouched, `n`
 * is ignored, and `max_tokens` (default 4096) sizes the credit hold.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { chat, fastUser, krwMicro, RecordingProxy, simChatCalls, tenant, user } from "../support/chat";

// Real servers and databases on a shared machine: generous per-test deadlines.
setDefaultTimeout(20_000);

let g: TestGateway;
let proxy: RecordingProxy;
beforeAll(async () => {
  proxy = new RecordingProxy();
  // OpenAI goes through the recording proxy; every other provider straight to the simulator.
  g = await startTestGateway({ env: { OPENAI_BASE_URL: proxy.url } });
  proxy.aim(g.gw.sim!.baseUrl("openai"));
}, 60_000);
afterAll(async () => {
  await g?.stop();
  proxy?.stop();
});

describe("validation: 422 with loc", () => {
  const ok = { model: "gpt-4o-mini", messages: user("hi") };
  const cases: [string, Record<string, unknown>, (string | number)[]][] = [
    ["missing model", { messages: user("hi") }, ["body", "model"]],
    ["missing messages", { model: "gpt-4o-mini" }, ["body", "messages"]],
    ["empty messages", { model: "gpt-4o-mini", messages: [] }, ["body", "messages"]],
    ["model not a string", { model: 42, messages: user("hi") }, ["body", "model"]],
    ["bad role", { ...ok, messages: [{ role: "wizard", content: "hi" }] }, ["body", "messages", 0, "role"]],
    [
      "bad role in 2nd message",
      {
        ...ok,
        messages: [
          { role: "user", content: "a" },
          { role: "robot", content: "b" },
        ],
      },
      ["body", "messages", 1, "role"],
    ],
    ["temperature 2.5", { ...ok, temperature: 2.5 }, ["body", "temperature"]],
    ["temperature -0.1", { ...ok, temperature: -0.1 }, ["body", "temperature"]],
    ["top_p 1.5", { ...ok, top_p: 1.5 }, ["body", "top_p"]],
    ["max_tokens 0", { ...ok, max_tokens: 0 }, ["body", "max_tokens"]],
    ["max_tokens 128001", { ...ok, max_tokens: 128001 }, ["body", "max_tokens"]],
    ["max_tokens 1.5", { ...ok, max_tokens: 1.5 }, ["body", "max_tokens"]],
    ["max_tokens as a string", { ...ok, max_tokens: "100" }, ["body", "max_tokens"]],
    ["temperature as a string", { ...ok, temperature: "0.5" }, ["body", "temperature"]],
    ["max_completion_tokens 0", { ...ok, max_completion_tokens: 0 }, ["body", "max_completion_tokens"]],
    ["frequency_penalty 2.1", { ...ok, frequency_penalty: 2.1 }, ["body", "frequency_penalty"]],
    ["presence_penalty -2.5", { ...ok, presence_penalty: -2.5 }, ["body", "presence_penalty"]],
    ["trace_id 129 chars", { ...ok, trace_id: "t".repeat(129) }, ["body", "trace_id"]],
    ["reasoning_effort extreme", { ...ok, reasoning_effort: "extreme" }, ["body", "reasoning_effort"]],
  ];

  test("each out-of-range field is 422 naming it, before any upstream call or hold", async () => {
    const { user: u, key } = await tenant(g, 100);
    g.gw.sim!.reset();
    for (const [name, body, loc] of cases) {
      const r = await chat(g, key.key, body);
      expect([name, r.status]).toEqual([name, 422]);
      expect(Array.isArray(r.body.detail)).toBe(true);
      const locs = r.body.detail.map((d: any) => JSON.stringify(d.loc));
      expect([name, locs]).toEqual([name, expect.arrayContaining([JSON.stringify(loc)])]);
      for (const d of r.body.detail) {
        expect(typeof d.msg).toBe("string");
        expect(typeof d.type).toBe("string");
      }
    }
    expect(g.gw.sim!.stats().total).toBe(0);
    const me = await g.call("GET", "/v1/me", { token: u.jwt });
    expect([me.body.balance_krw, me.body.held_krw]).toEqual([100, 0]);
  });

  test("the bounds themselves are accepted", async () => {
    const { key } = await tenant(g, 2000);
    for (const extra of [
      { temperature: 0 },
      { temperature: 2 },
      { top_p: 0 },
      { top_p: 1 },
      { max_tokens: 1 },
      { max_tokens: 128000 },
      { frequency_penalty: -2, presence_penalty: 2 },
      { trace_id: "t".repeat(128) },
      ...["minimal", "none", "low", "medium", "high", "xhigh", "max"].map((e) => ({ reasoning_effort: e })),
    ]) {
      const r = await chat(g, key.key, { model: "gpt-4o-mini", messages: user("bounds"), ...extra });
      expect([extra, r.status]).toEqual([extra, 200]);
    }
  });

  test("the SDK surfaces a 422 as an error with status 422", async () => {
    const { sdk: c } = await tenant(g, 10);
    const err: any = await c.chat.completions
      .create({ model: "gpt-4o-mini", messages: user("hi"), temperature: 2.5 })
      .catch((e) => e);
    expect(err.status).toBe(422);
  });
});

describe("passthrough", () => {
  test("unknown and unvalidated parameters reach the provider untouched", async () => {
    const { key } = await tenant(g, 100);
    proxy.clear();
    const r = await chat(g, key.key, {
      model: "gpt-4o-mini",
      messages: user("passthrough please"),
      custom_vendor_flag: { nested: [1, 2, 3] },
      top_k: 40,
      seed: 7,
      stop: ["END"],
      logit_bias: { "50256": -100 },
      response_format: { type: "json_object" },
    });
    expect(r.status).toBe(200);
    const sent = proxy.chatBodies();
    expect(sent).toHaveLength(1);
    expect(sent[0].custom_vendor_flag).toEqual({ nested: [1, 2, 3] });
    expect(sent[0].top_k).toBe(40);
    expect(sent[0].seed).toBe(7);
    expect(sent[0].stop).toEqual(["END"]);
    expect(sent[0].logit_bias).toEqual({ "50256": -100 });
    expect(sent[0].response_format).toEqual({ type: "json_object" });
    expect(sent[0].model).toBe("gpt-4o-mini");
    // The gateway's own fields do not leak upstream.
    expect(sent[0].trace_id).toBeUndefined();
    expect(sent[0].provider).toBeUndefined();
  });

  test("a pass-through parameter cannot override the gateway's own fields", async () => {
    const { key } = await tenant(g, 100);
    proxy.clear();
    const r = await chat(g, key.key, { model: "gpt-4o-mini", messages: user("override"), n: 3, max_tokens: 50 });
    expect(r.status).toBe(200);
    const sent = proxy.chatBodies()[0];
    expect(sent.n).toBeUndefined();
    expect(sent.max_tokens).toBe(50);
    expect(sent.stream).toBeUndefined();
  });

  test("reasoning_effort reaches the provider in its form; thinking is its alias, and loses to it", async () => {
    const { key } = await tenant(g, 100);
    const sent = async (extra: Record<string, unknown>) => {
      proxy.clear();
      expect((await chat(g, key.key, { model: "gpt-4o-mini", messages: user("think"), ...extra })).status).toBe(200);
      return proxy.chatBodies()[0].reasoning_effort;
    };
    expect(await sent({ reasoning_effort: "low" })).toBe("low");
    expect(await sent({ reasoning_effort: "max" })).toBe("xhigh");
    expect(await sent({ thinking: true })).toBe("medium");
    expect(await sent({ thinking: false })).toBe("none");
    expect(await sent({ thinking: true, reasoning_effort: "high" })).toBe("high");
    expect(await sent({})).toBeUndefined();
  });

  test("plugins: web is accepted, an unknown plugin is 400", async () => {
    const { key } = await tenant(g, 100);
    expect(
      (await chat(g, key.key, { model: "gpt-4o-mini", messages: user("x"), plugins: [{ id: "web" }] })).status,
    ).toBe(200);
    const r = await chat(g, key.key, { model: "gpt-4o-mini", messages: user("x"), plugins: [{ id: "teleport" }] });
    expect(r.status).toBe(400);
    expect(r.body.detail.error).toBe("unknown_plugin");
  });

  test("n: 3 is ignored: exactly one choice (SDK, streaming and not)", async () => {
    const { sdk: c } = await tenant(g, 100);
    const r = await c.chat.completions.create({ model: "gpt-4o-mini", messages: user("three?"), n: 3 });
    expect(r.choices).toHaveLength(1);
    expect(r.choices[0]!.index).toBe(0);
    const s = await c.chat.completions.create({
      model: "claude-haiku-4-5",
      messages: user("three?"),
      n: 3,
      stream: true,
    });
    const indexes = new Set<number>();
    for await (const ch of s) for (const choice of ch.choices) indexes.add(choice.index);
    expect([...indexes]).toEqual([0]);
  });
});

describe("max_tokens sizes the hold", () => {
  /** The hold placed for a slow call, read from /v1/me while the upstream is still waiting. */
  async function heldDuring(jwt: string, apiKey: string, extra: Record<string, unknown>): Promise<bigint> {
    const call = chat(g, apiKey, { model: "gpt-4o", messages: user("size my hold [sim:latency=600]"), ...extra });
    let held = 0;
    const end = performance.now() + 3000;
    while (held === 0 && performance.now() < end) {
      held = (await g.call("GET", "/v1/me", { token: jwt })).body.held_krw;
      if (!held) await Bun.sleep(10);
    }
    const r = await call;
    expect(r.status).toBe(200);
    const after = (await g.call("GET", "/v1/me", { token: jwt })).body;
    expect(after.held_krw).toBe(0);
    return krwMicro(held);
  }

  test("default 4096 equals an explicit 4096; each output token adds its price to the hold", async () => {
    const u = await fastUser(g, { creditKrw: 1000 });
    const k = await g.newKey(u);
    const dflt = await heldDuring(u.jwt, k.key, {});
    const explicit = await heldDuring(u.jwt, k.key, { max_tokens: 4096 });
    const small = await heldDuring(u.jwt, k.key, { max_tokens: 1000 });
    expect(dflt).toBeGreaterThan(0n);
    expect(dflt).toBe(explicit);
    // gpt-4o output: 10 USD / Mtok at 1400 KRW/USD → 3096 tokens = 43.344 KRW exactly.
    expect(dflt - small).toBe(43_344_000n);
    // The input part covers at least the real prompt (≥ 1 token at 2.5 USD/Mtok).
    const inputPart = small - 1000n * 14_000n; // 1000 × 10e-6 × 1400 KRW = 14,000 µ₩ per token
    expect(inputPart).toBeGreaterThanOrEqual(3_500n);
  });

  test("max_tokens larger than the credits allow is 402 even if the answer would be short", async () => {
    const { sdk: c } = await tenant(g, 1); // 1 KRW
    const err: any = await c.chat.completions
      .create({ model: "gpt-4o", messages: user("hi"), max_tokens: 100_000 })
      .catch((e) => e);
    expect(err.status).toBe(402);
    const r = await c.chat.completions.create({ model: "gpt-4o", messages: user("hi"), max_tokens: 30 });
    expect(r.choices[0]!.message.content).toContain("Simulated reply");
    expect(simChatCalls(g).openai).toBeGreaterThan(0);
  });
});
