/**
 * Structured outputs on the Anthropic adapter: which path a response_format takes (native
 * `output_config.format` or the forced `json_response` tool), the request bodies against the
 * wire fixtures, and the answers — JSON and streamed — turned back into JSON content.
 */
import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { holdInputTokens, measurePrompt } from "../../src/core/chat/estimate";
import type { ChatRequest } from "../../src/core/model/types";
import {
  anthropicChatProvider,
  anthropicHasNativeJson,
  fromAnthropicResponse,
  readAnthropicStream,
  toAnthropicNativeSchema,
  toAnthropicRequest,
} from "../../src/providers/anthropic";
import { ctxFor, drain, fixtureBytes, fixtureJson, fixtureServer, sseEventsOf, textOf } from "./helpers";

const PROMPT = "Extract the contact: Jane Doe, jane@example.com, wants a demo.";
const contact = {
  type: "object",
  properties: {
    name: { type: "string" },
    email: { type: "string", format: "email" },
    demo_requested: { type: "boolean" },
  },
  required: ["name", "email", "demo_requested"],
  additionalProperties: false,
};
const asked = (
  model: string,
  response_format: Record<string, unknown>,
  over: Partial<ChatRequest> = {},
): ChatRequest => ({
  model,
  max_tokens: 1024,
  messages: [{ role: "user", content: [{ type: "text", text: PROMPT }] }],
  response_format,
  ...over,
});
const schemaFormat = (schema: unknown, strict = true) => ({
  type: "json_schema",
  json_schema: { name: "contact", strict, schema },
});
const userTool = {
  type: "function" as const,
  function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } },
};

describe("which path a response_format takes", () => {
  test("json_schema on Claude 4.5: output_config.format, as the fixture", async () => {
    const body = toAnthropicRequest(
      asked("claude-sonnet-4-5", schemaFormat({ $schema: "http://json-schema.org/draft-07/schema#", ...contact })),
      { stream: false },
    );
    expect(body).toEqual(await fixtureJson("anthropic", "messages-request-output-format.json"));
  });

  test("json_schema on an older Claude: the forced json_response tool, as the fixture", async () => {
    const body = toAnthropicRequest(asked("claude-opus-4-1", schemaFormat(contact)), { stream: false });
    expect(body).toEqual(await fixtureJson("anthropic", "messages-request-json-tool.json"));
  });

  test("json_object, even on a native model: a forced tool taking any object", () => {
    const body = toAnthropicRequest(asked("claude-haiku-4-5", { type: "json_object" }), { stream: true });
    expect(body.output_config).toBeUndefined();
    expect(body.tools).toEqual([
      {
        name: "json_response",
        description: "Give your answer as this tool's input: one JSON object.",
        input_schema: { type: "object" },
      },
    ]);
    expect(body.tool_choice).toEqual({ type: "tool", name: "json_response" });
    expect(body.stream).toBe(true);
  });

  test("a schema outside Anthropic's subset takes the tool on a native model", () => {
    const map = {
      type: "object",
      properties: { scores: { type: "object", additionalProperties: { type: "number" } } },
      required: ["scores"],
    };
    const tree = {
      type: "object",
      properties: { children: { type: "array", items: { $ref: "#" } } },
      required: ["children"],
    };
    for (const schema of [map, tree]) {
      const body = toAnthropicRequest(asked("claude-sonnet-4-5", schemaFormat(schema, false)), { stream: false });
      expect(body.output_config).toBeUndefined();
      expect((body.tools as any[])[0]).toMatchObject({ name: "json_response", input_schema: schema });
    }
  });

  test("the caller's tools: auto lets the model pick (any); a forced tool of theirs wins; none forces ours", () => {
    const auto = toAnthropicRequest(asked("claude-3-5-haiku-latest", { type: "json_object" }, { tools: [userTool] }), {
      stream: false,
    });
    expect((auto.tools as any[]).map((t) => t.name)).toEqual(["lookup", "json_response"]);
    expect(auto.tool_choice).toEqual({ type: "any" });
    const forced = toAnthropicRequest(
      asked("claude-3-5-haiku-latest", { type: "json_object" }, { tools: [userTool], tool_choice: "required" }),
      { stream: false },
    );
    expect((forced.tools as any[]).map((t) => t.name)).toEqual(["lookup"]);
    expect(forced.tool_choice).toEqual({ type: "any" });
    const none = toAnthropicRequest(
      asked(
        "claude-3-5-haiku-latest",
        { type: "json_object" },
        { tools: [userTool], tool_choice: "none", parallel_tool_calls: false },
      ),
      { stream: false },
    );
    expect(none.tool_choice).toEqual({ type: "tool", name: "json_response", disable_parallel_tool_use: true });
  });

  test("a caller's tool named json_response does not collide", () => {
    const mine = { type: "function" as const, function: { name: "json_response", parameters: { type: "object" } } };
    const body = toAnthropicRequest(asked("claude-opus-4-1", { type: "json_object" }, { tools: [mine] }), {
      stream: false,
    });
    expect((body.tools as any[]).map((t) => t.name)).toEqual(["json_response", "json_response_"]);
  });

  test("thinking stays on the native path and is left off with the forced tool", () => {
    const native = toAnthropicRequest(
      asked("claude-sonnet-4-5", schemaFormat(contact), { max_tokens: 8000, reasoning_effort: "low" }),
      { stream: false },
    );
    expect(native.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    const tool = toAnthropicRequest(
      asked("claude-sonnet-4-5", { type: "json_object" }, { max_tokens: 8000, reasoning_effort: "low" }),
      { stream: false },
    );
    expect(tool.thinking).toBeUndefined();
  });

  test("text and no response_format change nothing", () => {
    for (const rf of [{ type: "text" }, undefined]) {
      const body = toAnthropicRequest(asked("claude-sonnet-4-5", rf as any), { stream: false });
      expect(body.output_config).toBeUndefined();
      expect(body.tools).toBeUndefined();
    }
  });
});

describe("the hold", () => {
  test("counts the forced tool's framing and Anthropic's tool-use prompt, so it still bounds the charge", () => {
    const req = asked("claude-opus-4-1", { type: "json_object" });
    const { response_format: _, ...plain } = req;
    const extra =
      holdInputTokens(measurePrompt(req), "anthropic", req.model) -
      holdInputTokens(measurePrompt(plain), "anthropic", req.model);
    expect(extra).toBeGreaterThanOrEqual(346 + 16);
  });
});

describe("native schema adaptation", () => {
  test("open objects are closed; bounds and unsupported formats move into the description", () => {
    const out = toAnthropicNativeSchema({
      type: "object",
      properties: {
        age: { type: "integer", minimum: 0, maximum: 150, description: "years" },
        tags: { type: "array", items: { type: "string", maxLength: 10 }, minItems: 2 },
        when: { type: "string", format: "iso-week" },
        kind: { oneOf: [{ type: "string" }, { type: "null" }] },
      },
      required: ["age", "tags", "when", "kind"],
    })!;
    expect(out.additionalProperties).toBe(false);
    const p = out.properties as any;
    expect(p.age).toEqual({ type: "integer", description: "years (minimum: 0, maximum: 150)" });
    expect(p.tags).toEqual({
      type: "array",
      items: { type: "string", description: "(maxLength: 10)" },
      description: "(minItems: 2)",
    });
    expect(p.when).toEqual({ type: "string", description: "(format: iso-week)" });
    expect(p.kind).toEqual({ anyOf: [{ type: "string" }, { type: "null" }] });
  });

  test("property names that look like keywords are left alone; $defs are adapted", () => {
    const out = toAnthropicNativeSchema({
      type: "object",
      properties: { minimum: { $ref: "#/$defs/n" } },
      required: ["minimum"],
      $defs: { n: { type: "number", multipleOf: 5 } },
    })!;
    expect(out.properties).toEqual({ minimum: { $ref: "#/$defs/n" } });
    expect(out.$defs).toEqual({ n: { type: "number", description: "(multipleOf: 5)" } });
  });

  test("maps, free-form objects, recursion, external refs, object enums and too many optionals are unsuitable", () => {
    const many = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`f${i}`, { type: "string" }]));
    for (const schema of [
      { type: "object", additionalProperties: { type: "string" } },
      { type: "object" },
      {
        type: "object",
        properties: { next: { $ref: "#/$defs/node" } },
        $defs: { node: { type: "object", properties: { next: { $ref: "#/$defs/node" } } } },
      },
      { type: "object", properties: { a: { $ref: "https://example.com/a.json" } } },
      { type: "object", properties: many, required: [] },
      { type: "object", properties: { p: { enum: [{ x: 1 }, "y"] } }, required: ["p"] },
    ]) {
      expect(toAnthropicNativeSchema(schema)).toBeUndefined();
    }
  });

  test("any JSON as a schema: a request body on exactly one path, never an exception", () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 6 }),
        fc.constantFrom("claude-sonnet-4-5", "claude-opus-4-1"),
        (schema, model) => {
          const rf = { type: "json_schema", json_schema: { name: "x", schema } };
          const body = toAnthropicRequest(asked(model, rf), { stream: false });
          expect(Number(body.output_config !== undefined) + Number(body.tools !== undefined)).toBe(1);
        },
      ),
      { numRuns: 300 },
    );
  });

  test("the models with native structured output", () => {
    const yes = [
      "claude-sonnet-4-5",
      "claude-sonnet-4-5-20250929",
      "claude-haiku-4-5",
      "claude-opus-4-5",
      "claude-opus-4-6",
      "claude-sonnet-5",
    ];
    const no = [
      "claude-opus-4-1",
      "claude-opus-4-20250514",
      "claude-sonnet-4-0",
      "claude-3-5-sonnet-20241022",
      "claude-3-7-sonnet-latest",
      "my-model",
    ];
    for (const m of yes) expect([m, anthropicHasNativeJson(m)]).toEqual([m, true]);
    for (const m of no) expect([m, anthropicHasNativeJson(m)]).toEqual([m, false]);
  });
});

describe("the answer", () => {
  test("native: the text block is the JSON content, finish stop", async () => {
    const r = fromAnthropicResponse(await fixtureJson("anthropic", "messages-output-format.json"));
    expect(JSON.parse(r.content!)).toEqual({ name: "Jane Doe", email: "jane@example.com", demo_requested: true });
    expect(r.finishReason).toBe("stop");
    expect(r.toolCalls).toBeUndefined();
  });

  test("forced tool: its input is the content and tool_use is stop; usage unchanged", async () => {
    const r = fromAnthropicResponse(await fixtureJson("anthropic", "messages-json-tool.json"), "json_response");
    expect(JSON.parse(r.content!)).toEqual({ name: "Jane Doe", email: "jane@example.com", demo_requested: true });
    expect(r.finishReason).toBe("stop");
    expect(r.toolCalls).toBeUndefined();
    expect(r.usage).toMatchObject({ promptTokens: 612, completionTokens: 58 });
  });

  test("when the caller's tool is called as well, it stays a tool call", async () => {
    const body = await fixtureJson("anthropic", "messages-json-tool.json");
    body.content.push({ type: "tool_use", id: "toolu_2", name: "lookup", input: { q: "x" } });
    const r = fromAnthropicResponse(body, "json_response");
    expect(r.finishReason).toBe("tool_calls");
    expect(r.toolCalls!.map((c) => c.function.name)).toEqual(["lookup"]);
    // Without the structured request the same body is two tool calls.
    expect(fromAnthropicResponse(body).toolCalls!.length).toBe(2);
  });

  test("streamed forced tool: input_json_delta fragments are content deltas, finish stop", async () => {
    const bytes = await fixtureBytes("anthropic", "messages-stream-json-tool.sse");
    for (const seed of [1, 2, 3]) {
      const { events, error } = await drain(readAnthropicStream(sseEventsOf(bytes, seed), "json_response"));
      expect(error).toBeUndefined();
      expect(JSON.parse(textOf(events))).toEqual({ name: "Jane Doe", email: "jane@example.com", demo_requested: true });
      expect(events.some((e) => e.type === "tool_call")).toBe(false);
      expect(events.filter((e) => e.type === "finish")).toEqual([{ type: "finish", reason: "stop" }]);
      expect(events.at(-1)).toMatchObject({ type: "usage", usage: { promptTokens: 612, completionTokens: 58 } });
    }
    // Read as an ordinary stream it is a tool call.
    const plain = await drain(readAnthropicStream(sseEventsOf(bytes)));
    expect(plain.events.find((e) => e.type === "finish")).toEqual({ type: "finish", reason: "tool_calls" });
  });

  test("a streamed tool call with an empty input still gives a JSON object", async () => {
    const text = new TextDecoder().decode(await fixtureBytes("anthropic", "messages-stream-json-tool.sse"));
    const empty = text
      .split("\n\n")
      .filter((e) => !e.includes('"partial_json":"') || e.includes('"partial_json":""'))
      .join("\n\n");
    const { events } = await drain(readAnthropicStream(sseEventsOf(new TextEncoder().encode(empty)), "json_response"));
    expect(textOf(events)).toBe("{}");
  });
});

describe("over HTTP", () => {
  const server = fixtureServer(() => ({
    kind: "body",
    body: JSON.stringify(require("../fixtures/anthropic/messages-json-tool.json")),
  }));
  afterAll(() => server.stop());

  test("the adapter sends the forced tool and answers with its input as content", async () => {
    const r = await anthropicChatProvider.chat(asked("claude-opus-4-1", schemaFormat(contact)), ctxFor(server.url));
    const sent = server.requests.at(-1)!;
    expect(sent.path).toBe("/v1/messages");
    expect(sent.headers.get("anthropic-beta")).toBeNull();
    expect(sent.body.tool_choice).toEqual({ type: "tool", name: "json_response" });
    expect(JSON.parse(r.content!)).toMatchObject({ name: "Jane Doe" });
    expect(r.finishReason).toBe("stop");
  });
});
