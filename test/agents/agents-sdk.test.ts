/**
 * The OpenAI Agents SDK (JS, `@openai/agents`) against the gateway in demo mode: an `Agent`
 * with a function `tool()` (zod parameters) run by a `Runner` whose model provider points at
 * the gateway, through the Responses API (the SDK's default) and through Chat Completions
 * (`OpenAIChatCompletionsModel`). The simulator calls the tool, the SDK executes it and sends
 * the result, the simulator answers in text and the run ends after two model calls. Tracing is
 * off (it would export to OpenAI). Then the books: each call charged once, and the cost the
 * SDK lets a program see (Chat Completions' `cost` object in `providerData`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Agent, OpenAIChatCompletionsModel, OpenAIProvider, Runner, tool } from "@openai/agents";
import OpenAI from "openai";
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

/** A read-only function tool; `calls` records what the model asked for. */
function wordTool() {
  const calls: string[] = [];
  const lookup = tool({
    name: "lookup_word",
    description: "Looks a word up in the team's glossary.",
    parameters: z.object({ word: z.string() }),
    execute: async ({ word }) => {
      calls.push(word);
      return `glossary entry for ${word}: sim-agents-ok`;
    },
  });
  return { lookup, calls };
}

const CASES: { maker: Maker; api: "responses" | "chat" }[] = [
  { maker: "openai", api: "responses" },
  { maker: "anthropic", api: "responses" },
  { maker: "openai", api: "chat" },
  { maker: "google", api: "chat" },
];

describe("Agents SDK run with a function tool", () => {
  for (const { maker, api } of CASES) {
    test(`${maker} model through ${api === "responses" ? "the Responses API" : "Chat Completions"}: tool, answer, books`, async () => {
      const tenant = await agentTenant(g);
      const model = await modelOf(g, tenant.key, maker);
      const client = new OpenAI({ apiKey: tenant.key, baseURL: `${g.url}/v1`, maxRetries: 0, timeout: 30_000 });
      const { lookup, calls } = wordTool();
      const agent = new Agent({
        name: "Glossary",
        instructions: "Answer with the glossary's words.",
        tools: [lookup],
        model: api === "chat" ? new OpenAIChatCompletionsModel(client, model) : model,
      });
      const runner = new Runner({
        modelProvider: new OpenAIProvider({ openAIClient: client, useResponses: true }),
        tracingDisabled: true,
      });
      g.gw.sim!.reset();
      const result = await runner.run(agent, "Use lookup_word for the word gateway.", { maxTurns: 4 });

      expect(calls).toHaveLength(1);
      expect(typeof calls[0]).toBe("string");
      expect(result.rawResponses).toHaveLength(2);
      // The answer to the tool result echoes its end: the SDK sent the tool's output back.
      expect(result.finalOutput).toStartWith(`Simulated reply from ${maker}/${model}:`);
      expect(result.finalOutput).toContain("sim-agents-ok");
      expect(simCalls(g)).toBe(2);
      const b = await expectChargedOnce(g, tenant, { calls: 2, api, provider: maker, model });
      // The SDK's usage is the gateway's: the tokens the books charged.
      const tokens = b.events.reduce((s, e) => s + e.prompt_tokens + e.completion_tokens, 0);
      expect(result.state.usage.totalTokens).toBe(tokens);
      // What the SDK shows of the money: each response's requestId is the gateway's request id;
      // through Chat Completions the body's `cost` object survives in providerData (the
      // Responses JSON carries its cost in headers only, which the SDK does not expose).
      const byId = new Map(b.events.map((e) => [e.request_id, e]));
      for (const raw of result.rawResponses) {
        const event = byId.get(raw.requestId!);
        expect(event).toBeDefined();
        const cost = (raw.providerData as { cost?: { krw: number } } | undefined)?.cost;
        if (api === "chat") expect(cost?.krw).toBe(microToKrwRounded(BigInt(event.cost_micro)));
        else expect(cost).toBeUndefined();
      }
    }, 60_000);
  }
});
