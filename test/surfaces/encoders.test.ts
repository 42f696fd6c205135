/**
 * The schema is the type: every encoder's output matches the TypeBox schema its surface declares
 * (and the OpenAPI document shows). The real encoders run on representative core results (text,
 * tool calls, citations, cache writes, a cut answer, no provider), and a body that departs from
 * its schema is caught, naming the field. The same schemas checked against the gateway's real
 * answers over HTTP are in ./answers.test.ts.
 */
import { describe, expect, test } from "bun:test";
import type { ChatOutcome } from "../../src/core/chat/plan";
import type { ChatResult, Usage } from "../../src/core/model/types";
import { GatewayError } from "../../src/core/errors";
import { toJobView } from "../../src/core/video/service";
import type { VideoJobRecord } from "../../src/core/video/types";
import { errorBody, validationBody } from "../../src/http/errors";
import { anthropicErrorBody, anthropicErrorType } from "../../src/surfaces/anthropic/errors";
import { messageObject, tokenCountJson } from "../../src/surfaces/anthropic/from-core";
import {
  ANTHROPIC_ERROR_TYPES,
  AnthropicError,
  AnthropicMessage,
  AnthropicTokenCount,
} from "../../src/surfaces/anthropic/schemas";
import { toChatCompletion } from "../../src/surfaces/openai/chat-from-core";
import { CompatibleError, StructuredError, ValidationErrorBody } from "../../src/surfaces/openai/error-schemas";
import { ChatCompletion } from "../../src/surfaces/openai/schemas";
import { feedbackJson } from "../../src/surfaces/responses/feedback";
import { deletedResponse, echoOf, outputItems, responseObject } from "../../src/surfaces/responses/from-core";
import type { ResponsesBody } from "../../src/surfaces/responses/schema";
import { DeletedResponse, Feedback, ResponseObject } from "../../src/surfaces/responses/schemas";
import { toCoreFromResponses } from "../../src/surfaces/responses/to-core";
import { absolutizeView, jobJson, toAccountJob, toAccountJobList } from "../../src/surfaces/video/from-core";
import { AccountVideoJob, AccountVideoJobs, VideoJob } from "../../src/surfaces/video/schemas";
import { departures } from "./helpers";

const usage = (over: Partial<Usage> = {}): Usage => ({
  promptTokens: 1200,
  completionTokens: 80,
  cachedTokens: 1000,
  cacheWriteTokens: 0,
  reasoningTokens: 16,
  ...over,
});
const cost = { micro: 1_234_567n, usd: 0.000912, krw: 1.23, fx_rate: 1350, markup_rate: 0 };
const call = { id: "call_abc", type: "function" as const, function: { name: "lookup", arguments: '{"q":"서울"}' } };
const cite = { url: "https://example.com/a", title: "A", start_index: 0, end_index: 5 };

/** The core results every dialect's encoder is run on. */
const RESULTS: Record<string, { result: ChatResult; citations?: (typeof cite)[]; provider: string | null }> = {
  text: { result: { content: "안녕하세요", finishReason: "stop", usage: usage() }, provider: "openai" },
  "tool calls, no text": {
    result: { content: null, toolCalls: [call, { ...call, id: "call_2" }], finishReason: "tool_calls", usage: usage() },
    provider: "anthropic",
  },
  "text and a call, cache write": {
    result: {
      content: "Looking it up",
      toolCalls: [call],
      finishReason: "tool_calls",
      usage: usage({ cacheWriteTokens: 200 }),
    },
    provider: "anthropic",
  },
  "web citations": {
    result: { content: "Hello there", finishReason: "stop", usage: usage() },
    citations: [cite],
    provider: "google",
  },
  "cut by the cap, from the cache": {
    result: { content: "", finishReason: "length", usage: usage({ completionTokens: 0, reasoningTokens: 0 }) },
    provider: null,
  },
  "filtered, bad tool arguments": {
    result: {
      content: null,
      toolCalls: [{ ...call, function: { name: "f", arguments: "{not json" } }],
      finishReason: "content_filter",
      usage: usage(),
    },
    provider: "deepseek",
  },
};

const outcome = (r: (typeof RESULTS)[string]): ChatOutcome => ({
  result: r.result,
  model: "gpt-5.2",
  provider: r.provider,
  cost,
  cached: r.provider === null,
  citations: r.citations,
});

const REQUEST_ID = "0f35ed53-1603-4b39-a530-1693cc957829";

describe("each encoder's output matches its declared schema", () => {
  for (const [name, r] of Object.entries(RESULTS)) {
    test(`${name}: chat completion, Responses object, Anthropic message`, () => {
      expect(departures(ChatCompletion, toChatCompletion(outcome(r), REQUEST_ID, 1765591383))).toEqual([]);

      const body = {
        model: "gpt-5.2",
        input: "hi",
        instructions: "Be brief",
        tools: [{ type: "function", name: "lookup", parameters: { type: "object" } }],
        metadata: { team: "a" },
      } as unknown as ResponsesBody;
      const head = {
        id: "resp_0f35ed5316034b39a5301693cc957829",
        createdAt: 1765591383,
        model: "gpt-5.2",
        provider: r.provider,
        echo: echoOf(body, toCoreFromResponses(body).request, { store: true, previousId: "resp_prev" }),
      };
      const done = responseObject(head, {
        status: "completed",
        output: outputItems(r.result, r.citations),
        usage: r.result.usage,
        finish: r.result.finishReason,
        cached: r.provider === null,
        cost,
      });
      expect(departures(ResponseObject, done)).toEqual([]);
      // As `response.created` carries it: nothing answered yet.
      expect(
        departures(ResponseObject, responseObject(head, { status: "in_progress", output: [], usage: null })),
      ).toEqual([]);

      const message = messageObject({ id: "msg_0f35ed53", model: "claude-haiku-4-5" }, r.result, {
        provider: r.provider,
        cached: r.provider === null,
      });
      expect(departures(AnthropicMessage, message)).toEqual([]);
    });
  }

  test("token count, deletion receipt, feedback", () => {
    expect(departures(AnthropicTokenCount, tokenCountJson(4321))).toEqual([]);
    expect(departures(DeletedResponse, deletedResponse("resp_0f35ed5316034b39a5301693cc957829"))).toEqual([]);
    const at = new Date("2026-01-01T00:00:00Z");
    for (const row of [
      { rating: 1, comment: "good", category: "accuracy", model: "gpt-5.2", provider: "openai" },
      { rating: -1, comment: null, category: null, model: null, provider: null },
    ])
      expect(departures(Feedback, feedbackJson(REQUEST_ID, { ...row, createdAt: at, updatedAt: at }))).toEqual([]);
  });

  test("video jobs: the job object, a replayed submit, the dashboard's record and page", () => {
    const job = (over: Partial<VideoJobRecord>): VideoJobRecord =>
      ({
        id: "7b0c6f1e-2f4b-4a51-9a57-1f0a8b2c3d4e",
        keyId: "5d2f9f5e-8a0b-4d6c-9e1f-2a3b4c5d6e7f",
        model: "veo-3.1",
        status: "processing",
        request: { prompt: "a cat on a skateboard" },
        resultUrl: null,
        costMicro: null,
        error: null,
        assets: [],
        storageKey: null,
        createdAt: new Date("2026-01-01T00:00:00Z"),
        ...over,
      }) as VideoJobRecord;
    const done = job({
      status: "succeeded",
      resultUrl: "/v1/jobs/7b0c6f1e-2f4b-4a51-9a57-1f0a8b2c3d4e/content",
      costMicro: 2_000_000_000n,
      assets: [{ type: "video", url: "/v1/jobs/7b0c6f1e-2f4b-4a51-9a57-1f0a8b2c3d4e/content" }],
      storageKey: "videos/7b0c",
    });
    const failed = job({ status: "failed", error: { code: "generation_failed", message: "The provider failed" } });
    for (const j of [job({}), done, failed]) {
      expect(departures(VideoJob, jobJson(j, "https://gw.example"))).toEqual([]);
      expect(departures(AccountVideoJob, toAccountJob(j, "https://gw.example"))).toEqual([]);
    }
    // A submit's answer as the video service keeps it (relative URLs), made absolute for a replay.
    expect(departures(VideoJob, absolutizeView(toJobView(done, null), "https://gw.example"))).toEqual([]);
    expect(departures(AccountVideoJobs, toAccountJobList([done, failed, job({})], 2, "https://gw.example"))).toEqual(
      [],
    );
  });

  test("errors in the OpenAI dialect: structured, compatible envelope, validation list", () => {
    const structured = [
      new GatewayError("insufficient_credits"),
      new GatewayError("model_not_found", undefined, { suggestions: ["gpt-5.2"], param: "model" }),
      new GatewayError("upstream_unavailable", undefined, {
        providers: [{ provider: "openai", error: "timeout" }],
        upstream: { status: 503, reason: "overloaded", detail: "과부하" },
        retryAfter: 3,
      }),
    ];
    for (const e of structured)
      for (const lang of ["ko", "en"] as const) expect(departures(StructuredError, errorBody(e, lang))).toEqual([]);
    expect(departures(CompatibleError, errorBody(new GatewayError("not_found")))).toEqual([]);
    const issues = [
      { loc: ["body", "messages", 0, "role"], msg: "허용되지 않는 값입니다.", en: "Invalid value", type: "literal" },
      { loc: ["body", "max_tokens"], msg: "필수 항목입니다.", type: "missing" },
    ];
    expect(departures(ValidationErrorBody, validationBody(issues, "en"))).toEqual([]);
  });

  test("errors in the Anthropic dialect: every error type", () => {
    for (const type of ANTHROPIC_ERROR_TYPES)
      expect(
        departures(AnthropicError, anthropicErrorBody(type, "요청 값이 올바르지 않습니다.", "x", REQUEST_ID)),
      ).toEqual([]);
    for (const status of [400, 401, 402, 403, 404, 413, 422, 429, 500, 502, 503])
      expect(departures(AnthropicError, anthropicErrorBody(anthropicErrorType(status, true), "m"))).toEqual([]);
  });
});

describe("a body that departs from its schema is caught, naming the field", () => {
  const good = toChatCompletion(outcome(RESULTS["text and a call, cache write"]!), REQUEST_ID, 1765591383);

  test("a wrong type, a missing field, an unknown finish reason, a malformed tool call", () => {
    const broken = structuredClone(good) as any;
    broken.usage.prompt_tokens = "1200";
    delete broken.cached;
    broken.choices[0].finish_reason = "done";
    delete broken.choices[0].message.tool_calls[0].function.arguments;
    const found = departures(ChatCompletion, broken);
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\/usage\/prompt_tokens: /),
        expect.stringMatching(/^\/cached: /),
        expect.stringMatching(/^\/choices\/0\/finish_reason: /),
        expect.stringMatching(/^\/choices\/0\/message\/tool_calls\/0\/function\/arguments: /),
      ]),
    );
    expect(departures(ChatCompletion, good)).toEqual([]);
  });

  test("an encoder that forgot a field, or wrote a message item badly, fails the check", () => {
    const { cached: _gone, ...forgot } = good;
    expect(departures(ChatCompletion, forgot)).toEqual(expect.arrayContaining([expect.stringMatching(/^\/cached: /)]));

    const body = { model: "m", input: "hi" } as ResponsesBody;
    const echo = echoOf(body, toCoreFromResponses(body).request);
    const response = responseObject(
      { id: "resp_1", createdAt: 1, model: "m", provider: "openai", echo },
      { status: "completed", output: outputItems(RESULTS.text!.result), usage: usage() },
    ) as any;
    // A message item whose text part lost its annotations is neither a message nor a relayed item.
    delete response.output[0].content[0].annotations;
    expect(departures(ResponseObject, response).length).toBeGreaterThan(0);

    const anthropic = anthropicErrorBody("api_error", "m") as any;
    anthropic.error.type = "server_error";
    expect(departures(AnthropicError, anthropic)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^\/error\/type: /)]),
    );
  });
});
