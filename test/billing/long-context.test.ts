/**
 * Long-context price tiers (issue 28, finding 7): a prompt above a tier's threshold (all its
 * input tokens, cache included) is held and charged at the tier's prices for the whole call,
 * as the providers bill: Gemini 2.5 Pro and Claude Sonnet 4.5 above 200k tokens, GPT-5.4 from
 * 272k. A prompt at or under the threshold pays the base prices. Checked in SQL: the charge is
 * the list price of the usage the simulator reported, exactly, in micro-won.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { chargeOf, chat, tenant } from "../support/chat";

setDefaultTimeout(60_000);

/** micro-won of [tokens, micro-USD per Mtok] at 1,400 KRW/USD, rounded up once. */
const micro = (parts: [number, number][]) =>
  (parts.reduce((a, [t, p]) => a + BigInt(t) * BigInt(p), 0n) * 1_400_000n + 999_999_999n) / 1_000_000_000n;

/** A prompt the simulator counts as `tokens` tokens (4 characters a token). */
const prompt = (tokens: number, tag: string) => `${tag} [sim:tokens=50] ${"abcd".repeat(tokens)}`;

describe("long-context tiers", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway();
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  const cases = [
    { model: "gemini-2.5-pro", above: 200_000, base: [1_250_000, 10_000_000], tier: [2_500_000, 15_000_000] },
    { model: "gpt-5.4", above: 272_000, base: [2_500_000, 15_000_000], tier: [5_000_000, 22_500_000] },
  ] as const;

  for (const c of cases)
    test(`${c.model}: over ${c.above} tokens the whole call at the tier price`, async () => {
      const { key } = await tenant(g, 100_000);
      for (const [tokens, prices] of [
        [c.above + 10_000, c.tier],
        [c.above - 20_000, c.base],
      ] as const) {
        const r = await chat(g, key.key, {
          model: c.model,
          max_tokens: 100,
          messages: [{ role: "user", content: prompt(tokens, c.model) }],
        });
        expect(r.status).toBe(200);
        const u = r.body.usage;
        expect(u.prompt_tokens > c.above).toBe(prices === c.tier);
        const list = micro([
          [u.prompt_tokens, prices[0]],
          [u.completion_tokens, prices[1]],
        ]);
        expect(await chargeOf(g, r.headers.get("x-request-id")!)).toBe(list);
      }
    });

  test("the hold is at the tier's prices: credit for the flat price but not the tier's is 402, nothing sent", async () => {
    // ~210k tokens: held as ~280k (3 characters a token) × $2.50 ≈ 980 KRW; at $1.25, ≈ 490 KRW.
    const { user, key } = await tenant(g, 700);
    const r = await chat(g, key.key, {
      model: "gemini-2.5-pro",
      max_tokens: 100,
      messages: [{ role: "user", content: prompt(210_000, "short of credit") }],
    });
    expect(r.status).toBe(402);
    const rows = await g.gw.deps.db.query<any>(
      "select count(*)::int as n from ledger_entries where user_id = $1 and kind = 'charge'",
      [user.id],
    );
    expect(rows[0].n).toBe(0);
  });

  test("claude-sonnet-4-5 on /v1/messages: over 200k tokens at the tier price", async () => {
    const { key } = await tenant(g, 100_000);
    const r = await fetch(`${g.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": key.key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({
        model: "claude-sonnet-4-5",
        max_tokens: 100,
        messages: [{ role: "user", content: prompt(210_000, "sonnet") }],
      }),
    });
    expect(r.status).toBe(200);
    const u: any = ((await r.json()) as any).usage;
    expect(u.input_tokens).toBeGreaterThan(200_000);
    const list = micro([
      [u.input_tokens, 6_000_000],
      [u.output_tokens, 22_500_000],
    ]);
    expect(await chargeOf(g, r.headers.get("x-request-id")!)).toBe(list);
  });
});
