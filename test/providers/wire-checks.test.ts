/**
 * The wire checks of vendor answers (providers/common/wire-check.ts) pass every recorded
 * vendor sample and every simulator sample, and refuse a wrong shape as a transient
 * UpstreamError naming the provider and the first failing path.
 */
import { describe, expect, test } from "bun:test";
import { UpstreamError } from "../../src/core/upstream/error";
import { checkOpenAIChatResponse, checkOpenAIEmbeddingResponse } from "../../src/providers/openai/wire";
import { checkAnthropicResponse } from "../../src/providers/anthropic/wire";
import { checkGeminiResponse } from "../../src/providers/gemini/wire";
import {
  checkKlingPoll,
  checkKlingSubmit,
  checkSeedancePoll,
  checkTaskId,
  checkVeoPoll,
  checkVeoSubmit,
} from "../../src/providers/video/wire";
import type { WireCheck } from "../../src/providers/common/wire-check";

const FIXTURES = new URL("../fixtures/", import.meta.url).pathname;
const json = async (path: string) => JSON.parse(await Bun.file(FIXTURES + path).text());

const samples: [string, WireCheck<unknown>][] = [
  ["openai/chat-completion.json", checkOpenAIChatResponse],
  ["sim/openai/chat-completion.json", checkOpenAIChatResponse],
  ["openai/embeddings.json", checkOpenAIEmbeddingResponse],
  ["sim/openai/embeddings.json", checkOpenAIEmbeddingResponse],
  ["anthropic/messages.json", checkAnthropicResponse],
  ["anthropic/messages-json-tool.json", checkAnthropicResponse],
  ["anthropic/messages-output-format.json", checkAnthropicResponse],
  ["sim/anthropic/messages.json", checkAnthropicResponse],
  ["gemini/generate-content.json", checkGeminiResponse],
  ["gemini/function-call.json", checkGeminiResponse],
  ["sim/gemini/generate-content.json", checkGeminiResponse],
  ["sim/gemini/function-call.json", checkGeminiResponse],
  ["video/kling/create.response.json", checkKlingSubmit],
  ["video/kling/poll.submitted.json", checkKlingPoll],
  ["video/kling/poll.processing.json", checkKlingPoll],
  ["video/kling/poll.succeed.json", checkKlingPoll],
  ["video/kling/poll.failed.json", checkKlingPoll],
  ["video/seedance/create.response.json", checkTaskId],
  ["video/seedance/poll.queued.json", checkSeedancePoll],
  ["video/seedance/poll.running.json", checkSeedancePoll],
  ["video/seedance/poll.succeeded.json", checkSeedancePoll],
  ["video/seedance/poll.failed.json", checkSeedancePoll],
  ["video/veo/create.response.json", checkVeoSubmit],
  ["video/veo/poll.running.json", checkVeoPoll],
  ["video/veo/poll.succeeded.json", checkVeoPoll],
  ["video/veo/poll.failed.json", checkVeoPoll],
  ["video/veo/poll.rai-filtered.json", checkVeoPoll],
];

describe("recorded vendor answers pass their wire checks", () => {
  for (const [file, check] of samples) {
    test(file, async () => {
      const body = await json(file);
      expect(check(body, "vendor")).toBe(body);
    });
  }
});

/** The error a check throws for `body`. */
function refusal(check: WireCheck<unknown>, body: unknown, provider: string): UpstreamError {
  try {
    check(body, provider);
  } catch (e) {
    if (e instanceof UpstreamError) return e;
    throw e;
  }
  throw new Error("the check let the answer through");
}

describe("a wrong shape is a transient upstream failure naming the provider and the path", () => {
  test("a text that is a number", async () => {
    const body = await json("openai/chat-completion.json");
    body.choices[0].message.content = 42;
    const err = refusal(checkOpenAIChatResponse, body, "deepseek");
    expect(err.kind).toBe("transient");
    expect(err.reason).toBe("bad_answer");
    expect(err.retryable).toBe(true);
    expect(err.message).toContain("deepseek");
    expect(err.message).toContain("/choices/0/message/content");
    expect(err.detail).toBe(body);
  });

  test("token counts that are strings are refused: they would be billed as zero", async () => {
    const body = await json("anthropic/messages.json");
    body.usage.output_tokens = "11";
    expect(refusal(checkAnthropicResponse, body, "anthropic").message).toContain("/usage/output_tokens");
    const gemini = await json("gemini/generate-content.json");
    gemini.usageMetadata.candidatesTokenCount = "9";
    expect(refusal(checkGeminiResponse, gemini, "google").message).toContain("/usageMetadata/candidatesTokenCount");
  });

  test("a missing list, a vector that is not numbers, a text block without its text", async () => {
    expect(refusal(checkOpenAIChatResponse, { id: "x" }, "openai").message).toContain("/choices");
    expect(
      refusal(checkOpenAIEmbeddingResponse, { data: [{ index: 0, embedding: "AAAA" }] }, "openai").message,
    ).toContain("/data/0/embedding");
    expect(refusal(checkAnthropicResponse, { content: [{ type: "text" }] }, "anthropic").message).toContain(
      "/content/0",
    );
    expect(refusal(checkVeoSubmit, { name: 42 }, "veo").message).toContain("/name");
  });

  test("block types the adapter does not read pass unread (thinking, server tools)", () => {
    const body = {
      content: [
        { type: "thinking", thinking: "…", signature: "s" },
        { type: "server_tool_use", id: "t", name: "web_search", input: {} },
        { type: "text", text: "ok" },
      ],
    };
    expect(checkAnthropicResponse(body, "anthropic")).toBe(body);
  });
});
