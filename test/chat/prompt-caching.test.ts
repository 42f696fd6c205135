/**
 * Provider prompt caching and the specification's three billing cases, end to end:
 * - explicit (Anthropic): `cache_control` reaches the provider; the first call reports
 *   `cache_creation_input_tokens` (billed at the cache-write price), the next
 *   `prompt_tokens_details.cached_tokens` (billed at the cache-read price);
 * - automatic (OpenAI): a repeated ≥ 1024-token prefix is cached and billed at the cached price;
 * - reported (Google, DeepSeek): cached tokens are reported but billed at the input price.
 * (The catalog verifier insists that a reported-caching offering's cached price equals its
 * input price, so the "no discount" rule with a cheaper cached price is covered by
 * test/billing/pricing.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { chargeOf, chat, chatFetch, parseSse, RecordingProxy, tenant } from "../support/chat";

// Real servers and databases on a shared machine: generous per-test deadlines.
setDefaultTimeout(20_000);

let g: TestGateway;
let proxy: RecordingProxy;
beforeAll(async () => {
  proxy = new RecordingProxy();
  g = await startTestGateway({ env: { ANTHROPIC_BASE_URL: `${proxy.url}/anthropic` } });
  proxy.aim(`${g.gw.sim!.url}/sim`);
}, 60_000);
afterAll(async () => {
  await g?.stop();
  proxy?.stop();
});

/** micro-won for micro-USD-per-Mtok × tokens, at 1400 KRW/USD, rounded up once. */
const micro = (parts: [number, number][]) => {
  const num = parts.reduce((a, [tokens, price]) => a + BigInt(tokens) * BigInt(price), 0n) * 1_400_000n;
  const m = (num + 999_999_999n) / 1_000_000_000n;
  return m < 100_000n ? 100_000n : m;
};

const LONG = "You are a meticulous assistant for a Korean logistics company. ".repeat(80); // ~5,000 chars ≈ 1,280 tokens

describe("explicit caching (Anthropic)", () => {
  test("cache_control reaches the provider; write then read, each at its price", async () => {
    const { key } = await tenant(g, 500);
    const body = (q: string) => ({
      model: "claude-haiku-4-5",
      messages: [
        { role: "system", content: [{ type: "text", text: LONG, cache_control: { type: "ephemeral" } }] },
        { role: "user", content: q },
      ],
    });
    proxy.clear();
    const first = await chat(g, key.key, body("first question"));
    expect(first.status).toBe(200);
    const sent = proxy.chatBodies()[0];
    expect(JSON.stringify(sent.system)).toContain('"cache_control":{"type":"ephemeral"}');
    const u1 = first.body.usage;
    expect(u1.cache_creation_input_tokens).toBeGreaterThan(1000);
    expect(u1.prompt_tokens_details.cached_tokens).toBe(0);
    expect(u1.prompt_tokens).toBeGreaterThan(u1.cache_creation_input_tokens);
    // claude-haiku-4-5: input 1, cache write 1.25, cache read 0.1, output 5 USD/Mtok.
    const w = u1.cache_creation_input_tokens;
    expect(await chargeOf(g, first.headers.get("x-request-id")!)).toBe(
      micro([
        [u1.prompt_tokens - w, 1_000_000],
        [w, 1_250_000],
        [u1.completion_tokens, 5_000_000],
      ]),
    );

    const second = await chat(g, key.key, body("second question"));
    const u2 = second.body.usage;
    expect(u2.prompt_tokens_details.cached_tokens).toBe(w);
    expect(u2.cache_creation_input_tokens ?? 0).toBe(0);
    const c2 = await chargeOf(g, second.headers.get("x-request-id")!);
    expect(c2).toBe(
      micro([
        [u2.prompt_tokens - w, 1_000_000],
        [w, 100_000],
        [u2.completion_tokens, 5_000_000],
      ]),
    );
    expect(second.body.cost.usd).toBeLessThan(first.body.cost.usd);
  });

  test("the same in a stream: usage and cost on the final event follow the cache", async () => {
    const { key } = await tenant(g, 500);
    const sys = LONG.replace("logistics", "shipping");
    const body = (q: string) => ({
      model: "claude-haiku-4-5",
      stream: true,
      messages: [
        { role: "system", content: [{ type: "text", text: sys, cache_control: { type: "ephemeral" } }] },
        { role: "user", content: q },
      ],
    });
    const finals = [];
    for (const q of ["one", "two"]) {
      const res = await chatFetch(g, key.key, body(q));
      const rid = res.headers.get("x-request-id")!;
      const final = parseSse(await res.text())
        .filter((e) => e.json?.cost)
        .at(-1)!.json;
      finals.push({ usage: final.usage, charge: await chargeOf(g, rid) });
    }
    const [a, b] = finals as any[];
    expect(a.usage.cache_creation_input_tokens).toBeGreaterThan(1000);
    expect(b.usage.prompt_tokens_details.cached_tokens).toBe(a.usage.cache_creation_input_tokens);
    const w = a.usage.cache_creation_input_tokens;
    expect(b.charge).toBe(
      micro([
        [b.usage.prompt_tokens - w, 1_000_000],
        [w, 100_000],
        [b.usage.completion_tokens, 5_000_000],
      ]),
    );
  });

  test("without cache_control nothing is cached", async () => {
    const { key } = await tenant(g, 500);
    const body = (q: string) => ({
      model: "claude-haiku-4-5",
      messages: [
        { role: "system", content: LONG.replace("Korean", "Busan") },
        { role: "user", content: q },
      ],
    });
    await chat(g, key.key, body("a"));
    const r = await chat(g, key.key, body("b"));
    expect(r.body.usage.prompt_tokens_details.cached_tokens).toBe(0);
    expect(r.body.usage.cache_creation_input_tokens ?? 0).toBe(0);
  });
});

describe("automatic caching (OpenAI)", () => {
  test("a repeated long prefix is reported and discounted", async () => {
    const { key } = await tenant(g, 500);
    const sys = LONG.replace("Korean", "Incheon");
    const first = await chat(g, key.key, {
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: sys },
        { role: "user", content: "first" },
      ],
    });
    expect(first.body.usage.prompt_tokens_details.cached_tokens).toBe(0);
    const second = await chat(g, key.key, {
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: sys },
        { role: "user", content: "second" },
      ],
    });
    const u = second.body.usage;
    expect(u.prompt_tokens_details.cached_tokens).toBeGreaterThanOrEqual(1024);
    // gpt-4o-mini: input 0.15, cached 0.075, output 0.6 USD/Mtok.
    const cached = u.prompt_tokens_details.cached_tokens;
    expect(await chargeOf(g, second.headers.get("x-request-id")!)).toBe(
      micro([
        [u.prompt_tokens - cached, 150_000],
        [cached, 75_000],
        [u.completion_tokens, 600_000],
      ]),
    );
  });
});

describe("reported caching (no discount)", () => {
  for (const [model, input, output] of [
    ["gemini-2.5-flash", 300_000, 2_500_000],
    ["deepseek-v3", 270_000, 1_100_000],
  ] as const) {
    test(`${model}: cached tokens are reported but billed at the input price`, async () => {
      const { key } = await tenant(g, 500);
      const sys = LONG.replace("Korean", model);
      const call = (q: string) =>
        chat(g, key.key, {
          model,
          messages: [
            { role: "system", content: sys },
            { role: "user", content: q },
          ],
        });
      await call("first");
      const second = await call("second");
      const u = second.body.usage;
      expect(u.prompt_tokens_details.cached_tokens).toBeGreaterThanOrEqual(1024);
      expect(await chargeOf(g, second.headers.get("x-request-id")!)).toBe(
        micro([
          [u.prompt_tokens, input],
          [u.completion_tokens, output],
        ]),
      );
    });
  }
});
