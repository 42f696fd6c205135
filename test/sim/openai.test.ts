import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import {
  fixtureHttp,
  fixtureJson,
  fixtureText,
  OPENAI_AUTH,
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

const chatUrl = (provider = "openai") => `${sim.baseUrl(provider)}/v1/chat/completions`;
const chat = (body: object, provider = "openai") => postJson(chatUrl(provider), body, OPENAI_AUTH);
const hello = { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hello there" }] };

describe("OpenAI chat JSON", () => {
  test("matches the recorded chat.completion structure", async () => {
    const res = await chat(hello);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    const body = await res.json();
    expect(structuralDiff(fixtureJson("openai", "chat-completion.json"), body)).toEqual([]);
    expect(body.object).toBe("chat.completion");
    expect(body.model).toBe("gpt-4o-mini");
    expect(body.choices[0].finish_reason).toBe("stop");
  });

  test("names provider and model, echoes the last user message, is deterministic", async () => {
    const req = {
      model: "m1",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "first question" },
        { role: "assistant", content: "first answer" },
        { role: "user", content: [{ type: "text", text: "second [sim:latency=1] question" }] },
      ],
    };
    const a = await (await chat(req)).json();
    const b = await (await chat(req)).json();
    expect(a.choices[0].message.content).toStartWith("Simulated reply from openai/m1: second question");
    expect(a.choices[0].message.content).toBe(b.choices[0].message.content);
    const groq = await (await chat(req, "groq")).json();
    expect(groq.choices[0].message.content).toStartWith("Simulated reply from groq/m1: ");
  });

  test("usage follows the documented tokenizer", async () => {
    const body = await (
      await chat({
        model: "m",
        messages: [
          { role: "system", content: "12345" }, // 2 tokens
          { role: "user", content: "abcd" }, // 1 token
        ],
      })
    ).json();
    expect(body.usage).toEqual({
      prompt_tokens: 3,
      completion_tokens: 20,
      total_tokens: 23,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    });
    expect(body.choices[0].message.content.length).toBe(80);
  });

  test("max_tokens and max_completion_tokens cap the reply with finish length", async () => {
    for (const cap of [{ max_tokens: 5 }, { max_completion_tokens: 5 }]) {
      const body = await (await chat({ ...hello, ...cap })).json();
      expect(body.usage.completion_tokens).toBe(5);
      expect(body.choices[0].message.content.length).toBe(20);
      expect(body.choices[0].finish_reason).toBe("length");
    }
  });

  test("reasoning_effort adds reasoning tokens inside completion_tokens", async () => {
    const body = await (await chat({ ...hello, reasoning_effort: "low" })).json();
    expect(body.usage.completion_tokens_details.reasoning_tokens).toBe(16);
    expect(body.usage.completion_tokens).toBe(36);
  });

  test("invalid requests get OpenAI's 400 envelope", async () => {
    const bad = await postJson(chatUrl(), "{not json", OPENAI_AUTH);
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.type).toBe("invalid_request_error");
    const noModel = await chat({ messages: [] });
    expect(noModel.status).toBe(400);
    expect((await noModel.json()).error).toMatchObject({ param: "model", type: "invalid_request_error" });
  });
});

describe("OpenAI chat stream", () => {
  test("framing matches the recorded include_usage stream", async () => {
    const res = await chat({ ...hello, stream: true, stream_options: { include_usage: true } });
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    const events = parseSse(await res.text());
    const recorded = parseSse(fixtureText("openai", "chat-completion-stream-usage.sse"));
    expect(events.at(-1)!.data).toBe("[DONE]");
    expect(events.every((e) => e.event === undefined)).toBe(true);

    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    const rec = recorded.slice(0, -1).map((e) => JSON.parse(e.data));
    const ignore = ["obfuscation"];
    expect(structuralDiff(rec[0], chunks[0], ignore)).toEqual([]); // role chunk
    expect(structuralDiff(rec[1], chunks[1], ignore)).toEqual([]); // content chunk
    expect(structuralDiff(rec.at(-2), chunks.at(-2), ignore)).toEqual([]); // finish chunk
    expect(structuralDiff(rec.at(-1), chunks.at(-1), ignore)).toEqual([]); // usage chunk

    expect(chunks[0].choices[0].delta).toEqual({ role: "assistant", content: "", refusal: null });
    const content = chunks.slice(1, -2);
    expect(content.length).toBeGreaterThanOrEqual(4);
    expect(content.length).toBeLessThanOrEqual(8);
    expect(chunks.at(-2).choices[0]).toMatchObject({ delta: {}, finish_reason: "stop" });
    expect(chunks.at(-1).choices).toEqual([]);
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);

    const text = content.map((c) => c.choices[0].delta.content).join("");
    const whole = await (await chat(hello)).json();
    expect(text).toBe(whole.choices[0].message.content);
    expect(chunks.at(-1).usage).toEqual(whole.usage);
  });

  test("without include_usage there is no usage chunk and no usage field", async () => {
    const events = parseSse(await (await chat({ ...hello, stream: true })).text());
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    expect(events.at(-1)!.data).toBe("[DONE]");
    expect(chunks.every((c) => !("usage" in c))).toBe(true);
    expect(chunks.at(-1).choices[0].finish_reason).toBe("stop");
  });
});

describe("OpenAI tool calls", () => {
  const tools = [
    { type: "function", function: { name: "noop", parameters: { type: "object", properties: {} } } },
    {
      type: "function",
      function: {
        name: "get_weather",
        parameters: {
          type: "object",
          properties: {
            location: { type: "string" },
            unit: { type: "string", enum: ["celsius", "fahrenheit"] },
            days: { type: "integer" },
            detailed: { type: "boolean" },
            extra: { type: "string" },
          },
          required: ["location", "unit", "days", "detailed"],
        },
      },
    },
  ];

  test("a named tool_choice produces that call with schema-shaped arguments", async () => {
    const body = await (
      await chat({ ...hello, tools, tool_choice: { type: "function", function: { name: "get_weather" } } })
    ).json();
    const choice = body.choices[0];
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBeNull();
    const call = choice.message.tool_calls[0];
    expect(call).toMatchObject({ type: "function", function: { name: "get_weather" } });
    expect(call.id).toStartWith("call_");
    expect(JSON.parse(call.function.arguments)).toEqual({
      location: "sample location",
      unit: "celsius",
      days: 1,
      detailed: true,
    });
  });

  test("tool_choice required picks the first tool; auto calls one on a user turn; none answers in text", async () => {
    const required = await (await chat({ ...hello, tools, tool_choice: "required" })).json();
    expect(required.choices[0].message.tool_calls[0].function.name).toBe("noop");
    // The agent rule (docs/simulator.md): auto on a turn ending with the user calls a tool.
    const auto = await (await chat({ ...hello, tools, tool_choice: "auto" })).json();
    expect(auto.choices[0].finish_reason).toBe("tool_calls");
    expect(auto.choices[0].message.tool_calls[0].function.name).toBe("noop");
    const none = await (await chat({ ...hello, tools, tool_choice: "none" })).json();
    expect(none.choices[0].finish_reason).toBe("stop");
    expect(none.choices[0].message.tool_calls).toBeUndefined();
  });

  test("streamed tool call deltas match the recorded structure", async () => {
    const res = await chat({
      ...hello,
      tools,
      tool_choice: { type: "function", function: { name: "get_weather" } },
      stream: true,
      stream_options: { include_usage: true },
    });
    const events = parseSse(await res.text());
    const recorded = parseSse(fixtureText("openai", "chat-completion-stream-tool-call.sse"));
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    const rec = recorded.slice(0, -1).map((e) => JSON.parse(e.data));
    expect(structuralDiff(rec[0].choices[0].delta, chunks[0].choices[0].delta)).toEqual([]);
    expect(structuralDiff(rec[1].choices[0].delta, chunks[1].choices[0].delta)).toEqual([]);
    expect(chunks[0].choices[0].delta.tool_calls[0]).toMatchObject({
      index: 0,
      type: "function",
      function: { name: "get_weather", arguments: "" },
    });
    const pieces = chunks.slice(1, -2).map((c) => {
      const tc = c.choices[0].delta.tool_calls[0];
      expect(Object.keys(tc)).toEqual(["index", "function"]);
      return tc.function.arguments;
    });
    expect(pieces.length).toBeGreaterThan(1);
    expect(JSON.parse(pieces.join(""))).toMatchObject({ location: "sample location" });
    expect(chunks.at(-2).choices[0].finish_reason).toBe("tool_calls");
    expect(chunks.at(-1).usage.completion_tokens).toBeGreaterThan(0);
  });
});

describe("OpenAI-compatible automatic prompt caching", () => {
  const long = textOfLength(1100, "policy");
  const first = {
    model: "m",
    messages: [
      { role: "system", content: long },
      { role: "user", content: "q1" },
    ],
  };

  test("a repeated prefix of at least 1024 tokens is reported as cached_tokens", async () => {
    const a = await (await chat(first)).json();
    expect(a.usage.prompt_tokens).toBe(1101);
    expect(a.usage.prompt_tokens_details.cached_tokens).toBe(0);
    const b = await (
      await chat({ ...first, messages: [first.messages[0], { role: "user", content: "another question" }] })
    ).json();
    expect(b.usage.prompt_tokens_details.cached_tokens).toBe(1100);
    expect(b.usage.prompt_tokens).toBe(1104);

    // A conversation growing on top of an earlier request reads the whole earlier prompt.
    const c = await (
      await chat({
        ...first,
        messages: [...first.messages, { role: "assistant", content: "a1" }, { role: "user", content: "q2" }],
      })
    ).json();
    expect(c.usage.prompt_tokens_details.cached_tokens).toBe(1101);
  });

  test("caches are per provider and model, short prefixes never count, reset clears", async () => {
    await chat(first);
    const otherModel = await (await chat({ ...first, model: "m2" })).json();
    expect(otherModel.usage.prompt_tokens_details.cached_tokens).toBe(0);
    const otherProvider = await (await chat(first, "together")).json();
    expect(otherProvider.usage.prompt_tokens_details.cached_tokens).toBe(0);

    const short = {
      model: "m",
      messages: [
        { role: "system", content: "short" },
        { role: "user", content: "q" },
      ],
    };
    await chat(short);
    expect((await (await chat(short)).json()).usage.prompt_tokens_details.cached_tokens).toBe(0);

    sim.reset();
    expect((await (await chat(first)).json()).usage.prompt_tokens_details.cached_tokens).toBe(0);
  });

  test("DeepSeek also reports its hit/miss fields", async () => {
    await chat(first, "deepseek");
    const body = await (await chat(first, "deepseek")).json();
    expect(body.usage.prompt_cache_hit_tokens).toBe(1100);
    expect(body.usage.prompt_cache_miss_tokens).toBe(1);
  });
});

describe("OpenAI-compatible errors and auth", () => {
  test("a missing bearer key is OpenAI's 401 envelope", async () => {
    const res = await postJson(chatUrl(), hello);
    expect(res.status).toBe(401);
    const body = await res.json();
    expect(structuralDiff(fixtureHttp("openai", "error-401.http").body, body)).toEqual([]);
    expect(body.error.type).toBe("invalid_request_error");
  });

  test("unknown paths are 404 in OpenAI's envelope", async () => {
    const res = await postJson(`${sim.baseUrl("openai")}/v1/nope`, {}, OPENAI_AUTH);
    expect(res.status).toBe(404);
    expect((await res.json()).error.message).toContain("/v1/nope");
  });
});

describe("with the official OpenAI SDK as client", () => {
  test("chat, stream and embeddings round-trip", async () => {
    const client = new OpenAI({ apiKey: "sk-test", baseURL: `${sim.baseUrl("openai")}/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "hi sdk" }],
    });
    expect(completion.choices[0]!.message.content).toStartWith("Simulated reply from openai/gpt-4o: hi sdk");

    const stream = await client.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "hi sdk" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let total = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) total = chunk.usage.total_tokens;
    }
    expect(text).toBe(completion.choices[0]!.message.content!);
    expect(total).toBe(completion.usage!.total_tokens);

    // The SDK asks for base64 embeddings by default and decodes them.
    const emb = await client.embeddings.create({ model: "text-embedding-3-small", input: ["alpha", "beta"] });
    expect(emb.data).toHaveLength(2);
    expect(emb.data[0]!.embedding).toHaveLength(256);
    const norm = Math.hypot(...emb.data[0]!.embedding);
    expect(norm).toBeCloseTo(1, 5);

    const err = await client.chat.completions
      .create({ model: "gpt-4o", messages: [{ role: "user", content: "[sim:fail=503]" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
  });
});
