/**
 * The hold is sized as an upper bound of what a request sends: image parts
 * at the most their provider counts for one image, tool definitions, the tool-call history, the
 * structured-output schema, web-search results (src/core/chat/estimate.ts).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { chat, tenant } from "../support/chat";
import { holdInputTokens, imageTokens, measurePrompt } from "../../src/core/chat/estimate";
import type { ChatMessage } from "../../src/core/model/types";

setDefaultTimeout(30_000);

const image = (detail?: string) => ({
  type: "image_url" as const,
  image_url: { url: "https://example.com/photo.png", ...(detail && { detail }) },
});

describe("the hold's estimate of a prompt", () => {
  test("an image part counts as the most its provider documents for one image", () => {
    expect(imageTokens("openai", "gpt-4o-mini", { low: false })).toBe(2833 + 8 * 5667);
    expect(imageTokens("openai", "gpt-4o-mini", { low: true })).toBe(2833);
    expect(imageTokens("openai", "gpt-4o", { low: false })).toBe(85 + 8 * 170);
    expect(imageTokens("openai", "gpt-4o-2024-11-20", { low: true })).toBe(85);
    expect(imageTokens("openai", "gpt-4.1-mini", { low: false })).toBe(3779);
    expect(imageTokens("openai", "meta-llama/Llama-4-Scout", { low: false })).toBe(3779);
    expect(imageTokens("anthropic", "claude-haiku-4-5", { low: false })).toBe(1600);
    expect(imageTokens("gemini", "gemini-2.5-flash", { low: false })).toBe(2580);
    const p = measurePrompt({
      messages: [{ role: "user", content: [{ type: "text", text: "what is this?" }, image(), image("low")] }],
    });
    const text = measurePrompt({ messages: [{ role: "user", content: [{ type: "text", text: "what is this?" }] }] });
    expect(holdInputTokens(p, "openai", "gpt-4o-mini") - holdInputTokens(text, "openai", "gpt-4o-mini")).toBe(
      48169 + 2833,
    );
    expect(
      holdInputTokens(p, "anthropic", "claude-haiku-4-5") - holdInputTokens(text, "anthropic", "claude-haiku-4-5"),
    ).toBe(3200);
  });

  test("tools, the tool-call history, the response schema and web-search results all count", () => {
    const base: ChatMessage[] = [{ role: "user", content: "weather?" }];
    const history: ChatMessage[] = [
      ...base,
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_abcdefghijkl",
            type: "function",
            function: { name: "lookup_weather", arguments: '{"city":"Seoul","unit":"c"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_abcdefghijkl", content: '{"temp_c":21}' },
    ];
    const tools = [
      {
        type: "function" as const,
        function: { name: "lookup_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
      },
    ];
    const at = (p: ReturnType<typeof measurePrompt>, protocol = "openai") => holdInputTokens(p, protocol, "gpt-4o");
    const plain = at(measurePrompt({ messages: base }));
    const withHistory = at(measurePrompt({ messages: history }));
    // The call id twice (17), the name (14), the arguments (27), the result (13); two more messages.
    expect(withHistory - plain).toBe(Math.ceil((8 + 17 + 14 + 27 + 17 + 13) / 3) - Math.ceil(8 / 3) + 2 * 4);
    const withTools = measurePrompt({ messages: base, tools });
    expect(at(withTools)).toBeGreaterThan(plain + JSON.stringify(tools).length / 3);
    // Anthropic's tool-use system prompt.
    expect(at(withTools, "anthropic") - at(withTools)).toBe(346);
    const schema = {
      type: "json_schema",
      json_schema: { name: "answer", schema: { type: "object", properties: { text: { type: "string" } } } },
    };
    expect(at(measurePrompt({ messages: base, response_format: schema }))).toBeGreaterThan(
      plain + JSON.stringify(schema).length / 3 - 1,
    );
    expect(
      at(measurePrompt({ messages: base }, { maxResults: 5, searchPrompt: "Use these results." })),
    ).toBeGreaterThan(plain + (5 * 1000) / 3);
  });
});

describe("the hold of a request with images (HTTP)", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway();
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  for (const [model, perImage, inputUsdPerM] of [
    ["gpt-4o-mini", 48169, 0.15],
    ["claude-haiku-4-5", 1600, 1.25], // held at the dearer of the input and cache-write prices
  ] as const) {
    test(`${model}: two image parts are held at the provider's maximum each`, async () => {
      const { key } = await tenant(g, 1000);
      const r = await chat(g, key.key, {
        model,
        max_tokens: 1,
        messages: [{ role: "user", content: [{ type: "text", text: "compare" }, image(), image()] }],
      });
      expect(r.status).toBe(200);
      const [h] = await g.gw.deps.db.query<{ a: string }>("select amount_micro::text as a from holds where id = $1", [
        r.headers.get("x-request-id"),
      ]);
      const imagesMicro = (2 * perImage * inputUsdPerM * 1400) | 0; // USD per M tokens × 1400 KRW/USD = micro-won per token
      expect(BigInt(h!.a)).toBeGreaterThanOrEqual(BigInt(imagesMicro));
    });
  }
});
