/**
 * The simulator answers a schema-constrained request with JSON sampled from the schema, on
 * every protocol and in streams: OpenAI `response_format`, Anthropic `output_config.format`
 * (and the beta's `output_format`), Gemini `responseMimeType` + `responseJsonSchema` /
 * `responseSchema`. `[sim:not_json]` makes it ignore the format (for tests of what a gateway
 * does with a non-JSON answer).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { sampleFromSchema } from "../../src/sim/tool-args.ts";
import { ANTHROPIC_AUTH, GEMINI_AUTH, OPENAI_AUTH, parseSse, postJson } from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.stop());

const schema = {
  type: "object",
  properties: {
    name: { type: "string" },
    age: { type: "integer", minimum: 18 },
    role: { type: "string", enum: ["admin", "user"] },
    email: { type: "string", format: "email" },
    address: { $ref: "#/$defs/address" },
    nick: { type: ["string", "null"] },
  },
  required: ["name", "age", "role", "email", "address", "nick"],
  additionalProperties: false,
  $defs: {
    address: {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
      additionalProperties: false,
    },
  },
};
const sample = {
  name: "sample name",
  age: 18,
  role: "admin",
  email: "sample@example.com",
  address: { city: "sample city" },
  nick: "sample nick",
};
const user = (text: string) => [{ role: "user", content: text }];

describe("sampling", () => {
  test("local $refs are followed; a recursive schema ends", () => {
    expect(sampleFromSchema(schema)).toEqual(sample);
    const tree = {
      type: "object",
      properties: { label: { type: "string" }, children: { type: "array", items: { $ref: "#" } } },
      required: ["label", "children"],
    };
    const value = JSON.stringify(sampleFromSchema(tree));
    expect(value.startsWith('{"label":"sample label","children":[{"label"')).toBe(true);
    expect(value).toContain('"children":[]');
  });
});

describe("OpenAI response_format", () => {
  const url = () => `${sim.baseUrl("openai")}/v1/chat/completions`;
  test("json_schema: the content is the schema's sample; prompt counts the format", async () => {
    const plain = await (await postJson(url(), { model: "gpt-4o-mini", messages: user("who?") }, OPENAI_AUTH)).json();
    const rf = { type: "json_schema", json_schema: { name: "person", strict: true, schema } };
    const body = await (
      await postJson(url(), { model: "gpt-4o-mini", messages: user("who?"), response_format: rf }, OPENAI_AUTH)
    ).json();
    expect(JSON.parse(body.choices[0].message.content)).toEqual(sample);
    expect(body.choices[0].finish_reason).toBe("stop");
    expect(body.usage.completion_tokens).toBe(Math.ceil(body.choices[0].message.content.length / 4));
    expect(body.usage.prompt_tokens).toBe(plain.usage.prompt_tokens + Math.ceil(JSON.stringify(rf).length / 4));
  });

  test("json_object: an object holding the reply; streamed in pieces; [sim:not_json] is plain text", async () => {
    const body = await (
      await postJson(
        url(),
        { model: "gpt-4o-mini", messages: user("hi"), response_format: { type: "json_object" } },
        OPENAI_AUTH,
      )
    ).json();
    expect(JSON.parse(body.choices[0].message.content)).toEqual({
      answer: "Simulated reply from openai/gpt-4o-mini: hi",
    });
    const res = await postJson(
      url(),
      {
        model: "gpt-4o-mini",
        messages: user("hi"),
        stream: true,
        response_format: { type: "json_schema", json_schema: { name: "p", schema } },
      },
      OPENAI_AUTH,
    );
    const chunks = parseSse(await res.text())
      .filter((e) => e.data !== "[DONE]")
      .map((e) => JSON.parse(e.data));
    const pieces = chunks.map((c) => c.choices[0]?.delta?.content).filter(Boolean);
    expect(pieces.length).toBeGreaterThan(1);
    expect(JSON.parse(pieces.join(""))).toEqual(sample);
    const no = await (
      await postJson(
        url(),
        { model: "gpt-4o-mini", messages: user("hi [sim:not_json]"), response_format: { type: "json_object" } },
        OPENAI_AUTH,
      )
    ).json();
    expect(no.choices[0].message.content).toStartWith("Simulated reply from");
  });
});

describe("Anthropic output_config.format", () => {
  const url = () => `${sim.baseUrl("anthropic")}/v1/messages`;
  const base = { model: "claude-sonnet-4-5", max_tokens: 1024, messages: user("who?") };
  test("output_config and the beta's output_format: a text block of JSON, end_turn", async () => {
    for (const extra of [
      { output_config: { format: { type: "json_schema", schema } } },
      { output_format: { type: "json_schema", schema } },
    ]) {
      const body = await (await postJson(url(), { ...base, ...extra }, ANTHROPIC_AUTH)).json();
      expect(body.content).toHaveLength(1);
      expect(JSON.parse(body.content[0].text)).toEqual(sample);
      expect(body.stop_reason).toBe("end_turn");
    }
  });

  test("streamed as text_delta pieces", async () => {
    const res = await postJson(
      url(),
      { ...base, stream: true, output_config: { format: { type: "json_schema", schema } } },
      ANTHROPIC_AUTH,
    );
    const events = parseSse(await res.text()).map((e) => JSON.parse(e.data));
    const text = events
      .filter((e) => e.delta?.type === "text_delta")
      .map((e) => e.delta.text)
      .join("");
    expect(JSON.parse(text)).toEqual(sample);
  });
});

describe("Gemini responseMimeType", () => {
  const url = (stream = false) =>
    `${sim.baseUrl("google")}/v1beta/models/gemini-2.5-flash:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`;
  const contents = [{ role: "user", parts: [{ text: "who?" }] }];
  test("responseJsonSchema and OpenAPI-style responseSchema both shape the answer", async () => {
    const json = await (
      await postJson(
        url(),
        { contents, generationConfig: { responseMimeType: "application/json", responseJsonSchema: schema } },
        GEMINI_AUTH,
      )
    ).json();
    expect(JSON.parse(json.candidates[0].content.parts[0].text)).toEqual(sample);
    const openapi = {
      type: "OBJECT",
      properties: { n: { type: "INTEGER" }, ok: { type: "BOOLEAN" } },
      required: ["n", "ok"],
    };
    const old = await (
      await postJson(
        url(),
        { contents, generationConfig: { responseMimeType: "application/json", responseSchema: openapi } },
        GEMINI_AUTH,
      )
    ).json();
    expect(JSON.parse(old.candidates[0].content.parts[0].text)).toEqual({ n: 1, ok: true });
  });

  test("JSON without a schema, streamed", async () => {
    const res = await postJson(
      url(true),
      { contents, generationConfig: { responseMimeType: "application/json" } },
      GEMINI_AUTH,
    );
    const chunks = parseSse(await res.text(), "\r\n\r\n").map((e) => JSON.parse(e.data));
    const text = chunks.map((c) => c.candidates[0].content.parts.map((p: any) => p.text ?? "").join("")).join("");
    expect(JSON.parse(text)).toEqual({ answer: "Simulated reply from google/gemini-2.5-flash: who?" });
    expect(chunks.at(-1).candidates[0].finishReason).toBe("STOP");
  });
});
