/**
 * The Vercel AI SDK (`ai` 7, `@ai-sdk/openai` 4) against the gateway in demo mode:
 * `generateText` with a zod `tool()` and a `stopWhen` step bound, through the provider's
 * default Responses model and its `.chat()` Chat Completions model. The simulator calls the
 * tool in step one and answers its result in step two, so the loop ends by itself well under
 * the bound. Each step's `response.headers` carry the gateway's `x-cost-krw`: checked against
 * the usage event of that request id, and the books (each call charged once) in SQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";
import { microToKrwRounded } from "../../src/lib/money";
import type { TestGateway } from "../harness";
import { agentTenant, expectChargedOnce, type Maker, modelOf, simCalls, startDemoGateway } from "./helpers";

let g: TestGateway;
beforeAll(async () => {
  g = await startDemoGateway();
}, 60_000);
afterAll(async () => {
  await g?.stop();
});

const CASES: { maker: Maker; api: "responses" | "chat" }[] = [
  { maker: "openai", api: "responses" },
  { maker: "google", api: "responses" },
  { maker: "anthropic", api: "chat" },
  { maker: "openai", api: "chat" },
];

describe("generateText with a tool and stopWhen", () => {
  for (const { maker, api } of CASES) {
    test(`${maker} model through ${api === "responses" ? "the Responses API" : "Chat Completions"}: two steps, cost headers, books`, async () => {
      const tenant = await agentTenant(g);
      const model = await modelOf(g, tenant.key, maker);
      const gateway = createOpenAI({ apiKey: tenant.key, baseURL: `${g.url}/v1` });
      const asked: string[] = [];
      g.gw.sim!.reset();
      const result = await generateText({
        model: api === "chat" ? gateway.chat(model) : gateway(model),
        tools: {
          get_weather: tool({
            description: "The weather in a city.",
            inputSchema: z.object({ city: z.string() }),
            execute: async ({ city }) => {
              asked.push(city);
              return { city, forecast: "sunny, sim-ai-sdk-ok" };
            },
          }),
        },
        stopWhen: stepCountIs(5),
        maxRetries: 0,
        timeout: 30_000,
        prompt: "Use get_weather for Seoul.",
      });

      expect(asked).toHaveLength(1);
      expect(result.steps).toHaveLength(2);
      expect(result.steps[0]!.finishReason).toBe("tool-calls");
      expect(result.steps[0]!.toolCalls[0]!.toolName).toBe("get_weather");
      expect(result.finishReason).toBe("stop");
      expect(result.text).toStartWith(`Simulated reply from ${maker}/${model}:`);
      expect(result.text).toContain("sim-ai-sdk-ok");
      expect(simCalls(g)).toBe(2);

      const b = await expectChargedOnce(g, tenant, { calls: 2, api, provider: maker, model });
      const byId = new Map(b.events.map((e) => [e.request_id, e]));
      for (const step of result.steps) {
        const headers = step.response.headers ?? {};
        const event = byId.get(headers["x-request-id"]!);
        expect(event).toBeDefined();
        expect(Number(headers["x-cost-krw"])).toBe(microToKrwRounded(BigInt(event.cost_micro)));
      }
      const tokens = b.events.reduce((s, e) => s + e.prompt_tokens + e.completion_tokens, 0);
      expect(result.totalUsage.totalTokens).toBe(tokens);
    }, 60_000);
  }
});
