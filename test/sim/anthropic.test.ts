import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import {
  ANTHROPIC_AUTH,
  fixtureHttp,
  fixtureJson,
  fixtureText,
  parseSse,
  postJson,
  structuralDiff,
  textOfLength,
} from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.stop());
beforeEach(() => sim.reset());

const url = () => `${sim.baseUrl("anthropic")}/v1/messages`;
const messages = (body: object, headers: Record<string, string> = ANTHROPIC_AUTH) => postJson(url(), body, headers);
const hello = { model: "claude-sonnet-4-5", max_tokens: 1024, messages: [{ role: "user", content: "Hello there" }] };
const events = async (res: Response) =>
  parseSse(await res.text()).map((e) => ({ event: e.event, data: JSON.parse(e.data) }));

describe("Anthropic Messages JSON", () => {
  test("matches the recorded message structure", async () => {
    const res = await messages(hello);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(structuralDiff(fixtureJson("anthropic", "messages.json"), body)).toEqual([]);
    expect(body.content).toEqual([
      { type: "text", text: expect.stringMatching(/^Simulated reply from anthropic\/claude-sonnet-4-5: Hello there/) },
    ]);
    expect(body.stop_reason).toBe("end_turn");
    expect(body.usage).toMatchObject({
      input_tokens: 3,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 20,
    });
  });

  test("system, tool results and tool definitions count as prompt tokens", async () => {
    const tool = { name: "t", input_schema: { type: "object" } };
    const body = await (
      await messages({
        ...hello,
        system: "12345678", // 2
        tools: [tool], // JSON text
        messages: [
          { role: "user", content: [{ type: "text", text: "abcd" }] }, // 1
          { role: "assistant", content: [{ type: "tool_use", id: "x", name: "t", input: {} }] }, // 1 + 1
          { role: "user", content: [{ type: "tool_result", tool_use_id: "x", content: "result!!" }] }, // 2
        ],
      })
    ).json();
    expect(body.usage.input_tokens).toBe(2 + Math.ceil(JSON.stringify(tool).length / 4) + 1 + 2 + 2);
    // After a tool result the reply is text, and it echoes the tool result.
    expect(body.stop_reason).toBe("end_turn");
    expect(body.content[0].text).toStartWith("Simulated reply from anthropic/claude-sonnet-4-5: result!! lorem");
  });

  test("max_tokens caps the reply with stop_reason max_tokens", async () => {
    const body = await (await messages({ ...hello, max_tokens: 3 })).json();
    expect(body.stop_reason).toBe("max_tokens");
    expect(body.usage.output_tokens).toBe(3);
    expect(body.content[0].text).toHaveLength(12);
  });

  test("max_tokens is required, as in the real API", async () => {
    const res = await messages({ model: "c", messages: hello.messages });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error", message: "max_tokens: Field required" },
    });
  });
});

describe("Anthropic Messages stream", () => {
  test("event sequence and structure match the recorded stream", async () => {
    const res = await messages({ ...hello, stream: true });
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    const got = await events(res);
    const recorded = parseSse(fixtureText("anthropic", "messages-stream.sse")).map((e) => ({
      event: e.event,
      data: JSON.parse(e.data),
    }));

    for (const e of got) expect(e.event).toBe(e.data.type);
    const names = got.map((e) => e.event);
    expect(names.slice(0, 3)).toEqual(["message_start", "content_block_start", "ping"]);
    expect(names.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
    const deltas = got.filter((e) => e.event === "content_block_delta");
    expect(deltas.length).toBeGreaterThanOrEqual(4);
    for (const name of [
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]) {
      const mine = got.find((e) => e.event === name)!.data;
      const theirs = recorded.find((e) => e.event === name)!.data;
      expect(structuralDiff(theirs, mine)).toEqual([]);
    }

    const start = got[0]!.data.message.usage;
    expect(start.output_tokens).toBe(1);
    const final = got.find((e) => e.event === "message_delta")!.data;
    expect(final.delta.stop_reason).toBe("end_turn");
    const whole = await (await messages(hello)).json();
    expect(final.usage).toEqual({
      input_tokens: whole.usage.input_tokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: whole.usage.output_tokens,
    });
    expect(deltas.map((d) => d.data.delta.text).join("")).toBe(whole.content[0].text);
  });
});

describe("Anthropic explicit prompt caching", () => {
  const system = [{ type: "text", text: textOfLength(500, "rules"), cache_control: { type: "ephemeral" } }];

  test("the marked prefix is written once, then read; input_tokens excludes both", async () => {
    const req = { ...hello, system };
    const first = (await (await messages(req)).json()).usage;
    expect(first).toMatchObject({ input_tokens: 3, cache_creation_input_tokens: 500, cache_read_input_tokens: 0 });
    expect(first.cache_creation).toEqual({ ephemeral_5m_input_tokens: 500, ephemeral_1h_input_tokens: 0 });

    const second = (await (await messages({ ...req, messages: [{ role: "user", content: "Another one" }] })).json())
      .usage;
    expect(second).toMatchObject({ input_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 500 });

    // The same request streamed reports the same split in message_start and message_delta.
    const got = await events(await messages({ ...req, stream: true }));
    expect(got[0]!.data.message.usage).toMatchObject({ cache_read_input_tokens: 500, input_tokens: 3 });
    expect(got.find((e) => e.event === "message_delta")!.data.usage).toMatchObject({
      cache_read_input_tokens: 500,
      input_tokens: 3,
    });
  });

  test("a breakpoint moving forward reads the old prefix and writes the new part", async () => {
    const turn1 = [
      { role: "user", content: [{ type: "text", text: textOfLength(100), cache_control: { type: "ephemeral" } }] },
    ];
    await messages({ ...hello, system, messages: turn1 });
    const turn2 = [
      { role: "user", content: [{ type: "text", text: textOfLength(100) }] },
      { role: "assistant", content: "ok" },
      {
        role: "user",
        content: [{ type: "text", text: textOfLength(40, "more"), cache_control: { type: "ephemeral", ttl: "1h" } }],
      },
    ];
    const usage = (await (await messages({ ...hello, system, messages: turn2 })).json()).usage;
    expect(usage.cache_read_input_tokens).toBe(600);
    expect(usage.cache_creation_input_tokens).toBe(1 + 40);
    expect(usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 41 });
    expect(usage.input_tokens).toBe(0);
  });

  test("without cache_control nothing is cached; caches are per model", async () => {
    const plain = { ...hello, system: textOfLength(2000) };
    await messages(plain);
    expect((await (await messages(plain)).json()).usage).toMatchObject({
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
      input_tokens: 2003,
    });
    await messages({ ...hello, system });
    const other = (await (await messages({ ...hello, model: "claude-other", system })).json()).usage;
    expect(other.cache_creation_input_tokens).toBe(500);
  });
});

describe("Anthropic tool use and thinking", () => {
  const tools = [
    { name: "lookup", input_schema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } },
    {
      name: "get_weather",
      input_schema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
    },
  ];

  test("tool_choice tool produces a tool_use block, stop_reason tool_use", async () => {
    const body = await (await messages({ ...hello, tools, tool_choice: { type: "tool", name: "get_weather" } })).json();
    expect(body.stop_reason).toBe("tool_use");
    expect(body.content).toEqual([
      {
        type: "tool_use",
        id: expect.stringMatching(/^toolu_/),
        name: "get_weather",
        input: { location: "sample location" },
      },
    ]);
    const any = await (await messages({ ...hello, tools, tool_choice: { type: "any" } })).json();
    expect(any.content[0].name).toBe("lookup");
  });

  test("streamed tool_use: input {} then input_json_delta fragments", async () => {
    const got = await events(
      await messages({ ...hello, tools, tool_choice: { type: "tool", name: "get_weather" }, stream: true }),
    );
    const recorded = parseSse(fixtureText("anthropic", "messages-stream-tool-use.sse")).map((e) => JSON.parse(e.data));
    const start = got.find((e) => e.event === "content_block_start")!.data;
    expect(
      structuralDiff(
        recorded.find((d) => d.content_block?.type === "tool_use"),
        start,
      ),
    ).toEqual([]);
    expect(start.content_block.input).toEqual({});
    const fragments = got.filter((e) => e.event === "content_block_delta").map((e) => e.data.delta);
    expect(fragments[0]).toEqual({ type: "input_json_delta", partial_json: "" });
    expect(JSON.parse(fragments.map((f) => f.partial_json).join(""))).toEqual({ location: "sample location" });
    expect(got.find((e) => e.event === "message_delta")!.data.delta.stop_reason).toBe("tool_use");
  });

  test("extended thinking adds a signed thinking block and counts it in output_tokens", async () => {
    const req = { ...hello, thinking: { type: "enabled", budget_tokens: 2000 } };
    const body = await (await messages(req)).json();
    expect(body.content.map((b: { type: string }) => b.type)).toEqual(["thinking", "text"]);
    expect(body.content[0].signature).toBeString();
    expect(body.usage.output_tokens).toBe(64 + 20);

    const got = await events(await messages({ ...req, stream: true }));
    const recorded = parseSse(fixtureText("anthropic", "messages-stream-thinking.sse")).map((e) => e.event);
    const names = got.map((e) => e.event);
    expect(names.slice(0, 4)).toEqual(recorded.slice(0, 4));
    const thinkingDeltas = got
      .filter((e) => e.data.index === 0 && e.event === "content_block_delta")
      .map((e) => e.data.delta.type);
    expect(thinkingDeltas.at(-1)).toBe("signature_delta");
    expect(got.find((e) => e.event === "content_block_start" && e.data.index === 1)!.data.content_block.type).toBe(
      "text",
    );
  });
});

describe("Anthropic auth", () => {
  test("missing x-api-key is 401 authentication_error in Anthropic's envelope", async () => {
    const res = await messages(hello, { "anthropic-version": "2023-06-01" });
    expect(res.status).toBe(401);
    const body = await res.json();
    expect(structuralDiff(fixtureHttp("anthropic", "error-401.http").body, body)).toEqual([]);
    expect(body.error.type).toBe("authentication_error");
    expect(res.headers.get("request-id")).toBe(body.request_id);
  });

  test("missing anthropic-version is a 400", async () => {
    const res = await messages(hello, { "x-api-key": "k" });
    expect(res.status).toBe(400);
    expect((await res.json()).error.type).toBe("invalid_request_error");
  });
});

describe("Anthropic count_tokens", () => {
  const count = (body: object) =>
    postJson(`${sim.baseUrl("anthropic")}/v1/messages/count_tokens`, body, ANTHROPIC_AUTH);

  test("counts what /v1/messages reports as input, caching ignored; refuses fields it does not take", async () => {
    const body = {
      model: "claude-sonnet-4-5",
      system: [{ type: "text", text: "12345678", cache_control: { type: "ephemeral" } }],
      messages: [{ role: "user", content: "Hello there" }],
    };
    const res = await count(body);
    expect(res.status).toBe(200);
    const { input_tokens } = await res.json();
    const used = (await (await messages({ ...body, max_tokens: 10 })).json()).usage;
    expect(input_tokens).toBe(used.input_tokens + used.cache_creation_input_tokens + used.cache_read_input_tokens);
    const extra = await count({ ...body, max_tokens: 10 });
    expect(extra.status).toBe(400);
    expect((await extra.json()).error.type).toBe("invalid_request_error");
    expect(sim.stats().calls.anthropic).toMatchObject({ "POST /v1/messages/count_tokens": 2 });
  });
});
