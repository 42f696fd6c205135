import { afterAll, describe, expect, test } from "bun:test";
import { UpstreamError } from "../../src/core/upstream/error";
import type { ChatRequest } from "../../src/core/model/types";
import {
  classifyGeminiError,
  fromGeminiResponse,
  geminiChatProvider,
  geminiThinkingConfig,
  mapGeminiFinishReason,
  readGeminiStream,
  toGeminiRequest,
  toGeminiSchema,
  toGeminiToolConfig,
} from "../../src/providers/gemini";
import {
  ctxFor,
  drain,
  fixtureBytes,
  fixtureJson,
  fixtureServer,
  httpFixture,
  sseEventsOf,
  textOf,
  type Reply,
} from "./helpers";

const base: ChatRequest = {
  model: "gemini-2.5-flash",
  messages: [{ role: "user", content: "Hello" }],
  max_tokens: 1024,
};
let n = 0;
const fakeId = () => `call_test${++n}`;

describe("toGeminiRequest", () => {
  test("contents, systemInstruction and generationConfig (fixture shape)", async () => {
    const expected = await fixtureJson("gemini", "generate-content-request-thinking-budget.json");
    const body = toGeminiRequest({
      ...base,
      temperature: 1.0,
      reasoning_effort: "low",
      messages: [
        { role: "system", content: "You are a helpful assistant." },
        { role: "user", content: "Hello" },
      ],
    });
    expect(body.contents).toEqual(expected.contents);
    expect(body.systemInstruction).toEqual(expected.systemInstruction);
    // The gateway does not ask for thought summaries (it does not surface them).
    const { includeThoughts: _, ...thinking } = expected.generationConfig.thinkingConfig;
    expect(body.generationConfig).toEqual({ ...expected.generationConfig, thinkingConfig: thinking });
  });

  test("all generation parameters; unsupported ones dropped", () => {
    const body = toGeminiRequest({
      ...base,
      top_p: 0.8,
      stop: ["END", ""],
      seed: 3,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      response_format: { type: "json_object" },
      logit_bias: { "1": 2 },
      parallel_tool_calls: true,
      service_tier: "flex",
    });
    expect(body.generationConfig).toEqual({
      maxOutputTokens: 1024,
      topP: 0.8,
      stopSequences: ["END"],
      seed: 3,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      responseMimeType: "application/json",
    });
    expect(Object.keys(body).sort()).toEqual(["contents", "generationConfig"]);
  });

  test("json_schema → responseJsonSchema", () => {
    const schema = { type: "object", properties: { a: { type: "string" } } };
    const body = toGeminiRequest({
      ...base,
      response_format: { type: "json_schema", json_schema: { name: "x", schema } },
    });
    expect(body.generationConfig).toMatchObject({ responseMimeType: "application/json", responseJsonSchema: schema });
  });

  test("tools, toolConfig, function call / response round trip, images", () => {
    const body = toGeminiRequest({
      ...base,
      tools: [
        {
          type: "function",
          function: {
            name: "weather",
            description: "d",
            parameters: {
              $schema: "x",
              type: "object",
              additionalProperties: false,
              properties: { additionalProperties: { type: "string" } },
            },
          },
        },
      ],
      tool_choice: { type: "function", function: { name: "weather" } },
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image_url", image_url: { url: "data:image/jpeg;base64,QUJD" } },
            { type: "image_url", image_url: { url: "https://e.com/a.png" } },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "weather", arguments: '{"location":"SF"}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"temp":20}' },
        { role: "tool", tool_call_id: "call_2", name: "other", content: "plain" },
      ],
    });
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: "weather",
            description: "d",
            parameters: { type: "object", properties: { additionalProperties: { type: "string" } } },
          },
        ],
      },
    ]);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["weather"] } });
    expect(body.contents).toEqual([
      {
        role: "user",
        parts: [
          { text: "look" },
          { inlineData: { mimeType: "image/jpeg", data: "QUJD" } },
          { fileData: { mimeType: "image/png", fileUri: "https://e.com/a.png" } },
        ],
      },
      { role: "model", parts: [{ functionCall: { name: "weather", args: { location: "SF" } } }] },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "weather", response: { temp: 20 } } },
          { functionResponse: { name: "other", response: { result: "plain" } } },
        ],
      },
    ]);
  });

  test("toolConfig modes", () => {
    expect(toGeminiToolConfig("auto")).toEqual({ functionCallingConfig: { mode: "AUTO" } });
    expect(toGeminiToolConfig("none")).toEqual({ functionCallingConfig: { mode: "NONE" } });
    expect(toGeminiToolConfig("required")).toEqual({ functionCallingConfig: { mode: "ANY" } });
    expect(toGeminiToolConfig(undefined)).toBeUndefined();
  });

  test("schema cleaning keeps property names", () => {
    expect(
      toGeminiSchema({
        type: "array",
        items: { type: "object", additionalProperties: true, properties: { $schema: { type: "string" } } },
      }),
    ).toEqual({
      type: "array",
      items: { type: "object", properties: { $schema: { type: "string" } } },
    });
  });

  test("thinking table per model family", () => {
    expect(geminiThinkingConfig("gemini-2.5-flash", undefined)).toBeUndefined();
    expect(geminiThinkingConfig("gemini-2.5-flash", "none")).toEqual({ thinkingBudget: 0 });
    expect(geminiThinkingConfig("gemini-2.5-flash", "minimal")).toEqual({ thinkingBudget: 512 });
    expect(geminiThinkingConfig("gemini-2.5-flash", "low")).toEqual({ thinkingBudget: 1024 });
    expect(geminiThinkingConfig("gemini-2.5-flash", "medium")).toEqual({ thinkingBudget: 8192 });
    expect(geminiThinkingConfig("gemini-2.5-flash", "high")).toEqual({ thinkingBudget: 16384 });
    expect(geminiThinkingConfig("gemini-2.5-flash", "xhigh")).toEqual({ thinkingBudget: 24576 });
    expect(geminiThinkingConfig("gemini-2.5-flash", "max")).toEqual({ thinkingBudget: -1 });
    expect(geminiThinkingConfig("gemini-2.5-pro", "none")).toEqual({ thinkingBudget: 128 });
    expect(geminiThinkingConfig("gemini-2.5-pro", "xhigh")).toEqual({ thinkingBudget: 24576 });
    expect(geminiThinkingConfig("gemini-2.5-flash-lite", "minimal")).toEqual({ thinkingBudget: 512 });
    expect(geminiThinkingConfig("gemini-3-pro-preview", "low")).toEqual({ thinkingLevel: "low" });
    expect(geminiThinkingConfig("gemini-3-pro-preview", "max")).toEqual({ thinkingLevel: "high" });
    expect(geminiThinkingConfig("gemini-3-flash-preview", "none")).toEqual({ thinkingLevel: "minimal" });
  });
});

describe("fixtures: responses and streams", () => {
  test("generate-content.json → cached tokens inside prompt, thoughts added to completion", async () => {
    const r = fromGeminiResponse(await fixtureJson("gemini", "generate-content.json"), fakeId);
    expect(r).toEqual({
      id: "FAKEresp-generate-0001",
      content: "Hello! How can I help you today?",
      finishReason: "stop",
      usage: {
        promptTokens: 4105,
        completionTokens: 9 + 244,
        cachedTokens: 4096,
        cacheWriteTokens: 0,
        reasoningTokens: 244,
      },
    });
  });

  test("function-call.json → tool call with generated id, STOP with calls → tool_calls", async () => {
    const r = fromGeminiResponse(await fixtureJson("gemini", "function-call.json"), () => "call_x");
    expect(r.content).toBeNull();
    expect(r.toolCalls).toEqual([
      { id: "call_x", type: "function", function: { name: "weather", arguments: '{"location":"San Francisco"}' } },
    ]);
    expect(r.finishReason).toBe("tool_calls");
    expect(r.usage).toEqual({
      promptTokens: 29,
      completionTokens: 15 + 893,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 893,
    });
  });

  test("finish reasons", () => {
    expect(mapGeminiFinishReason("STOP", false)).toBe("stop");
    expect(mapGeminiFinishReason("STOP", true)).toBe("tool_calls");
    expect(mapGeminiFinishReason("MAX_TOKENS", false)).toBe("length");
    for (const r of ["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"])
      expect(mapGeminiFinishReason(r, false)).toBe("content_filter");
    expect(mapGeminiFinishReason("OTHER", false)).toBe("stop");
  });

  test("a blocked prompt (no candidates) → content_filter", () => {
    expect(fromGeminiResponse({ promptFeedback: { blockReason: "SAFETY" } }).finishReason).toBe("content_filter");
  });

  for (const seed of [1, 2, 3]) {
    test(`CRLF stream (seed ${seed}) → text, finish, last cumulative usage`, async () => {
      const { events, error } = await drain(
        readGeminiStream(sseEventsOf(await fixtureBytes("gemini", "stream-generate-content.sse"), seed), fakeId),
      );
      expect(error).toBeUndefined();
      expect(textOf(events)).toBe("Hello! How can I help you today?");
      expect(events.slice(-2)).toEqual([
        { type: "finish", reason: "stop" },
        {
          type: "usage",
          usage: {
            promptTokens: 9,
            completionTokens: 9 + 185,
            cachedTokens: 0,
            cacheWriteTokens: 0,
            reasoningTokens: 185,
          },
        },
      ]);
    });
  }

  test("thought parts are not surfaced as text", async () => {
    const { events, error } = await drain(
      readGeminiStream(sseEventsOf(await fixtureBytes("gemini", "stream-generate-content-thoughts.sse")), fakeId),
    );
    expect(error).toBeUndefined();
    expect(textOf(events)).toBe("Hello! How can I help you today?");
  });

  test("function-call stream → one complete tool_call, finish tool_calls", async () => {
    const { events, error } = await drain(
      readGeminiStream(sseEventsOf(await fixtureBytes("gemini", "stream-function-call.sse")), () => "call_s"),
    );
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: "tool_call", index: 0, id: "call_s", name: "weather", arguments: '{"location":"San Francisco"}' },
      { type: "finish", reason: "tool_calls" },
      {
        type: "usage",
        usage: { promptTokens: 29, completionTokens: 60, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 45 },
      },
    ]);
  });

  test("stream without a finishReason chunk → truncated", async () => {
    const text = await Bun.file(new URL("../fixtures/gemini/stream-generate-content.sse", import.meta.url)).text();
    const chunks = text.split("\r\n\r\n");
    const cut = chunks.slice(0, 2).join("\r\n\r\n") + "\r\n\r\n";
    const { events, error } = await drain(readGeminiStream(sseEventsOf(new TextEncoder().encode(cut)), fakeId));
    expect(textOf(events)).toBe("Hello! How can I help you today?");
    expect(events.some((e) => e.type === "finish" || e.type === "usage")).toBe(false);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.kind).toBe("truncated");
  });

  test("an error payload inside the stream → classified", async () => {
    const s =
      'data: {"candidates":[{"content":{"parts":[{"text":"hi"}]}}]}\r\n\r\ndata: {"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}\r\n\r\n';
    const { events, error } = await drain(readGeminiStream(sseEventsOf(new TextEncoder().encode(s)), fakeId));
    expect(textOf(events)).toBe("hi");
    expect(error.kind).toBe("transient");
  });
});

describe("fixtures: errors", () => {
  const cases: Array<[string, string, number | undefined]> = [
    ["error-400-invalid-api-key.http", "rejected", undefined],
    ["error-429.http", "rate_limited", 34400],
    ["error-503.http", "transient", undefined],
  ];
  for (const [file, kind, retryAfterMs] of cases) {
    test(`${file} → ${kind}`, async () => {
      const f = await httpFixture("gemini", file);
      const err = classifyGeminiError(f.status, f.headers, f.body);
      expect(err.kind).toBe(kind as never);
      expect(err.status).toBe(f.status);
      expect(err.retryAfterMs).toBe(retryAfterMs);
      expect(err.detail).toEqual(JSON.parse(f.body));
    });
  }

  test("429 without RetryInfo falls back to Retry-After", () => {
    const err = classifyGeminiError(
      429,
      new Headers({ "retry-after": "1" }),
      '{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}',
    );
    expect(err.retryAfterMs).toBe(1000);
  });
});

describe("over HTTP (local fixture server)", () => {
  let next: () => Reply = () => ({ kind: "hang" });
  const srv = fixtureServer(() => next());
  afterAll(() => srv.stop());

  test("generateContent URL and x-goog-api-key", async () => {
    const json = await Bun.file(new URL("../fixtures/gemini/generate-content.json", import.meta.url)).text();
    next = () => ({ kind: "body", body: json });
    const r = await geminiChatProvider.chat(base, ctxFor(srv.url));
    const req = srv.requests.at(-1)!;
    expect(req.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(req.headers.get("x-goog-api-key")).toBe("test-key");
    expect(r.usage.cachedTokens).toBe(4096);
  });

  test("streamGenerateContent?alt=sse", async () => {
    const bytes = await fixtureBytes("gemini", "stream-generate-content.sse");
    next = () => ({
      kind: "body",
      body: bytes,
      headers: { "content-type": "text/event-stream" },
      chunkDelayMs: 1,
      chunkSize: 7,
    });
    const { events, error } = await drain(await geminiChatProvider.chatStream(base, ctxFor(srv.url)));
    expect(error).toBeUndefined();
    expect(srv.requests.at(-1)!.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    expect(textOf(events)).toBe("Hello! How can I help you today?");
  });

  test("429 with RetryInfo over HTTP", async () => {
    const f = await httpFixture("gemini", "error-429.http");
    next = () => ({ kind: "http", fixture: f });
    const err = await geminiChatProvider.chat(base, ctxFor(srv.url)).catch((e) => e);
    expect(err.kind).toBe("rate_limited");
    expect(err.retryAfterMs).toBe(34400);
  });
});
