/** The Responses → core chat conversion and the id mapping, as pure functions. */
import { describe, expect, test } from "bun:test";
import { ValidationFailure } from "../../src/core/errors";
import { requestIdFromPath, responseId } from "../../src/surfaces/responses/ids";
import type { ResponsesBody } from "../../src/surfaces/responses/schema";
import { toCoreFromResponses } from "../../src/surfaces/responses/to-core";

const conv = (b: Record<string, unknown>) => toCoreFromResponses({ model: "m", ...b } as ResponsesBody);
const weather = {
  type: "function",
  name: "get_weather",
  description: "Weather",
  parameters: { type: "object", properties: { city: { type: "string" } } },
};

function locOf(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    if (e instanceof ValidationFailure) return e.issues[0]!.loc;
    throw e;
  }
  throw new Error("no validation failure");
}

describe("input and instructions", () => {
  test("a string input is one user message; instructions come first as system", () => {
    const { request } = conv({ input: "hi", instructions: "be brief" });
    expect(request.messages).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "hi" },
    ]);
    expect(request.max_tokens).toBe(4096);
  });

  test("items: messages, a function call joined to the assistant turn, its output as a tool message", () => {
    const { request } = conv({
      input: [
        { role: "developer", content: "rules" },
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "weather in " },
            { type: "input_text", text: "Seoul?" },
          ],
        },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me check." }] },
        { type: "function_call", call_id: "c1", name: "get_weather", arguments: '{"city":"Seoul"}' },
        { type: "function_call", call_id: "c2", name: "get_weather", arguments: '{"city":"Busan"}' },
        { type: "reasoning", id: "rs_1", summary: [] },
        { type: "function_call_output", call_id: "c1", output: "sunny" },
        { type: "function_call_output", call_id: "c2", output: [{ type: "input_text", text: "rain" }] },
      ],
    });
    expect(request.messages).toEqual([
      { role: "system", content: "rules" },
      {
        role: "user",
        content: [
          { type: "text", text: "weather in " },
          { type: "text", text: "Seoul?" },
        ],
      },
      {
        role: "assistant",
        content: "Let me check.",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Seoul"}' } },
          { id: "c2", type: "function", function: { name: "get_weather", arguments: '{"city":"Busan"}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "sunny" },
      { role: "tool", tool_call_id: "c2", content: "rain" },
    ]);
  });

  test("a function call with no assistant text before it opens its own assistant turn", () => {
    const { request } = conv({
      input: [
        { role: "user", content: "x" },
        { type: "function_call", call_id: "c", name: "f", arguments: "{}" },
        { type: "function_call_output", call_id: "c", output: "ok" },
      ],
    });
    expect(request.messages[1]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }],
    });
  });

  test("images become image parts", () => {
    const { request } = conv({
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "what is this" },
            { type: "input_image", image_url: "https://example.com/a.png", detail: "low" },
          ],
        },
      ],
    });
    expect(request.messages[0]!.content).toEqual([
      { type: "text", text: "what is this" },
      { type: "image_url", image_url: { url: "https://example.com/a.png", detail: "low" } },
    ]);
  });

  test("malformed items are 422 with their loc", () => {
    expect(locOf(() => conv({ input: [{ content: "no type, no role" }] }))).toEqual(["body", "input", 0, "type"]);
    expect(locOf(() => conv({ input: [{ type: "function_call", name: "f" }] }))).toEqual([
      "body",
      "input",
      0,
      "call_id",
    ]);
    expect(locOf(() => conv({ input: [{ role: "user", content: [{ type: "input_file", file_id: "f" }] }] }))).toEqual([
      "body",
      "input",
      0,
      "content",
      0,
      "type",
    ]);
    expect(locOf(() => conv({ input: [{ type: "reasoning", summary: [] }] }))).toEqual(["body", "input"]);
  });
});

describe("tools and parameters", () => {
  test("function tools are converted; other tool types are dropped", () => {
    const { request } = conv({
      input: "x",
      tools: [{ type: "web_search" }, weather, { type: "file_search", vector_store_ids: ["v"] }],
      tool_choice: "required",
    });
    expect(request.tools).toEqual([
      { type: "function", function: { name: "get_weather", description: "Weather", parameters: weather.parameters } },
    ]);
    expect(request.tool_choice).toBe("required");
  });

  test("only non-function tools: no tools and no tool_choice reach the provider", () => {
    const { request } = conv({ input: "x", tools: [{ type: "web_search" }], tool_choice: "auto" });
    expect(request.tools).toBeUndefined();
    expect(request.tool_choice).toBeUndefined();
  });

  test("tool_choice {type: function, name} → the core's forced function; a hosted tool choice is dropped", () => {
    expect(
      conv({ input: "x", tools: [weather], tool_choice: { type: "function", name: "get_weather" } }).request
        .tool_choice,
    ).toEqual({ type: "function", function: { name: "get_weather" } });
    expect(
      conv({ input: "x", tools: [weather], tool_choice: { type: "web_search_preview" } }).request.tool_choice,
    ).toBeUndefined();
    expect(
      locOf(() => conv({ input: "x", tools: [weather], tool_choice: { type: "function", name: "nope" } })),
    ).toEqual(["body", "tool_choice", "name"]);
    expect(locOf(() => conv({ input: "x", tools: [{ type: "function" }] }))).toEqual(["body", "tools", 0, "name"]);
  });

  test("max_output_tokens → max_tokens; sampling, parallel calls and service tier carried", () => {
    const { request } = conv({
      input: "x",
      max_output_tokens: 77,
      temperature: 0.2,
      top_p: 0.9,
      parallel_tool_calls: false,
      service_tier: "flex",
    });
    expect(request).toMatchObject({
      max_tokens: 77,
      temperature: 0.2,
      top_p: 0.9,
      parallel_tool_calls: false,
      service_tier: "flex",
    });
  });

  test("reasoning: the object's effort and mode, the top-level fields win", () => {
    expect(conv({ input: "x", reasoning: { effort: "low", mode: "pro" } })).toMatchObject({
      request: { reasoning_effort: "low" },
      reasoningMode: "pro",
    });
    expect(
      conv({
        input: "x",
        reasoning: { effort: "low", mode: "pro" },
        reasoning_effort: "high",
        reasoning_mode: "standard",
      }),
    ).toMatchObject({ request: { reasoning_effort: "high" }, reasoningMode: "standard" });
    expect(conv({ input: "x" }).reasoningMode).toBeUndefined();
  });

  test("ignored fields and unknown fields do not reach the provider", () => {
    const { request } = conv({
      input: "x",
      text: { format: { type: "text" } },
      store: true,
      previous_response_id: "resp_1",
      include: ["reasoning.encrypted_content"],
      prompt_cache_key: "k",
      metadata: { a: "b" },
      truncation: "auto",
    });
    expect(Object.keys(request).sort()).toEqual(["max_tokens", "messages", "temperature"]);
  });
});

describe("ids", () => {
  test("a response id maps back to its request id, in either form", () => {
    const rid = "0f35ed53-1603-4953-a169-3cc957829881";
    expect(responseId(rid)).toBe("resp_0f35ed5316034953a1693cc957829881");
    expect(requestIdFromPath(responseId(rid))).toBe(rid);
    expect(requestIdFromPath(rid.toUpperCase())).toBe(rid);
    expect(requestIdFromPath("chatcmpl-0f35ed5316034953a1693cc957829881")).toBe(rid);
    for (const bad of ["resp_123", "not-a-uuid", "resp_0f35ed5316034953a1693cc95782988g", ""])
      expect(requestIdFromPath(bad)).toBeNull();
  });
});
