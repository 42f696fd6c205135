/**
 * What each request builder leaves out, beside the body it builds: the settings the vendor
 * has no field for, and those it refuses in this combination (with why).
 */
import { describe, expect, test } from "bun:test";
import type { ChatRequest } from "../../src/core/model/types";
import { buildOpenAIChatRequest } from "../../src/providers/openai/request";
import { buildAnthropicRequest } from "../../src/providers/anthropic/request";
import { buildGeminiRequest } from "../../src/providers/gemini/request";

const base: ChatRequest = { model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 4096 };
const all: ChatRequest = {
  ...base,
  temperature: 0.3,
  seed: 1,
  frequency_penalty: 0.1,
  presence_penalty: 0.1,
  logit_bias: { "1": 1 },
  parallel_tool_calls: false,
  service_tier: "flex",
  passthrough: { user: "u-1" },
};
const names = (d: { setting: string }[]) => d.map((x) => x.setting).sort();

describe("request builders report what they leave out", () => {
  test("OpenAI-compatible: only service_tier, and only where the provider takes none", () => {
    expect(buildOpenAIChatRequest(all, { stream: false, forwardServiceTier: true }).dropped).toEqual([]);
    const other = buildOpenAIChatRequest(all, { stream: false, forwardServiceTier: false });
    expect(other.dropped).toEqual([{ setting: "service_tier" }]);
    expect(other.body.service_tier).toBeUndefined();
    expect(other.body.logit_bias).toEqual({ "1": 1 });
  });

  test("Anthropic: no seed, penalties, logit_bias, service_tier or passthrough extras", () => {
    const built = buildAnthropicRequest(all, { stream: false });
    expect(names(built.dropped)).toEqual([
      "frequency_penalty",
      "logit_bias",
      "presence_penalty",
      "seed",
      "service_tier",
      "user",
    ]);
    expect(built.body.temperature).toBe(0.3);
    expect(buildAnthropicRequest(base, { stream: false }).dropped).toEqual([]);
  });

  test("Anthropic with thinking: temperature and a low top_p are left out, with the reason", () => {
    const built = buildAnthropicRequest(
      { ...base, reasoning_effort: "low", temperature: 0.3, top_p: 0.5 },
      { stream: false },
    );
    expect(built.body.thinking).toBeDefined();
    expect(built.dropped).toEqual([
      { setting: "temperature", details: "not sent with extended thinking" },
      { setting: "top_p", details: "not sent with extended thinking" },
    ]);
    expect(buildAnthropicRequest({ ...base, reasoning_effort: "low", top_p: 0.97 }, { stream: false }).dropped).toEqual(
      [],
    );
  });

  test("Anthropic: an effort thinking cannot honour is reported; `none` is honoured", () => {
    expect(
      buildAnthropicRequest({ ...base, max_tokens: 1000, reasoning_effort: "high" }, { stream: false }).dropped,
    ).toEqual([{ setting: "reasoning_effort", details: "max_tokens leaves no room for thinking" }]);
    const forced = buildAnthropicRequest(
      {
        ...base,
        reasoning_effort: "high",
        tools: [{ type: "function", function: { name: "f" } }],
        tool_choice: "required",
      },
      { stream: false },
    );
    expect(forced.dropped).toEqual([{ setting: "reasoning_effort", details: "not sent with a forced tool" }]);
    expect(buildAnthropicRequest({ ...base, reasoning_effort: "none" }, { stream: false }).dropped).toEqual([]);
  });

  test("Gemini: no logit_bias, parallel_tool_calls, service_tier or passthrough extras", () => {
    expect(names(buildGeminiRequest(all).dropped)).toEqual([
      "logit_bias",
      "parallel_tool_calls",
      "service_tier",
      "user",
    ]);
    expect(buildGeminiRequest(base).dropped).toEqual([]);
  });
});
