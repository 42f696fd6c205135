/**
 * One-hour cache writes on /v1/messages (issue 28, finding 6): a `cache_control` with
 * `ttl: "1h"` on a tool definition or a `tool_result` block (not only on the translation's
 * message parts) is held and charged at the one-hour write price, from Anthropic's
 * `cache_creation.ephemeral_1h_input_tokens`; a TTL the catalog has no price for, anywhere in
 * the body, is refused with 400 before any hold. Checked in SQL against the list price.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { books, parseSse, postMessages, tenant } from "./helpers";

setDefaultTimeout(60_000);

// Claude Haiku 4.5 list prices, micro-USD per million tokens, at 1,400 KRW/USD.
const HAIKU = { input: 1_000_000n, read: 100_000n, write5m: 1_250_000n, write1h: 2_000_000n, output: 5_000_000n };
const listMicro = (u: any) => {
  const long = BigInt(u.cache_creation?.ephemeral_1h_input_tokens ?? 0);
  const short = BigInt(u.cache_creation_input_tokens) - long;
  const sum =
    BigInt(u.input_tokens) * HAIKU.input +
    BigInt(u.cache_read_input_tokens) * HAIKU.read +
    short * HAIKU.write5m +
    long * HAIKU.write1h +
    BigInt(u.output_tokens) * HAIKU.output;
  return (sum * 1_400_000n + 999_999_999n) / 1_000_000_000n;
};

/** A tool definition of ~5,000 tokens; `salt` makes its cache prefix new. */
const tool = (salt: string) => ({
  name: "lookup_order",
  description: `${salt}: ${"Looks an order up in the warehouse system by its number. ".repeat(400)}`,
  input_schema: { type: "object", properties: { id: { type: "string" } } },
});

describe("one-hour cache writes on /v1/messages", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway();
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  const body = (ttl: string, where: "tool" | "tool_result", stream = false) => ({
    model: "claude-haiku-4-5",
    max_tokens: 100,
    stream,
    tools: [where === "tool" ? { ...tool(`${stream}`), cache_control: { type: "ephemeral", ttl } } : tool(`${stream}`)],
    messages: [
      { role: "user", content: "Where is order 42?" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "lookup_order", input: { id: "42" } }] },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: [{ type: "text", text: "Order 42: shipped from Incheon. ".repeat(300) }],
            ...(where === "tool_result" && { cache_control: { type: "ephemeral", ttl } }),
          },
          { type: "text", text: `Summarise. ${where} ${stream} [sim:no_tool] [sim:tokens=40]` },
        ],
      },
    ],
  });

  test("a 1h breakpoint on a tool or a tool result is charged at the one-hour price", async () => {
    const { user, key } = await tenant(g, 10_000);
    const usages: any[] = [];
    for (const where of ["tool", "tool_result"] as const) {
      const r = await postMessages(g, key.key, body("1h", where));
      expect(r.status).toBe(200);
      usages.push(((await r.json()) as any).usage);
    }
    const s = await postMessages(g, key.key, body("1h", "tool", true));
    const frames = parseSse(await s.text());
    usages.push({
      ...frames.find((f) => f.event === "message_start")!.json.message.usage,
      ...frames.find((f) => f.event === "message_delta")!.json.usage,
    });
    for (const u of usages) expect(u.cache_creation.ephemeral_1h_input_tokens).toBeGreaterThan(1000);
    const b = await books(g, user.id);
    expect(b.charges).toHaveLength(3);
    const charged = b.charges.map((c: any) => -BigInt(c.amount_micro)).sort();
    expect(charged).toEqual(usages.map(listMicro).sort());
    expect(b.held).toBe(0n);
  });

  test("an unknown TTL anywhere in the body is refused with 400 before any hold", async () => {
    const { user, key } = await tenant(g, 10_000);
    for (const where of ["tool", "tool_result"] as const) {
      const r = await postMessages(g, key.key, body("2h", where));
      expect(r.status).toBe(400);
      const e: any = await r.json();
      expect(e.error.type).toBe("invalid_request_error");
      expect(e.error.code).toBe("unsupported_parameter");
    }
    const b = await books(g, user.id);
    expect(b.holds).toHaveLength(0);
    expect(b.charges).toHaveLength(0);
  });
});
