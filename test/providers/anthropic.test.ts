import { afterAll, describe, expect, test } from "bun:test";
import { UpstreamError } from "../../src/core/upstream/error";
import type { ChatRequest } from "../../src/core/model/types";
import {
  anthropicChatProvider,
  anthropicThinkingBudget,
  classifyAnthropicError,
  fromAnthropicResponse,
  mapAnthropicStopReason,
  mapAnthropicUsage,
  readAnthropicStream,
  toAnthropicRequest,
  toAnthropicToolChoice,
} from "../../src/providers/anthropic";
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
  model: "claude-sonnet-4-5",
  messages: [{ role: "user", content: "Hello" }],
  max_tokens: 1000,
};
const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Get the weather for a location.",
    parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
  },
};

describe("toAnthropicRequest", () => {
  test("system extracted with cache_control, thinking from reasoning_effort, tools (fixture shape)", async () => {
    const expected = await fixtureJson("anthropic", "messages-request-thinking-cache.json");
    const body = toAnthropicRequest(
      {
        model: "claude-sonnet-4-5-20250929",
        max_tokens: 16000,
        reasoning_effort: "medium",
        messages: [
          {
            role: "system",
            content: [{ type: "text", text: expected.system[0].text, cache_control: { type: "ephemeral" } }],
          },
          { role: "user", content: [{ type: "text", text: "Hello" }] },
        ],
        tools: [weatherTool],
      },
      { stream: true },
    );
    expect(body.system).toEqual(expected.system);
    expect(body.messages).toEqual(expected.messages);
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 8192 });
    expect(body.stream).toBe(true);
    expect(body.max_tokens).toBe(16000);
    const { cache_control: _, ...tool } = expected.tools[0];
    expect(body.tools).toEqual([tool]);
  });

  test("messages: images, cache_control on parts, tool_use / tool_result, merged turns", () => {
    const body = toAnthropicRequest(
      {
        ...base,
        messages: [
          { role: "system", content: "be brief" },
          {
            role: "user",
            content: [
              { type: "text", text: "what is this", cache_control: { type: "ephemeral" } },
              { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
              { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } },
            ],
          },
          {
            role: "assistant",
            content: "Let me check.",
            tool_calls: [
              { id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"location":"Seoul"}' } },
              { id: "toolu_2", type: "function", function: { name: "get_weather", arguments: '{"location":"Busan"}' } },
            ],
          },
          { role: "tool", tool_call_id: "toolu_1", content: "sunny" },
          { role: "tool", tool_call_id: "toolu_2", content: "rainy" },
          { role: "user", content: "thanks" },
        ],
      },
      { stream: false },
    );
    expect(body.system).toEqual([{ type: "text", text: "be brief" }]);
    expect(body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "what is this", cache_control: { type: "ephemeral" } },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
          { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Let me check." },
          { type: "tool_use", id: "toolu_1", name: "get_weather", input: { location: "Seoul" } },
          { type: "tool_use", id: "toolu_2", name: "get_weather", input: { location: "Busan" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "sunny" },
          { type: "tool_result", tool_use_id: "toolu_2", content: "rainy" },
          { type: "text", text: "thanks" },
        ],
      },
    ]);
    expect(body.stream).toBeUndefined();
  });

  test("sampling: stop → stop_sequences, temperature clamped, unsupported params dropped", () => {
    const body = toAnthropicRequest(
      {
        ...base,
        stop: "END",
        temperature: 1.6,
        top_p: 0.5,
        seed: 1,
        logit_bias: { "1": 1 },
        frequency_penalty: 1,
        response_format: { type: "json_object" },
      },
      { stream: false },
    );
    expect(body.stop_sequences).toEqual(["END"]);
    expect(body.temperature).toBe(1);
    expect(body.top_p).toBe(0.5);
    for (const k of ["seed", "logit_bias", "frequency_penalty", "response_format", "stop"])
      expect(body[k]).toBeUndefined();
  });

  test("tool_choice mapping", () => {
    expect(toAnthropicToolChoice("auto", undefined)).toEqual({ type: "auto" });
    expect(toAnthropicToolChoice("none", undefined)).toEqual({ type: "none" });
    expect(toAnthropicToolChoice("required", undefined)).toEqual({ type: "any" });
    expect(toAnthropicToolChoice({ type: "function", function: { name: "f" } }, false)).toEqual({
      type: "tool",
      name: "f",
      disable_parallel_tool_use: true,
    });
    expect(toAnthropicToolChoice(undefined, false)).toEqual({ type: "auto", disable_parallel_tool_use: true });
    expect(toAnthropicToolChoice(undefined, undefined)).toBeUndefined();
  });

  test("thinking budget table and the max_tokens cap", () => {
    expect(anthropicThinkingBudget("none", 50000)).toBeUndefined();
    expect(anthropicThinkingBudget(undefined, 50000)).toBeUndefined();
    expect(anthropicThinkingBudget("minimal", 50000)).toBe(1024);
    expect(anthropicThinkingBudget("low", 50000)).toBe(2048);
    expect(anthropicThinkingBudget("medium", 50000)).toBe(8192);
    expect(anthropicThinkingBudget("high", 50000)).toBe(16384);
    expect(anthropicThinkingBudget("xhigh", 50000)).toBe(24576);
    expect(anthropicThinkingBudget("max", 50000)).toBe(32000);
    expect(anthropicThinkingBudget("max", 4096)).toBe(3072); // leaves 1024 for the answer
    expect(anthropicThinkingBudget("high", 1500)).toBe(1024); // floor, still < max_tokens
    expect(anthropicThinkingBudget("high", 1024)).toBeUndefined(); // cannot be < max_tokens
  });

  test("thinking on: temperature and low top_p dropped; a forced tool turns thinking off", () => {
    const on = toAnthropicRequest(
      { ...base, max_tokens: 8000, reasoning_effort: "high", temperature: 0.2, top_p: 0.5 },
      { stream: false },
    );
    expect(on.thinking).toEqual({ type: "enabled", budget_tokens: 6976 });
    expect(on.temperature).toBeUndefined();
    expect(on.top_p).toBeUndefined();
    const forced = toAnthropicRequest(
      {
        ...base,
        max_tokens: 8000,
        reasoning_effort: "high",
        temperature: 0.2,
        tools: [weatherTool],
        tool_choice: "required",
      },
      { stream: false },
    );
    expect(forced.thinking).toBeUndefined();
    expect(forced.temperature).toBe(0.2);
    expect(forced.tool_choice).toEqual({ type: "any" });
  });
});

describe("fixtures: responses and streams", () => {
  test("messages.json → usage includes cache reads in prompt tokens", async () => {
    expect(fromAnthropicResponse(await fixtureJson("anthropic", "messages.json"))).toEqual({
      id: "msg_01FAKEnonstream000000001",
      content: "Hello! How can I help you today?",
      finishReason: "stop",
      usage: {
        promptTokens: 12 + 3068,
        completionTokens: 11,
        cachedTokens: 3068,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
      },
    });
  });

  test("a tool_use response → tool calls with JSON arguments", () => {
    const r = fromAnthropicResponse({
      content: [
        { type: "text", text: "checking" },
        { type: "tool_use", id: "toolu_9", name: "get_weather", input: { location: "Seoul" } },
      ],
      stop_reason: "tool_use",
      usage: { input_tokens: 5, output_tokens: 3 },
    });
    expect(r.toolCalls).toEqual([
      { id: "toolu_9", type: "function", function: { name: "get_weather", arguments: '{"location":"Seoul"}' } },
    ]);
    expect(r.finishReason).toBe("tool_calls");
  });

  test("stop reasons", () => {
    expect(mapAnthropicStopReason("end_turn")).toBe("stop");
    expect(mapAnthropicStopReason("stop_sequence")).toBe("stop");
    expect(mapAnthropicStopReason("max_tokens")).toBe("length");
    expect(mapAnthropicStopReason("tool_use")).toBe("tool_calls");
    expect(mapAnthropicStopReason("refusal")).toBe("content_filter");
    expect(mapAnthropicStopReason("pause_turn")).toBe("stop");
  });

  for (const seed of [1, 2]) {
    test(`messages-stream.sse (seed ${seed}) → text, finish, final usage`, async () => {
      const { events, error } = await drain(
        readAnthropicStream(sseEventsOf(await fixtureBytes("anthropic", "messages-stream.sse"), seed)),
      );
      expect(error).toBeUndefined();
      expect(textOf(events)).toBe("Hello! How can I help you today?");
      expect(events.slice(-2)).toEqual([
        { type: "finish", reason: "stop" },
        {
          type: "usage",
          usage: { promptTokens: 12, completionTokens: 11, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
        },
      ]);
    });
  }

  test("tool-use stream → tool_call start with id/name, argument fragments, finish tool_calls", async () => {
    const { events, error } = await drain(
      readAnthropicStream(sseEventsOf(await fixtureBytes("anthropic", "messages-stream-tool-use.sse"))),
    );
    expect(error).toBeUndefined();
    expect(textOf(events)).toBe("I'll check the weather for you.");
    const calls = events.filter((e) => e.type === "tool_call");
    expect(calls[0]).toEqual({
      type: "tool_call",
      index: 0,
      id: "toolu_01QE1WLsSVp5hy5Q3GmGTmjP",
      name: "get_weather",
      arguments: "",
    });
    expect(calls.every((c) => c.type === "tool_call" && c.index === 0)).toBe(true);
    expect(JSON.parse(calls.map((c) => (c.type === "tool_call" ? (c.arguments ?? "") : "")).join(""))).toEqual({
      location: "San Francisco",
    });
    expect(events.at(-2)).toEqual({ type: "finish", reason: "tool_calls" });
    expect(events.at(-1)).toMatchObject({ usage: { promptTokens: 565, completionTokens: 48 } });
  });

  test("thinking stream → only the answer text; output tokens include thinking", async () => {
    const { events, error } = await drain(
      readAnthropicStream(sseEventsOf(await fixtureBytes("anthropic", "messages-stream-thinking.sse"))),
    );
    expect(error).toBeUndefined();
    expect(textOf(events)).toBe("Hello! How can I help?");
    expect(events.at(-1)).toEqual({
      type: "usage",
      usage: { promptTokens: 69, completionTokens: 53, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    });
  });

  test("cache usage stream → the last value of every field (message_delta revises input and cache)", async () => {
    const { events, error } = await drain(
      readAnthropicStream(sseEventsOf(await fixtureBytes("anthropic", "messages-stream-cache-usage.sse"))),
    );
    expect(error).toBeUndefined();
    expect(events.at(-1)).toEqual({
      type: "usage",
      usage: {
        promptTokens: 6 + 3337 + 6289,
        completionTokens: 198,
        cachedTokens: 6289,
        cacheWriteTokens: 3337,
        reasoningTokens: 0,
      },
    });
  });

  test("one-hour cache writes (usage.cache_creation) are counted apart, JSON and stream", async () => {
    const usage = {
      input_tokens: 10,
      cache_creation_input_tokens: 3000,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
      output_tokens: 7,
    };
    expect(mapAnthropicUsage(usage)).toEqual({
      promptTokens: 3010,
      completionTokens: 7,
      cachedTokens: 0,
      cacheWriteTokens: 3000,
      cacheWrite1hTokens: 2000,
      reasoningTokens: 0,
    });
    const s = [
      `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { id: "m", usage: { ...usage, output_tokens: 1 } } })}\n\n`,
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}\n\n',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}\n\n',
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ].join("");
    const { events } = await drain(readAnthropicStream(sseEventsOf(new TextEncoder().encode(s))));
    expect(events.at(-1)).toEqual({ type: "usage", usage: mapAnthropicUsage(usage) });
  });

  test("message_delta usage without input counts keeps message_start's", async () => {
    const s = [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":10,"cache_read_input_tokens":2000,"output_tokens":1}}}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}\n\n',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":5}}\n\n',
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ].join("");
    const { events } = await drain(readAnthropicStream(sseEventsOf(new TextEncoder().encode(s))));
    expect(events.slice(-2)).toEqual([
      { type: "finish", reason: "length" },
      {
        type: "usage",
        usage: { promptTokens: 2010, completionTokens: 5, cachedTokens: 2000, cacheWriteTokens: 0, reasoningTokens: 0 },
      },
    ]);
  });

  test("mid-stream event: error (overloaded) → transient UpstreamError after the partial text", async () => {
    const { events, error } = await drain(
      readAnthropicStream(sseEventsOf(await fixtureBytes("anthropic", "messages-stream-error-midstream.sse"))),
    );
    expect(textOf(events)).toBe("Hello");
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.kind).toBe("transient");
    expect(error.detail).toEqual({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
  });

  test("stream cut before message_stop → truncated, no finish/usage", async () => {
    const text = await Bun.file(new URL("../fixtures/anthropic/messages-stream.sse", import.meta.url)).text();
    const cut = text.slice(0, text.indexOf("event: message_delta"));
    const { events, error } = await drain(readAnthropicStream(sseEventsOf(new TextEncoder().encode(cut))));
    expect(events.some((e) => e.type === "finish" || e.type === "usage")).toBe(false);
    expect(error.kind).toBe("truncated");
  });

  test("stream cut inside a JSON payload → truncated", async () => {
    const text = await Bun.file(new URL("../fixtures/anthropic/messages-stream.sse", import.meta.url)).text();
    const cut = text.slice(0, text.indexOf("help you today") + 3);
    const { error } = await drain(readAnthropicStream(sseEventsOf(new TextEncoder().encode(cut))));
    expect(error.kind).toBe("truncated");
  });
});

describe("fixtures: errors", () => {
  const cases: Array<[string, string, number | undefined]> = [
    ["error-400.http", "rejected", undefined],
    ["error-401.http", "rejected", undefined],
    ["error-429.http", "rate_limited", 23000],
    ["error-500.http", "transient", undefined],
    ["error-529.http", "transient", undefined],
  ];
  for (const [file, kind, retryAfterMs] of cases) {
    test(`${file} → ${kind}`, async () => {
      const f = await httpFixture("anthropic", file);
      const err = classifyAnthropicError(f.status, f.headers, f.body);
      expect(err.kind).toBe(kind as never);
      expect(err.status).toBe(f.status);
      expect(err.retryAfterMs).toBe(retryAfterMs);
      expect(err.detail).toEqual(JSON.parse(f.body));
    });
  }
});

describe("over HTTP (local fixture server)", () => {
  let next: () => Reply = () => ({ kind: "hang" });
  const srv = fixtureServer(() => next());
  afterAll(() => srv.stop());

  test("chat: /v1/messages with x-api-key and anthropic-version", async () => {
    const json = await Bun.file(new URL("../fixtures/anthropic/messages.json", import.meta.url)).text();
    next = () => ({ kind: "body", body: json });
    const r = await anthropicChatProvider.chat(base, ctxFor(srv.url));
    const req = srv.requests.at(-1)!;
    expect(req.path).toBe("/v1/messages");
    expect(req.headers.get("x-api-key")).toBe("test-key");
    expect(req.headers.get("anthropic-version")).toBe("2023-06-01");
    expect(req.headers.get("authorization")).toBeNull();
    expect(r.usage.cachedTokens).toBe(3068);
  });

  test("chatStream over the wire, slow chunks", async () => {
    const bytes = await fixtureBytes("anthropic", "messages-stream-tool-use.sse");
    next = () => ({
      kind: "body",
      body: bytes,
      headers: { "content-type": "text/event-stream" },
      chunkDelayMs: 1,
      chunkSize: 50,
    });
    const { events, error } = await drain(await anthropicChatProvider.chatStream(base, ctxFor(srv.url)));
    expect(error).toBeUndefined();
    expect(srv.requests.at(-1)!.body.stream).toBe(true);
    expect(events.at(-2)).toEqual({ type: "finish", reason: "tool_calls" });
  });

  test("529 over HTTP → transient before the stream opens", async () => {
    const f = await httpFixture("anthropic", "error-529.http");
    next = () => ({ kind: "http", fixture: f });
    const err = await anthropicChatProvider.chatStream(base, ctxFor(srv.url)).catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.kind).toBe("transient");
    expect(err.status).toBe(529);
  });
});
