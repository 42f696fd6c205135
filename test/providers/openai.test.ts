import { afterAll, describe, expect, test } from "bun:test";
import { UpstreamError } from "../../src/core/upstream/error";
import type { ChatRequest } from "../../src/core/model/types";
import {
  classifyOpenAIError,
  fromOpenAIChatResponse,
  fromOpenAIEmbeddingResponse,
  openAIChatProvider,
  openAIEmbeddingProvider,
  readOpenAIChatStream,
  toOpenAIChatRequest,
} from "../../src/providers/openai";
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

const base: ChatRequest = { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hello" }], max_tokens: 64 };

describe("toOpenAIChatRequest", () => {
  test("maps every chat parameter", () => {
    const req: ChatRequest = {
      ...base,
      temperature: 0.3,
      top_p: 0.9,
      stop: ["END"],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      response_format: { type: "json_object" },
      seed: 7,
      frequency_penalty: 0.1,
      presence_penalty: -0.2,
      parallel_tool_calls: false,
      logit_bias: { "50256": -100 },
      reasoning_effort: "low",
      service_tier: "flex",
      passthrough: { user: "u-1", top_k: 40 },
    };
    expect(toOpenAIChatRequest(req, { stream: false })).toEqual({
      user: "u-1",
      top_k: 40,
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Hello" }],
      max_tokens: 64,
      temperature: 0.3,
      top_p: 0.9,
      stop: ["END"],
      tools: req.tools,
      tool_choice: req.tool_choice,
      response_format: { type: "json_object" },
      seed: 7,
      frequency_penalty: 0.1,
      presence_penalty: -0.2,
      parallel_tool_calls: false,
      logit_bias: { "50256": -100 },
      reasoning_effort: "low",
    });
  });

  test("service_tier only when forwarding is allowed (also from passthrough)", () => {
    const req: ChatRequest = { ...base, service_tier: "priority", passthrough: { service_tier: "flex" } };
    expect(toOpenAIChatRequest(req, { stream: false }).service_tier).toBeUndefined();
    expect(toOpenAIChatRequest(req, { stream: false, forwardServiceTier: true }).service_tier).toBe("priority");
    // `auto` would let the project's settings pick a tier the gateway did not price.
    expect(
      toOpenAIChatRequest({ ...base, service_tier: "auto" }, { stream: false, forwardServiceTier: true }).service_tier,
    ).toBe("default");
  });

  test("streams always ask for usage; passthrough cannot override owned fields", () => {
    const req: ChatRequest = {
      ...base,
      passthrough: { model: "evil", stream: false, n: 3, stream_options: { foo: 1, include_usage: false } },
    };
    const body = toOpenAIChatRequest(req, { stream: true });
    expect(body.model).toBe("gpt-4o-mini");
    expect(body.stream).toBe(true);
    expect(body.n).toBeUndefined();
    expect(body.stream_options).toEqual({ foo: 1, include_usage: true });
    expect(toOpenAIChatRequest(base, { stream: false }).stream).toBeUndefined();
  });

  test("reasoning max becomes xhigh; reasoning models use max_completion_tokens", () => {
    const body = toOpenAIChatRequest(
      { ...base, reasoning_effort: "max" },
      { stream: false, useMaxCompletionTokens: true },
    );
    expect(body.reasoning_effort).toBe("xhigh");
    expect(body.max_completion_tokens).toBe(64);
    expect(body.max_tokens).toBeUndefined();
  });

  test("messages: cache_control dropped, tool calls and tool results kept", () => {
    const req: ChatRequest = {
      ...base,
      messages: [
        { role: "system", content: [{ type: "text", text: "sys", cache_control: { type: "ephemeral" } }] },
        {
          role: "user",
          content: [{ type: "image_url", image_url: { url: "https://x/y.png" }, cache_control: { type: "ephemeral" } }],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }],
        },
        { role: "tool", content: "42", tool_call_id: "c1" },
      ],
    };
    expect(toOpenAIChatRequest(req, { stream: false }).messages).toEqual([
      { role: "system", content: [{ type: "text", text: "sys" }] },
      { role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }],
      },
      { role: "tool", content: "42", tool_call_id: "c1" },
    ]);
  });
});

describe("fixtures: responses and streams", () => {
  test("chat-completion.json → result with cached and reasoning tokens", async () => {
    const r = fromOpenAIChatResponse(await fixtureJson("openai", "chat-completion.json"));
    expect(r).toEqual({
      id: "chatcmpl-FAKEc0mp1et10n0000000000001",
      content: "Hello! How can I help you today?",
      finishReason: "stop",
      usage: {
        promptTokens: 2006,
        completionTokens: 300,
        cachedTokens: 1920,
        cacheWriteTokens: 0,
        reasoningTokens: 256,
      },
    });
  });

  for (const seed of [1, 2, 3]) {
    test(`stream with usage (split seed ${seed}) → text, finish, then usage`, async () => {
      const bytes = await fixtureBytes("openai", "chat-completion-stream-usage.sse");
      const { events, error } = await drain(readOpenAIChatStream(sseEventsOf(bytes, seed)));
      expect(error).toBeUndefined();
      expect(textOf(events)).toBe("Hello! How can I help?");
      expect(events.slice(-2)).toEqual([
        { type: "finish", reason: "stop" },
        {
          type: "usage",
          usage: { promptTokens: 16, completionTokens: 9, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
        },
      ]);
    });
  }

  test("tool-call stream → indexed deltas, finish tool_calls, usage", async () => {
    const { events, error } = await drain(
      readOpenAIChatStream(sseEventsOf(await fixtureBytes("openai", "chat-completion-stream-tool-call.sse"))),
    );
    expect(error).toBeUndefined();
    const calls = events.filter((e) => e.type === "tool_call");
    expect(calls[0]).toEqual({
      type: "tool_call",
      index: 0,
      id: "call_O17Uplv4lJvD6DVdIvFFeRMw",
      name: "get_weather",
      arguments: "",
    });
    expect(calls.map((c) => (c.type === "tool_call" ? c.arguments : "")).join("")).toBe('{"location":"San Francisco"}');
    expect(events.slice(-2).map((e) => e.type)).toEqual(["finish", "usage"]);
    expect(events.at(-2)).toEqual({ type: "finish", reason: "tool_calls" });
    expect(events.at(-1)).toMatchObject({ usage: { promptTokens: 53, completionTokens: 17 } });
  });

  test("truncated stream → partial text, then truncated error, never a finish", async () => {
    const { events, error } = await drain(
      readOpenAIChatStream(sseEventsOf(await fixtureBytes("openai", "chat-completion-stream-truncated.sse"))),
    );
    expect(textOf(events)).toBe("Hello!");
    expect(events.some((e) => e.type === "finish" || e.type === "usage")).toBe(false);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.kind).toBe("truncated");
  });

  test("finish and usage but no [DONE] → truncated", async () => {
    const text = await Bun.file(new URL("../fixtures/openai/chat-completion-stream-usage.sse", import.meta.url)).text();
    const cut = text.slice(0, text.indexOf("data: [DONE]"));
    const { error } = await drain(readOpenAIChatStream(sseEventsOf(new TextEncoder().encode(cut))));
    expect(error.kind).toBe("truncated");
  });

  test("[DONE] without a finish_reason → truncated", async () => {
    const s = 'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n';
    const { error } = await drain(readOpenAIChatStream(sseEventsOf(new TextEncoder().encode(s))));
    expect(error.kind).toBe("truncated");
  });

  test("an error payload inside a 200 stream → classified UpstreamError", async () => {
    const s =
      'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n' +
      'data: {"error":{"message":"overloaded","type":"service_unavailable_error","code":"server_is_overloaded"}}\n\n';
    const { events, error } = await drain(readOpenAIChatStream(sseEventsOf(new TextEncoder().encode(s))));
    expect(textOf(events)).toBe("hi");
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.kind).toBe("transient");
  });

  test("embeddings.json → vectors in index order, prompt tokens", async () => {
    const body = await fixtureJson("openai", "embeddings.json");
    body.data.reverse();
    const r = fromOpenAIEmbeddingResponse(body, 2);
    expect(r.promptTokens).toBe(12);
    expect(r.vectors[0]![0]).toBeCloseTo(0.0057293195);
    expect(r.vectors[1]![0]).toBeCloseTo(-0.037104916);
  });
});

describe("fixtures: errors", () => {
  const cases: Array<[string, string, number | undefined]> = [
    ["error-400.http", "rejected", undefined],
    ["error-400-context-length.http", "rejected", undefined],
    ["error-401.http", "rejected", undefined],
    ["error-429-rate-limit.http", "rate_limited", 7000],
    ["error-429-insufficient-quota.http", "rejected", undefined],
    ["error-500.http", "transient", undefined],
    ["error-503.http", "transient", undefined],
  ];
  for (const [file, kind, retryAfterMs] of cases) {
    test(`${file} → ${kind}`, async () => {
      const f = await httpFixture("openai", file);
      const err = classifyOpenAIError(f.status, f.headers, f.body);
      expect(err.kind).toBe(kind as never);
      expect(err.status).toBe(f.status);
      expect(err.retryAfterMs).toBe(retryAfterMs);
      expect((err.detail as any).error.message).toBe(JSON.parse(f.body).error.message);
    });
  }

  test("retry-after-ms wins over retry-after", () => {
    const err = classifyOpenAIError(
      429,
      new Headers({ "retry-after-ms": "1500", "retry-after": "7" }),
      '{"error":{"type":"requests"}}',
    );
    expect(err.retryAfterMs).toBe(1500);
  });

  test("a non-JSON error body is kept as text", () => {
    const err = classifyOpenAIError(502, new Headers(), "<html>bad gateway</html>");
    expect(err.kind).toBe("transient");
    expect(err.detail).toBe("<html>bad gateway</html>");
  });
});

describe("over HTTP (local fixture server)", () => {
  let next: (r: any) => Reply = () => ({ kind: "hang" });
  const srv = fixtureServer((r) => next(r));
  afterAll(() => srv.stop());

  test("chat: path, bearer key, body, result", async () => {
    const json = await Bun.file(new URL("../fixtures/openai/chat-completion.json", import.meta.url)).text();
    next = () => ({ kind: "body", body: json });
    const r = await openAIChatProvider.chat(base, ctxFor(srv.url + "/"));
    const captured = srv.requests.at(-1)!;
    expect(captured.path).toBe("/v1/chat/completions");
    expect(captured.headers.get("authorization")).toBe("Bearer test-key");
    expect(captured.body).toEqual({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Hello" }],
      max_tokens: 64,
    });
    expect(r.usage.cachedTokens).toBe(1920);
  });

  test("chatStream: include_usage requested, typed events", async () => {
    const bytes = await fixtureBytes("openai", "chat-completion-stream-usage.sse");
    next = () => ({
      kind: "body",
      body: bytes,
      headers: { "content-type": "text/event-stream" },
      chunkDelayMs: 1,
      chunkSize: 33,
    });
    const { events, error } = await drain(await openAIChatProvider.chatStream(base, ctxFor(srv.url)));
    expect(error).toBeUndefined();
    expect(srv.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true });
    expect(textOf(events)).toBe("Hello! How can I help?");
  });

  test("openRawStream: the exact upstream bytes", async () => {
    const bytes = await fixtureBytes("openai", "chat-completion-stream-tool-call.sse");
    next = () => ({
      kind: "body",
      body: bytes,
      headers: { "content-type": "text/event-stream" },
      chunkDelayMs: 1,
      chunkSize: 100,
    });
    const raw = await openAIChatProvider.openRawStream!(base, ctxFor(srv.url));
    expect(new Uint8Array(await new Response(raw).arrayBuffer())).toEqual(new Uint8Array(bytes));
    expect(srv.requests.at(-1)!.body.stream).toBe(true);
  });

  test("openRawStream: a non-200 is thrown before any byte", async () => {
    const f = await httpFixture("openai", "error-429-rate-limit.http");
    next = () => ({ kind: "http", fixture: f });
    const err = await openAIChatProvider.openRawStream!(base, ctxFor(srv.url)).catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.kind).toBe("rate_limited");
    expect(err.retryAfterMs).toBe(7000);
  });

  test("each error fixture served over HTTP → its kind", async () => {
    for (const [file, kind] of [
      ["error-401.http", "rejected"],
      ["error-429-insufficient-quota.http", "rejected"],
      ["error-503.http", "transient"],
    ] as const) {
      const f = await httpFixture("openai", file);
      next = () => ({ kind: "http", fixture: f });
      const err = await openAIChatProvider.chatStream(base, ctxFor(srv.url)).catch((e) => e);
      expect(err.kind).toBe(kind);
      expect(err.status).toBe(f.status);
    }
  });

  test("embeddings: POST /v1/embeddings", async () => {
    const json = await Bun.file(new URL("../fixtures/openai/embeddings.json", import.meta.url)).text();
    next = () => ({ kind: "body", body: json });
    const r = await openAIEmbeddingProvider.embed(["a", "b"], "text-embedding-3-small", ctxFor(srv.url));
    expect(srv.requests.at(-1)!.path).toBe("/v1/embeddings");
    expect(srv.requests.at(-1)!.body).toEqual({
      model: "text-embedding-3-small",
      input: ["a", "b"],
      encoding_format: "float",
    });
    expect(r.vectors.length).toBe(2);
    // Token ids, dimensions and user go out as OpenAI takes them; floats are always asked for.
    await openAIEmbeddingProvider.embed([[1, 2], [3]], "text-embedding-3-large", ctxFor(srv.url), {
      dimensions: 64,
      user: "end-user-7",
    });
    expect(srv.requests.at(-1)!.body).toEqual({
      model: "text-embedding-3-large",
      input: [[1, 2], [3]],
      encoding_format: "float",
      dimensions: 64,
      user: "end-user-7",
    });
  });
});
