/**
 * Recorded vendor error bodies → what the client is told: the provider's status, a reason and
 * our words, with nothing of the body (OpenAI's rate-limit message names the organization, its
 * 401 a key prefix).
 */
import { describe, expect, test } from "bun:test";
import { classifyOpenAIError, classifyOpenAIStreamError } from "../../src/providers/openai/errors";
import { classifyAnthropicError, classifyAnthropicStreamError } from "../../src/providers/anthropic/errors";
import { classifyGeminiError } from "../../src/providers/gemini/errors";
import { failureWords, upstreamSummary } from "../../src/core/upstream/words";
import { UpstreamError } from "../../src/core/upstream/error";
import { httpFixture } from "./helpers";

const cases = [
  ["openai", "error-400.http", classifyOpenAIError, "invalid_request"],
  ["openai", "error-400-context-length.http", classifyOpenAIError, "context_length"],
  ["openai", "error-401.http", classifyOpenAIError, "auth"],
  ["openai", "error-429-rate-limit.http", classifyOpenAIError, "rate_limited"],
  ["openai", "error-429-insufficient-quota.http", classifyOpenAIError, "quota"],
  ["openai", "error-500.http", classifyOpenAIError, "server_error"],
  ["openai", "error-503.http", classifyOpenAIError, "overloaded"],
  ["anthropic", "error-400.http", classifyAnthropicError, "invalid_request"],
  ["anthropic", "error-401.http", classifyAnthropicError, "auth"],
  ["anthropic", "error-429.http", classifyAnthropicError, "rate_limited"],
  ["anthropic", "error-529.http", classifyAnthropicError, "overloaded"],
  ["gemini", "error-400-invalid-api-key.http", classifyGeminiError, "auth"],
  ["gemini", "error-429.http", classifyGeminiError, "rate_limited"],
  ["gemini", "error-503.http", classifyGeminiError, "overloaded"],
] as const;

describe("vendor error bodies become our words", () => {
  for (const [vendor, file, classify, reason] of cases) {
    test(`${vendor} ${file} → ${reason}`, async () => {
      const f = await httpFixture(vendor, file);
      const err = classify(f.status, f.headers, f.body);
      const summary = upstreamSummary(err);
      expect(summary).toMatchObject({ status: f.status, reason });
      // Besides our reason code, the client reads Korean words only: no vendor text at all.
      expect(Object.keys(summary).sort()).toEqual(["detail", "reason", "status"]);
      expect(summary.detail + failureWords(err)).not.toMatch(/[A-Za-z0-9]/);
      expect(summary.detail).toMatch(/[가-힣]/);
      // The operator's log still has it all.
      expect(err.detail).toEqual(JSON.parse(f.body));
    });
  }

  test("in-stream errors too", () => {
    const anthropic = classifyAnthropicStreamError({
      error: { type: "overloaded_error", message: "Overloaded for org acme-corp" },
    });
    expect(failureWords(anthropic)).not.toContain("acme");
    expect(upstreamSummary(anthropic).reason).toBe("overloaded");
    const openai = classifyOpenAIStreamError({
      error: {
        message: "context too long for org-acme",
        type: "invalid_request_error",
        code: "context_length_exceeded",
      },
    });
    expect(upstreamSummary(openai).reason).toBe("context_length");
    expect(failureWords(openai)).not.toContain("acme");
    expect(failureWords(new Error("socket hang up at 10.0.0.7"))).not.toContain("10.0.0.7");
    expect(upstreamSummary(new UpstreamError("timeout", "first byte after 60000 ms"))).toMatchObject({
      status: 400,
      reason: "timeout",
    });
  });
});
