/**
 * The simulator's OpenAI Responses API (`POST /v1/responses`), read by the official OpenAI SDK
 * over a real socket: JSON and SSE with OpenAI's event names, usage details, the reasoning item
 * with `encrypted_content` when `include` asks for it, and the agent rule for function tools.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { OPENAI_AUTH, parseSse, postJson } from "./helpers.ts";

let sim: Simulator;
let client: OpenAI;
beforeAll(async () => {
  sim = await startSimulator();
  client = new OpenAI({ apiKey: "sk-test", baseURL: `${sim.baseUrl("openai")}/v1` });
});
afterAll(() => sim.stop());
beforeEach(() => sim.reset());

const tools = [
  {
    type: "function" as const,
    name: "shell",
    description: "run",
    parameters: { type: "object", properties: { command: { type: "string" } } },
    strict: false,
  },
];

describe("OpenAI Responses JSON", () => {
  test("a reasoning item with encrypted_content, text, and OpenAI's usage details", async () => {
    const r = await client.responses.create({
      model: "gpt-5.2-codex",
      input: "Hello there",
      reasoning: { effort: "low" },
      include: ["reasoning.encrypted_content"],
      store: false,
    });
    expect(r.object).toBe("response");
    expect(r.status).toBe("completed");
    expect(r.output[0]!.type).toBe("reasoning");
    expect((r.output[0] as any).encrypted_content).toMatch(/^gAAAA/);
    expect(r.output[1]!.type).toBe("message");
    expect(r.output_text).toContain("Hello there");
    expect(r.usage!.output_tokens_details.reasoning_tokens).toBe(16);
    expect(r.usage!.input_tokens_details.cached_tokens).toBe(0);
    expect(r.usage!.total_tokens).toBe(r.usage!.input_tokens + r.usage!.output_tokens);
  });

  test("no reasoning asked: no reasoning item", async () => {
    const r = await client.responses.create({ model: "gpt-5.2", input: "Hi" });
    expect(r.output.map((o) => o.type)).toEqual(["message"]);
  });

  test("the agent rule: a function_call on the user's turn, text after its output", async () => {
    const first = await client.responses.create({ model: "gpt-5.2", input: "list files", tools });
    const call = first.output.find((o) => o.type === "function_call") as any;
    expect(call.name).toBe("shell");
    const second = await client.responses.create({
      model: "gpt-5.2",
      tools,
      input: [
        { role: "user", content: "list files" },
        { type: "function_call", call_id: call.call_id, name: "shell", arguments: call.arguments },
        { type: "function_call_output", call_id: call.call_id, output: "a.txt b.txt" },
      ],
    });
    expect(second.output.map((o) => o.type)).toEqual(["message"]);
    expect(second.output_text).toContain("a.txt b.txt");
  });

  test("missing input is OpenAI's 400", async () => {
    const res = await postJson(`${sim.baseUrl("openai")}/v1/responses`, { model: "gpt-5.2" }, OPENAI_AUTH);
    expect(res.status).toBe(400);
    expect((await res.json()).error.param).toBe("input");
  });

  test("served by openai only", async () => {
    const res = await postJson(`${sim.baseUrl("groq")}/v1/responses`, { model: "x", input: "hi" }, OPENAI_AUTH);
    expect(res.status).toBe(404);
  });
});

describe("OpenAI Responses stream", () => {
  test("OpenAI's event names, numbered, ending with response.completed and no [DONE]", async () => {
    const res = await postJson(
      `${sim.baseUrl("openai")}/v1/responses`,
      {
        model: "gpt-5.2",
        input: "Hello stream",
        stream: true,
        reasoning: { effort: "low" },
        include: ["reasoning.encrypted_content"],
      },
      OPENAI_AUTH,
    );
    const events = parseSse(await res.text());
    expect(events.some((e) => e.data === "[DONE]")).toBe(false);
    const types = events.map((e) => e.event);
    expect(types[0]).toBe("response.created");
    expect(types[1]).toBe("response.in_progress");
    expect(types.at(-1)).toBe("response.completed");
    for (const t of [
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
    ])
      expect(types).toContain(t);
    const data = events.map((e) => JSON.parse(e.data));
    data.forEach((d, i) => {
      expect(d.sequence_number).toBe(i);
      expect(d.type).toBe(types[i]);
    });
    const done = data.at(-1).response;
    expect(done.output[0].encrypted_content).toMatch(/^gAAAA/);
    const text = data
      .filter((d) => d.type === "response.output_text.delta")
      .map((d) => d.delta)
      .join("");
    expect(text).toBe(done.output[1].content[0].text);
    expect(done.usage.output_tokens_details.reasoning_tokens).toBe(16);
  });

  test("the SDK's stream reader takes it", async () => {
    const stream = await client.responses.create({ model: "gpt-5.2", input: "list files", tools, stream: true });
    const types: string[] = [];
    let final: any;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === "response.completed") final = ev.response;
    }
    expect(types).toContain("response.function_call_arguments.delta");
    expect(final.output[0].type).toBe("function_call");
    expect(final.output[0].name).toBe("shell");
  });
});
