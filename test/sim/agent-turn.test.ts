/**
 * The simulator as an agent's partner (docs/simulator.md "Agent turns"), in each of its
 * wire protocols over real sockets: with tools offered and an automatic choice it calls one
 * tool on a user turn, with harmless arguments, and answers in text after the tool result,
 * so an agent loop ends; `none` never calls; a JSON-only system prompt gets JSON; any model
 * id is answered.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { ANTHROPIC_AUTH, GEMINI_AUTH, OPENAI_AUTH, parseSse, postJson } from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.stop());
beforeEach(() => sim.reset());

const shell = {
  name: "shell",
  description: "Runs a command",
  parameters: {
    type: "object",
    properties: { command: { type: "array", items: { type: "string" } }, timeout_ms: { type: "integer" } },
    required: ["command"],
  },
};
const readFile = {
  name: "read_file",
  description: "Reads a file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};
const bash = {
  name: "Bash",
  parameters: {
    type: "object",
    properties: { command: { type: "string" }, description: { type: "string" } },
    required: ["command"],
  },
};

describe("OpenAI chat", () => {
  const url = () => `${sim.baseUrl("openai")}/v1/chat/completions`;
  const chat = async (body: object) => (await postJson(url(), { model: "gpt-5.1-codex", ...body }, OPENAI_AUTH)).json();
  const oaTools = [shell, readFile].map((f) => ({ type: "function", function: f }));

  test("auto calls the first tool on a user turn, with a harmless command", async () => {
    const body = await chat({ tools: oaTools, messages: [{ role: "user", content: "What is here?" }] });
    expect(body.choices[0].finish_reason).toBe("tool_calls");
    const call = body.choices[0].message.tool_calls[0];
    expect(call.function.name).toBe("shell");
    expect(JSON.parse(call.function.arguments)).toEqual({ command: ["echo", "sim"] });
    expect(body.choices[0].message.content).toBeNull();
  });

  test("a tool named in the user's text wins, with the path the text names", async () => {
    const body = await chat({
      tools: oaTools,
      tool_choice: "auto",
      messages: [{ role: "user", content: "Use read_file on docs/notes.txt please" }],
    });
    const call = body.choices[0].message.tool_calls[0];
    expect(call.function.name).toBe("read_file");
    expect(JSON.parse(call.function.arguments)).toEqual({ path: "docs/notes.txt" });
  });

  test("[sim:tool=NAME] picks the tool; a backquoted command is the command; [sim:no_tool] answers text", async () => {
    const picked = await chat({
      tools: oaTools,
      messages: [{ role: "user", content: "list it with `ls -a` [sim:tool=shell]" }],
    });
    expect(JSON.parse(picked.choices[0].message.tool_calls[0].function.arguments)).toEqual({ command: ["ls", "-a"] });
    const text = await chat({ tools: oaTools, messages: [{ role: "user", content: "hi [sim:no_tool]" }] });
    expect(text.choices[0].finish_reason).toBe("stop");
  });

  test("after the tool result the reply is text echoing it; none never calls", async () => {
    const first = await chat({ tools: oaTools, messages: [{ role: "user", content: "What is here?" }] });
    const call = first.choices[0].message.tool_calls[0];
    const second = await chat({
      tools: oaTools,
      messages: [
        { role: "user", content: "What is here?" },
        first.choices[0].message,
        { role: "tool", tool_call_id: call.id, content: "sim-output-42" },
      ],
    });
    expect(second.choices[0].finish_reason).toBe("stop");
    expect(second.choices[0].message.content).toStartWith("Simulated reply from openai/gpt-5.1-codex: sim-output-42");
    const none = await chat({ tools: oaTools, tool_choice: "none", messages: [{ role: "user", content: "x" }] });
    expect(none.choices[0].finish_reason).toBe("stop");
    expect(none.choices[0].message.tool_calls).toBeUndefined();
  });

  test("streamed auto call: tool_calls deltas whose arguments parse, finish tool_calls", async () => {
    const res = await postJson(
      url(),
      { model: "m", stream: true, tools: oaTools, messages: [{ role: "user", content: "go" }] },
      OPENAI_AUTH,
    );
    const chunks = parseSse(await res.text())
      .filter((e) => e.data !== "[DONE]")
      .map((e) => JSON.parse(e.data));
    const args = chunks.map((c) => c.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? "").join("");
    expect(JSON.parse(args)).toEqual({ command: ["echo", "sim"] });
    expect(chunks.at(-1).choices[0].finish_reason).toBe("tool_calls");
  });

  test("a JSON-only system prompt gets JSON: the schema's shape, or a small object", async () => {
    const schema = { type: "object", properties: { city: { type: "string" }, temp: { type: "integer" } } };
    const shaped = await chat({
      messages: [
        { role: "system", content: `Respond only with JSON matching this schema: ${JSON.stringify(schema)}` },
        { role: "user", content: "Weather?" },
      ],
    });
    expect(JSON.parse(shaped.choices[0].message.content)).toEqual({ city: "sample city", temp: 1 });
    const plain = await chat({
      messages: [
        { role: "developer", content: "Answer in JSON." },
        { role: "user", content: "Hi" },
      ],
    });
    expect(JSON.parse(plain.choices[0].message.content)).toEqual({
      answer: "Simulated reply from openai/gpt-5.1-codex: Hi",
    });
    const prose = await chat({
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Hi" },
      ],
    });
    expect(prose.choices[0].message.content).toStartWith("Simulated reply");
  });
});

describe("Anthropic Messages", () => {
  const url = () => `${sim.baseUrl("anthropic")}/v1/messages`;
  const send = async (body: object) =>
    (await postJson(url(), { model: "claude-opus-5-5", max_tokens: 1000, ...body }, ANTHROPIC_AUTH)).json();
  const anTools = [readFile, bash].map((t) => ({ name: t.name, input_schema: t.parameters }));

  test("a user turn calls the tool it names (tool_use, stop_reason tool_use); the result gets text", async () => {
    const first = await send({ tools: anTools, messages: [{ role: "user", content: "Run Bash to look around" }] });
    expect(first.stop_reason).toBe("tool_use");
    const use = first.content.find((b: { type: string }) => b.type === "tool_use");
    expect(use).toMatchObject({ name: "Bash", input: { command: "echo sim" } });
    // Claude Code's shape: the tool result beside a reminder text block in the same turn.
    const second = await send({
      tools: anTools,
      messages: [
        { role: "user", content: "Run Bash to look around" },
        { role: "assistant", content: first.content },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: use.id, content: "sim" },
            { type: "text", text: "<system-reminder>be brief</system-reminder>" },
          ],
        },
      ],
    });
    expect(second.stop_reason).toBe("end_turn");
    expect(second.content[0].type).toBe("text");
  });

  test("no tool_choice means auto: the first tool, a README.md path; {type: none} answers text", async () => {
    const auto = await send({ tools: anTools, messages: [{ role: "user", content: "hello" }] });
    expect(auto.content[0]).toMatchObject({ type: "tool_use", name: "read_file", input: { path: "README.md" } });
    const none = await send({
      tools: anTools,
      tool_choice: { type: "none" },
      messages: [{ role: "user", content: "x" }],
    });
    expect(none.stop_reason).toBe("end_turn");
  });

  test("a JSON instruction in the system blocks gets JSON in the text block", async () => {
    const body = await send({
      system: [{ type: "text", text: 'Reply with JSON only, like {"verdict": "ok", "score": 3}.' }],
      messages: [{ role: "user", content: "Rate it" }],
    });
    expect(JSON.parse(body.content[0].text)).toEqual({ verdict: "ok", score: 3 });
  });
});

describe("Gemini", () => {
  const send = async (model: string, body: object) =>
    (await postJson(`${sim.baseUrl("google")}/v1beta/models/${model}:generateContent`, body, GEMINI_AUTH)).json();
  const tools = [{ functionDeclarations: [readFile, shell] }];

  test("AUTO calls a tool on a user turn; the function response gets text", async () => {
    const first = await send("gemini-3-pro-preview", { tools, contents: [{ role: "user", parts: [{ text: "hi" }] }] });
    const call = first.candidates[0].content.parts[0].functionCall;
    expect(call).toEqual({ name: "read_file", args: { path: "README.md" } });
    expect(first.candidates[0].finishReason).toBe("STOP");
    const second = await send("gemini-3-pro-preview", {
      tools,
      contents: [
        { role: "user", parts: [{ text: "hi" }] },
        { role: "model", parts: [{ functionCall: call }] },
        { role: "user", parts: [{ functionResponse: { name: "read_file", response: { content: "hello" } } }] },
      ],
    });
    expect(second.candidates[0].content.parts[0].text).toStartWith(
      'Simulated reply from google/gemini-3-pro-preview: {"content":"hello"}',
    );
  });

  test("a JSON instruction in systemInstruction gets JSON", async () => {
    const body = await send("gemini-3-flash", {
      systemInstruction: { parts: [{ text: "Output JSON only." }] },
      contents: [{ role: "user", parts: [{ text: "hi" }] }],
    });
    expect(JSON.parse(body.candidates[0].content.parts[0].text)).toEqual({
      answer: "Simulated reply from google/gemini-3-flash: hi",
    });
  });
});

test("any model id is answered, as each vendor's simulator", async () => {
  for (const model of ["claude-sonnet-5-5", "gpt-5.2-pro", "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8"]) {
    const res = await postJson(
      `${sim.baseUrl("together")}/v1/chat/completions`,
      { model, messages: [{ role: "user", content: "hi" }] },
      OPENAI_AUTH,
    );
    expect(res.status).toBe(200);
    expect((await res.json()).model).toBe(model);
  }
  const res = await postJson(
    `${sim.baseUrl("anthropic")}/v1/messages`,
    { model: "claude-haiku-5-5", max_tokens: 10, messages: [{ role: "user", content: "hi" }] },
    ANTHROPIC_AUTH,
  );
  expect(res.status).toBe(200);
});
