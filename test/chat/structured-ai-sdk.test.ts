/**
 * Structured outputs with the Vercel AI SDK (`ai` + `@ai-sdk/openai`) over real sockets, on
 * a model of each protocol: `generateObject` and `streamObject` through chat completions
 * (`.chat(model)`) and through the SDK's default provider, which speaks the Responses API
 * (`text.format`). The object the SDK validated against the zod schema is checked, and every
 * call is charged once.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { createOpenAI } from "@ai-sdk/openai";
import { generateObject, generateText, Output, streamObject } from "ai";
import { z } from "zod";
import { startTestGateway, type TestGateway } from "../harness";
import { tenant } from "../support/chat";

setDefaultTimeout(30_000);
// generateObject / streamObject are deprecated in this SDK version but still what most code calls.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const Recipe = z.object({
  title: z.string(),
  servings: z.number().int(),
  vegetarian: z.boolean(),
  steps: z.array(z.object({ order: z.number().int(), text: z.string() })),
  cuisine: z.enum(["korean", "italian"]),
});
// The simulator's deterministic sample of the schema (docs/simulator.md, "Structured outputs").
const SAMPLE: z.infer<typeof Recipe> = {
  title: "sample title",
  servings: 1,
  vegetarian: true,
  steps: [{ order: 1, text: "sample text" }],
  cuisine: "korean",
};
const MODELS = ["gpt-4o-mini", "claude-haiku-4-5", "gemini-2.5-flash"];

let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway();
}, 60_000);
afterAll(async () => {
  await g?.stop();
});

async function chargesOf(userId: string): Promise<number> {
  await g.gw.settlements.quiesce();
  const rows = await g.gw.deps.db.query<{ n: string }>(
    "select count(*)::text as n from ledger_entries where user_id = $1 and kind = 'charge'",
    [userId],
  );
  return Number(rows[0]!.n);
}

describe("the Vercel AI SDK's structured outputs", () => {
  for (const api of ["chat", "responses"] as const) {
    test(`generateObject through ${api} on every protocol`, async () => {
      const { user, key } = await tenant(g, 100);
      const openai = createOpenAI({ apiKey: key.key, baseURL: g.url + "/v1" });
      for (const model of MODELS) {
        const r = await generateObject({
          model: api === "chat" ? openai.chat(model) : openai(model),
          schema: Recipe,
          prompt: "A recipe, please",
          maxRetries: 0,
        });
        expect([model, r.object]).toEqual([model, SAMPLE]);
        expect(r.finishReason).toBe("stop");
        expect(r.usage.outputTokens).toBeGreaterThan(0);
      }
      expect(await chargesOf(user.id)).toBe(MODELS.length);
    });

    test(`streamObject through ${api} on every protocol`, async () => {
      const { user, key } = await tenant(g, 100);
      const openai = createOpenAI({ apiKey: key.key, baseURL: g.url + "/v1" });
      for (const model of MODELS) {
        const r = streamObject({
          model: api === "chat" ? openai.chat(model) : openai(model),
          schema: Recipe,
          prompt: "Stream a recipe",
          maxRetries: 0,
        });
        let partials = 0;
        for await (const _ of r.partialObjectStream) partials++;
        expect([model, await r.object]).toEqual([model, SAMPLE]);
        expect(partials).toBeGreaterThan(0);
      }
      expect(await chargesOf(user.id)).toBe(MODELS.length);
    });
  }

  test("generateText with Output.object: a map schema takes Claude's forced tool and still parses", async () => {
    const { key } = await tenant(g, 100);
    const openai = createOpenAI({ apiKey: key.key, baseURL: g.url + "/v1" });
    const Scores = z.object({ scores: z.record(z.string(), z.number()), winner: z.string() });
    for (const model of [openai.chat("claude-haiku-4-5"), openai("claude-haiku-4-5")]) {
      const r = await generateText({
        model,
        output: Output.object({ schema: Scores }),
        prompt: "Scores",
        maxRetries: 0,
      });
      expect(r.output).toEqual({ scores: {}, winner: "sample winner" });
      expect(r.finishReason).toBe("stop");
    }
  });
});
