/**
 * `POST /v1/messages` through the official Anthropic SDK over real sockets, on a model of each
 * upstream protocol (Anthropic, OpenAI, Gemini; the simulator answers): create, stream with
 * finalMessage and the event order, a tool round trip, thinking, images, both credential
 * headers, and the books of each call in SQL.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { startTestGateway, type TestGateway } from "../harness";
import { microToKrwRounded } from "../../src/lib/money";
import { books, MODELS, parseSse, postMessages, requestIdOf, tenant } from "./helpers";

setDefaultTimeout(30_000);

let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway();
}, 60_000);
afterAll(async () => {
  await g?.stop();
});

const weather: Anthropic.Tool = {
  name: "get_weather",
  description: "Weather of a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

describe.each(MODELS)("%s", (model) => {
  test("messages.create: Anthropic's Message, cost headers, charged exactly once", async () => {
    const { user, sdk } = await tenant(g);
    const { data: msg, response } = await sdk.messages
      .create({ model, max_tokens: 200, system: "be brief", messages: [{ role: "user", content: "Hello there" }] })
      .withResponse();
    expect(msg.type).toBe("message");
    expect(msg.role).toBe("assistant");
    expect(msg.stop_reason).toBe("end_turn");
    const text = msg.content.find((b) => b.type === "text") as Anthropic.TextBlock;
    expect(text.text).toContain("Simulated reply from");
    expect(text.text).toContain("Hello there");
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    expect(msg.usage.output_tokens).toBeGreaterThan(0);
    const krw = Number(response.headers.get("x-cost-krw") ?? NaN);
    expect(Number(response.headers.get("x-cost-usd"))).toBeGreaterThan(0);
    const b = await books(g, user.id);
    expect(b.events).toHaveLength(1);
    expect(b.events[0]).toMatchObject({ status: 200, model, api: "messages" });
    expect(b.charges).toHaveLength(1);
    expect(b.holds.map((h: any) => h.status)).toEqual(["settled"]);
    expect(-BigInt(b.charges[0].amount_micro)).toBe(BigInt(b.events[0].cost_micro));
    expect(microToKrwRounded(BigInt(b.events[0].cost_micro))).toBe(krw);
    expect(b.held).toBe(0n);
  });

  test("messages.stream: event order, finalMessage, cost in the last message_delta", async () => {
    const { user, sdk } = await tenant(g);
    const stream = sdk.messages.stream({
      model,
      max_tokens: 200,
      messages: [{ role: "user", content: "Stream it please" }],
    });
    const types: string[] = [];
    let lastDelta: any = null;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === "message_delta") lastDelta = ev;
    }
    const final = await stream.finalMessage();
    expect(types[0]).toBe("message_start");
    expect(types[1]).toBe("content_block_start");
    expect(types.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
    expect(types.filter((t) => t === "content_block_delta").length).toBeGreaterThan(1);
    expect(final.stop_reason).toBe("end_turn");
    expect((final.content[final.content.length - 1] as Anthropic.TextBlock).text).toContain("Stream it please");
    expect(final.usage.output_tokens).toBeGreaterThan(0);
    expect(final.usage.input_tokens).toBeGreaterThan(0);
    const b = await books(g, user.id);
    expect(b.charges).toHaveLength(1);
    expect(b.events[0]).toMatchObject({ status: 200, api: "messages" });
    expect(lastDelta.usage.cost_krw).toBe(microToKrwRounded(BigInt(b.events[0].cost_micro)));
    expect(lastDelta.usage.cost_usd).toBeGreaterThan(0);
    // The SDK (1.14.0) rebuilds finalMessage().usage from the fields it knows: the cost is read from the event.
    expect(final.usage).not.toHaveProperty("cost_krw");
    expect(final.usage).not.toHaveProperty("cost_usd");
  });

  test("tools: tool_use, then tool_result answered, streamed and not", async () => {
    const { sdk } = await tenant(g);
    const first = await sdk.messages.create({
      model,
      max_tokens: 300,
      tools: [weather],
      tool_choice: { type: "tool", name: "get_weather" },
      messages: [{ role: "user", content: "Weather in Seoul?" }],
    });
    expect(first.stop_reason).toBe("tool_use");
    const use = first.content.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlock;
    expect(use.name).toBe("get_weather");
    expect(use.input).toEqual({ city: "sample city" });
    expect(use.id.length).toBeGreaterThan(0);
    const history: Anthropic.MessageParam[] = [
      { role: "user", content: "Weather in Seoul?" },
      { role: "assistant", content: first.content },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: use.id, content: "Sunny, 21C" },
          { type: "text", text: "Summarize it" },
        ],
      },
    ];
    const second = await sdk.messages.create({ model, max_tokens: 300, tools: [weather], messages: history });
    expect(second.stop_reason).toBe("end_turn");
    expect((second.content.find((b) => b.type === "text") as Anthropic.TextBlock).text).toContain("Summarize it");

    const stream = sdk.messages.stream({
      model,
      max_tokens: 300,
      tools: [weather],
      tool_choice: { type: "any" },
      messages: [{ role: "user", content: "Weather in Busan?" }],
    });
    const deltas: string[] = [];
    stream.on("streamEvent", (ev) => {
      if (ev.type === "content_block_delta") deltas.push(ev.delta.type);
    });
    const streamed = await stream.finalMessage();
    expect(streamed.stop_reason).toBe("tool_use");
    expect(deltas).toContain("input_json_delta");
    expect((streamed.content.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlock).input).toEqual({
      city: "sample city",
    });
  });

  test("images: base64 and URL sources are accepted and counted", async () => {
    const { sdk } = await tenant(g);
    const plain = await sdk.messages.create({
      model,
      max_tokens: 100,
      messages: [{ role: "user", content: "Describe" }],
    });
    const msg = await sdk.messages.create({
      model,
      max_tokens: 100,
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
            { type: "image", source: { type: "url", url: "https://example.com/cat.png" } },
            { type: "text", text: "Describe" },
          ],
        },
      ],
    });
    expect(msg.stop_reason).toBe("end_turn");
    // The simulator counts 85 tokens per image, whatever the vendor's framing.
    expect(msg.usage.input_tokens + msg.usage.cache_read_input_tokens! + msg.usage.cache_creation_input_tokens!).toBe(
      plain.usage.input_tokens + 170,
    );
  });
});

describe("credentials", () => {
  test("Authorization: Bearer (authToken) works as x-api-key does", async () => {
    const { key } = await tenant(g);
    const sdk = new Anthropic({ authToken: key.key, apiKey: null, baseURL: g.url, maxRetries: 0 });
    const msg = await sdk.messages.create({
      model: "claude-haiku-4-5",
      max_tokens: 50,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(msg.content.length).toBeGreaterThan(0);
  });

  test("Claude Code's request: ?beta=true, anthropic-beta, cache breakpoints, metadata, many tools", async () => {
    const { key } = await tenant(g);
    const tools = Array.from({ length: 12 }, (_, i) => ({
      ...weather,
      name: `tool_${i}`,
      ...(i === 11 && { cache_control: { type: "ephemeral" } }),
    }));
    for (const model of MODELS) {
      const res = await fetch(g.url + "/v1/messages?beta=true", {
        method: "POST",
        headers: {
          "x-api-key": key.key,
          "anthropic-version": "2023-06-01",
          "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
          "content-type": "application/json",
        },
        body: JSON.stringify({
          model,
          max_tokens: 32000,
          stream: true,
          metadata: { user_id: `user_${"a".repeat(64)}_account_${crypto.randomUUID()}_session_${crypto.randomUUID()}` },
          system: [
            { type: "text", text: "You are Claude Code." },
            { type: "text", text: "Be helpful.", cache_control: { type: "ephemeral" } },
          ],
          tools,
          messages: [
            { role: "user", content: [{ type: "text", text: "list files", cache_control: { type: "ephemeral" } }] },
          ],
        }),
      });
      expect(res.status).toBe(200);
      const frames = parseSse(await res.text());
      expect(frames.at(-1)!.event).toBe("message_stop");
    }
  });
});

describe("thinking", () => {
  test("Claude: the thinking block comes back (non-streaming and as thinking_delta)", async () => {
    const { sdk } = await tenant(g);
    const msg = await sdk.messages.create({
      model: "claude-haiku-4-5",
      max_tokens: 3000,
      thinking: { type: "enabled", budget_tokens: 2048 },
      messages: [{ role: "user", content: "Think first" }],
    });
    expect(msg.content[0]!.type).toBe("thinking");
    expect((msg.content[0] as Anthropic.ThinkingBlock).signature.length).toBeGreaterThan(0);
    const stream = sdk.messages.stream({
      model: "claude-haiku-4-5",
      max_tokens: 3000,
      thinking: { type: "enabled", budget_tokens: 2048 },
      messages: [{ role: "user", content: "Think first" }],
    });
    const deltas = new Set<string>();
    stream.on("streamEvent", (ev) => {
      if (ev.type === "content_block_delta") deltas.add(ev.delta.type);
    });
    const final = await stream.finalMessage();
    expect([...deltas]).toEqual(expect.arrayContaining(["thinking_delta", "signature_delta", "text_delta"]));
    expect(final.content.map((b) => b.type)).toEqual(["thinking", "text"]);
  });

  test("Gemini: a thinking budget becomes a reasoning effort (thought tokens billed as output)", async () => {
    const { sdk } = await tenant(g);
    const off = await sdk.messages.create({
      model: "gemini-2.5-flash",
      max_tokens: 3000,
      thinking: { type: "disabled" },
      messages: [{ role: "user", content: "Think first" }],
    });
    const on = await sdk.messages.create({
      model: "gemini-2.5-flash",
      max_tokens: 3000,
      thinking: { type: "enabled", budget_tokens: 2048 },
      messages: [{ role: "user", content: "Think first" }],
    });
    expect(on.usage.output_tokens).toBeGreaterThan(off.usage.output_tokens);
  });
});

describe("raw frames", () => {
  test("a translated stream has Anthropic's framing: event line = type, ping after the first block", async () => {
    const { key } = await tenant(g);
    const res = await postMessages(g, key.key, {
      model: "gpt-4o-mini",
      max_tokens: 100,
      stream: true,
      messages: [{ role: "user", content: "frames" }],
    });
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    const frames = parseSse(await res.text());
    for (const f of frames) expect(f.event).toBe(f.json.type);
    expect(frames.map((f) => f.event).slice(0, 3)).toEqual(["message_start", "content_block_start", "ping"]);
    const start = frames[0]!.json.message;
    expect(start.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(requestIdOf(start.id)).toBe(res.headers.get("x-request-id")!);
    expect(frames.at(-1)!.event).toBe("message_stop");
  });
});
