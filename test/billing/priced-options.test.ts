/**
 * Request options that make the provider charge more are billed at the price the provider
 * charges, or refused before any hold:
 * - OpenAI `service_tier: "priority"`: held and charged at the catalog's priority prices;
 *   a tier the catalog has no price for (`flex` on gpt-4o, `scale`, ...) is 400; `auto` is
 *   sent as `default` (the provider may not pick a tier we did not price);
 * - Anthropic `cache_control.ttl: "1h"`: one-hour cache writes at their own price (2 × input).
 * The recording proxy shows what left for the provider.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { dbKinds, type TestGateway } from "../harness";
import {
  chargeOf,
  chat,
  chatFetch,
  money,
  parseSse,
  proxiedGateway,
  tenant,
  totalChatCalls,
  type RecordingProxy,
} from "../support/chat";

setDefaultTimeout(30_000);

/** micro-won of tokens × micro-USD-per-Mtok prices at 1400 KRW/USD, rounded up once (≥ the 0.1 KRW minimum). */
const micro = (parts: [number, number][]) => {
  const num = parts.reduce((a, [tokens, price]) => a + BigInt(tokens) * BigInt(price), 0n) * 1_400_000n;
  const m = (num + 999_999_999n) / 1_000_000_000n;
  return m < 100_000n ? 100_000n : m;
};

// Vendor list prices, micro-USD per million tokens (docs/catalog.md).
const GPT4O = { input: 2_500_000, output: 10_000_000 };
const GPT4O_PRIORITY = { input: 4_250_000, cached: 2_125_000, output: 17_000_000 };
const HAIKU = { input: 1_000_000, write5m: 1_250_000, write1h: 2_000_000, output: 5_000_000 };

const LONG = "You are a meticulous assistant for a Korean logistics company. ".repeat(80);

for (const kind of await dbKinds()) {
  describe(`priced options (${kind})`, () => {
    let g: TestGateway;
    let proxy: RecordingProxy;
    beforeAll(async () => {
      ({ g, proxy } = await proxiedGateway(["openai", "anthropic"], {}, kind));
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
      proxy?.stop();
    });

    test("service_tier priority is forwarded and charged at the priority prices (JSON and stream)", async () => {
      const { key } = await tenant(g, 500);
      proxy.clear();
      const r = await chat(g, key.key, {
        model: "gpt-4o",
        service_tier: "priority",
        messages: [{ role: "user", content: "fast please [sim:tokens=300]" }],
      });
      expect(r.status).toBe(200);
      expect(proxy.chatBodies()[0].service_tier).toBe("priority");
      const u = r.body.usage;
      const expected = micro([
        [u.prompt_tokens, GPT4O_PRIORITY.input],
        [u.completion_tokens, GPT4O_PRIORITY.output],
      ]);
      expect(await chargeOf(g, r.headers.get("x-request-id")!)).toBe(expected);
      const standard = micro([
        [u.prompt_tokens, GPT4O.input],
        [u.completion_tokens, GPT4O.output],
      ]);
      expect(expected).toBeGreaterThan(standard);

      const res = await chatFetch(g, key.key, {
        model: "gpt-4o",
        stream: true,
        service_tier: "priority",
        messages: [{ role: "user", content: "stream fast [sim:tokens=300]" }],
      });
      const events = parseSse(await res.text());
      const final = events.filter((e) => e.json?.cost).at(-1)!.json;
      const expectedStream = micro([
        [final.usage.prompt_tokens, GPT4O_PRIORITY.input],
        [final.usage.completion_tokens, GPT4O_PRIORITY.output],
      ]);
      expect(await chargeOf(g, res.headers.get("x-request-id")!)).toBe(expectedStream);
      expect(proxy.chatBodies()[1].service_tier).toBe("priority");
    });

    test("the priority hold is sized at priority prices: credits enough only for standard are 402, before any call", async () => {
      // max_tokens 10,000 on gpt-4o: standard worst case ≈ 140 KRW, priority ≈ 238 KRW.
      const { user: u, key } = await tenant(g, 200);
      const body = { model: "gpt-4o", max_tokens: 10_000, messages: [{ role: "user", content: "hold me" }] };
      g.gw.sim!.reset();
      const refused = await chat(g, key.key, { ...body, service_tier: "priority" });
      expect(refused.status).toBe(402);
      expect(totalChatCalls(g)).toBe(0);
      expect((await chat(g, key.key, body)).status).toBe(200);
      expect((await money(g, u.id)).held).toBe(0n);
    });

    test("a tier without a catalog price is 400 before any hold or call; auto is sent as default", async () => {
      const { user: u, key } = await tenant(g, 100);
      const before = await money(g, u.id);
      g.gw.sim!.reset();
      for (const tier of ["flex", "scale", "background", "turbo"]) {
        const r = await chat(g, key.key, {
          model: "gpt-4o-mini",
          service_tier: tier,
          messages: [{ role: "user", content: "tier" }],
        });
        expect([tier, r.status, r.body.detail?.error]).toEqual([tier, 400, "unsupported_parameter"]);
      }
      expect(totalChatCalls(g)).toBe(0);
      expect(await money(g, u.id)).toEqual(before);
      proxy.clear();
      const auto = await chat(g, key.key, {
        model: "gpt-4o",
        service_tier: "auto",
        messages: [{ role: "user", content: "auto [sim:tokens=50]" }],
      });
      expect(auto.status).toBe(200);
      expect(proxy.chatBodies()[0].service_tier).toBe("default");
      const au = auto.body.usage;
      expect(await chargeOf(g, auto.headers.get("x-request-id")!)).toBe(
        micro([
          [au.prompt_tokens, GPT4O.input],
          [au.completion_tokens, GPT4O.output],
        ]),
      );
      // A provider that takes no service_tier never gets it, and is billed at its one price.
      proxy.clear();
      const claude = await chat(g, key.key, {
        model: "claude-haiku-4-5",
        service_tier: "priority",
        messages: [{ role: "user", content: "no tiers here" }],
      });
      expect(claude.status).toBe(200);
      expect(proxy.chatBodies()[0].service_tier).toBeUndefined();
    });

    test("Anthropic one-hour cache writes are charged at the one-hour price", async () => {
      const { key } = await tenant(g, 500);
      proxy.clear();
      const r = await chat(g, key.key, {
        model: "claude-haiku-4-5",
        messages: [
          { role: "system", content: [{ type: "text", text: LONG, cache_control: { type: "ephemeral", ttl: "1h" } }] },
          { role: "user", content: "an hour please" },
        ],
      });
      expect(r.status).toBe(200);
      expect(JSON.stringify(proxy.chatBodies()[0].system)).toContain('"ttl":"1h"');
      const u = r.body.usage;
      const writes = u.cache_creation_input_tokens;
      expect(writes).toBeGreaterThan(1000);
      expect(await chargeOf(g, r.headers.get("x-request-id")!)).toBe(
        micro([
          [u.prompt_tokens - writes, HAIKU.input],
          [writes, HAIKU.write1h],
          [u.completion_tokens, HAIKU.output],
        ]),
      );
      // Streamed (Anthropic's usage arrives in message_start and message_delta): the same rule.
      const res = await chatFetch(g, key.key, {
        model: "claude-haiku-4-5",
        stream: true,
        messages: [
          {
            role: "system",
            content: [{ type: "text", text: LONG + " Streamed.", cache_control: { type: "ephemeral", ttl: "1h" } }],
          },
          { role: "user", content: "an hour, streamed" },
        ],
      });
      const su = parseSse(await res.text())
        .filter((e) => e.json?.cost)
        .at(-1)!.json.usage;
      expect(su.cache_creation_input_tokens).toBeGreaterThan(1000);
      expect(await chargeOf(g, res.headers.get("x-request-id")!)).toBe(
        micro([
          [su.prompt_tokens - su.cache_creation_input_tokens, HAIKU.input],
          [su.cache_creation_input_tokens, HAIKU.write1h],
          [su.completion_tokens, HAIKU.output],
        ]),
      );
      // The five-minute TTL keeps its own price.
      const five = await chat(g, key.key, {
        model: "claude-haiku-4-5",
        messages: [
          {
            role: "system",
            content: [{ type: "text", text: LONG + " Five minutes.", cache_control: { type: "ephemeral", ttl: "5m" } }],
          },
          { role: "user", content: "five minutes please" },
        ],
      });
      const f = five.body.usage;
      expect(await chargeOf(g, five.headers.get("x-request-id")!)).toBe(
        micro([
          [f.prompt_tokens - f.cache_creation_input_tokens, HAIKU.input],
          [f.cache_creation_input_tokens, HAIKU.write5m],
          [f.completion_tokens, HAIKU.output],
        ]),
      );
    });

    test("a cache TTL the catalog cannot price is 400 before any call", async () => {
      const { key } = await tenant(g, 100);
      g.gw.sim!.reset();
      const r = await chat(g, key.key, {
        model: "claude-haiku-4-5",
        messages: [
          {
            role: "system",
            content: [{ type: "text", text: "sys", cache_control: { type: "ephemeral", ttl: "24h" } }],
          },
          { role: "user", content: "a day please" },
        ],
      });
      expect(r.status).toBe(400);
      expect(r.body.detail.error).toBe("unsupported_parameter");
      expect(totalChatCalls(g)).toBe(0);
    });
  });
}
