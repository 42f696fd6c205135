import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import {
  fixtureHttp,
  fixtureJson,
  fixtureText,
  GEMINI_AUTH,
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

const generateUrl = (model = "gemini-2.5-flash") => `${sim.baseUrl("google")}/v1beta/models/${model}:generateContent`;
const streamUrl = (model = "gemini-2.5-flash") =>
  `${sim.baseUrl("google")}/v1beta/models/${model}:streamGenerateContent?alt=sse`;
const hello = { contents: [{ role: "user", parts: [{ text: "Hello there" }] }] };
const generate = async (body: object) => (await postJson(generateUrl(), body, GEMINI_AUTH)).json();
const streamChunks = async (body: object) => {
  const res = await postJson(streamUrl(), body, GEMINI_AUTH);
  expect(res.headers.get("content-type")).toStartWith("text/event-stream");
  return parseSse(await res.text(), "\r\n\r\n").map((e) => {
    expect(e.event).toBeUndefined();
    return JSON.parse(e.data);
  });
};
// Fields of the recorded Gemini 3 captures the simulator does not produce.
const IGNORE = [
  "thoughtSignature",
  "thoughtsTokenCount",
  "cachedContentTokenCount",
  "cacheTokensDetails",
  "finishMessage",
];

describe("Gemini generateContent", () => {
  test("matches the recorded response structure", async () => {
    const res = await postJson(generateUrl(), hello, GEMINI_AUTH);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(structuralDiff(fixtureJson("gemini", "generate-content.json"), body, IGNORE)).toEqual([]);
    expect(body.candidates[0].content.parts[0].text).toStartWith(
      "Simulated reply from google/gemini-2.5-flash: Hello there",
    );
    expect(body.candidates[0].finishReason).toBe("STOP");
    expect(body.modelVersion).toBe("gemini-2.5-flash");
    expect(body.usageMetadata).toEqual({
      promptTokenCount: 3,
      candidatesTokenCount: 20,
      totalTokenCount: 23,
      promptTokensDetails: [{ modality: "TEXT", tokenCount: 3 }],
    });
  });

  test("systemInstruction counts as prompt; maxOutputTokens caps with MAX_TOKENS", async () => {
    const body = await generate({
      ...hello,
      systemInstruction: { parts: [{ text: "12345678" }] },
      generationConfig: { maxOutputTokens: 4 },
    });
    expect(body.usageMetadata.promptTokenCount).toBe(5);
    expect(body.usageMetadata.candidatesTokenCount).toBe(4);
    expect(body.candidates[0].finishReason).toBe("MAX_TOKENS");
  });

  test("thinking adds thoughtsTokenCount, outside candidates but inside the total", async () => {
    const body = await generate({
      ...hello,
      generationConfig: { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } },
    });
    const u = body.usageMetadata;
    expect(u.thoughtsTokenCount).toBe(64);
    expect(u.totalTokenCount).toBe(u.promptTokenCount + u.candidatesTokenCount + 64);
    expect(body.candidates[0].content.parts[0].thought).toBe(true);
    const level = await generate({ ...hello, generationConfig: { thinkingConfig: { thinkingLevel: "low" } } });
    expect(level.usageMetadata.thoughtsTokenCount).toBe(16);
    expect(level.candidates[0].content.parts).toHaveLength(1);
  });

  test("the v1 path and a ?key= credential work too", async () => {
    const res = await postJson(
      `${sim.baseUrl("google")}/v1/models/gemini-2.0-flash:generateContent?key=AIza-test`,
      hello,
    );
    expect(res.status).toBe(200);
  });

  test("contents are required", async () => {
    const res = await postJson(generateUrl(), { contents: [] }, GEMINI_AUTH);
    expect(res.status).toBe(400);
    expect((await res.json()).error.status).toBe("INVALID_ARGUMENT");
  });
});

describe("Gemini streamGenerateContent", () => {
  test("CRLF framing, cumulative usage, separate finish chunk, no [DONE]", async () => {
    const chunks = await streamChunks(hello);
    const recorded = parseSse(fixtureText("gemini", "stream-generate-content.sse"), "\r\n\r\n").map((e) =>
      JSON.parse(e.data),
    );
    expect(structuralDiff(recorded[0], chunks[0], IGNORE)).toEqual([]);
    expect(structuralDiff(recorded.at(-1), chunks.at(-1), IGNORE)).toEqual([]);

    const content = chunks.slice(0, -1);
    expect(content.length).toBeGreaterThanOrEqual(4);
    expect(content.every((c) => c.candidates[0].finishReason === undefined)).toBe(true);
    const counts = chunks.map((c) => c.usageMetadata.candidatesTokenCount);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(chunks.at(-1).candidates[0]).toEqual({
      content: { parts: [{ text: "" }], role: "model" },
      finishReason: "STOP",
      index: 0,
    });

    const whole = await generate(hello);
    expect(content.map((c) => c.candidates[0].content.parts[0].text).join("")).toBe(
      whole.candidates[0].content.parts[0].text,
    );
    expect(chunks.at(-1).usageMetadata).toEqual(whole.usageMetadata);
  });

  test("without alt=sse the chunks come as one JSON array", async () => {
    const res = await postJson(`${sim.baseUrl("google")}/v1beta/models/g:streamGenerateContent`, hello, GEMINI_AUTH);
    const arr = await res.json();
    expect(Array.isArray(arr)).toBe(true);
    expect(arr.at(-1).candidates[0].finishReason).toBe("STOP");
  });
});

describe("Gemini function calling", () => {
  const tools = [
    {
      functionDeclarations: [
        { name: "other", parameters: { type: "OBJECT", properties: { x: { type: "NUMBER" } }, required: ["x"] } },
        {
          name: "weather",
          parameters: { type: "OBJECT", properties: { location: { type: "STRING" } }, required: ["location"] },
        },
      ],
    },
  ];
  const forced = {
    ...hello,
    tools,
    toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["weather"] } },
  };

  test("mode ANY returns a functionCall part with finishReason STOP", async () => {
    const body = await generate(forced);
    expect(structuralDiff(fixtureJson("gemini", "function-call.json"), body, IGNORE)).toEqual([]);
    expect(body.candidates[0].content.parts).toEqual([
      { functionCall: { name: "weather", args: { location: "sample location" } } },
    ]);
    expect(body.candidates[0].finishReason).toBe("STOP");
    const first = await generate({ ...forced, toolConfig: { functionCallingConfig: { mode: "ANY" } } });
    expect(first.candidates[0].content.parts[0].functionCall).toEqual({ name: "other", args: { x: 1.5 } });
    // AUTO on a turn ending with the user calls a tool too (the agent rule, docs/simulator.md).
    const auto = await generate({ ...forced, toolConfig: { functionCallingConfig: { mode: "AUTO" } } });
    expect(auto.candidates[0].content.parts[0].functionCall.name).toBe("other");
    const none = await generate({ ...forced, toolConfig: { functionCallingConfig: { mode: "NONE" } } });
    expect(none.candidates[0].content.parts[0].text).toBeString();
  });

  test("streamed: the whole call in one chunk, then the finish chunk", async () => {
    const chunks = await streamChunks(forced);
    const recorded = parseSse(fixtureText("gemini", "stream-function-call.sse"), "\r\n\r\n").map((e) =>
      JSON.parse(e.data),
    );
    expect(chunks).toHaveLength(recorded.length);
    expect(structuralDiff(recorded[0], chunks[0], IGNORE)).toEqual([]);
    expect(chunks[0].candidates[0].content.parts[0].functionCall.args).toEqual({ location: "sample location" });
    expect(chunks[1].candidates[0].finishReason).toBe("STOP");
  });
});

describe("Gemini implicit caching", () => {
  test("a repeated prefix of at least 1024 tokens is cachedContentTokenCount, included in the prompt count", async () => {
    const contents = [
      { role: "user", parts: [{ text: textOfLength(1200, "doc") }] },
      { role: "model", parts: [{ text: "noted" }] },
      { role: "user", parts: [{ text: "q1" }] },
    ];
    const first = await generate({ contents });
    expect(first.usageMetadata.cachedContentTokenCount).toBeUndefined();
    const second = await generate({ contents: [...contents.slice(0, 2), { role: "user", parts: [{ text: "q2" }] }] });
    expect(second.usageMetadata.cachedContentTokenCount).toBe(1202);
    expect(second.usageMetadata.promptTokenCount).toBe(1203);
    expect(second.usageMetadata.cacheTokensDetails).toEqual([{ modality: "TEXT", tokenCount: 1202 }]);
  });
});

describe("Gemini auth", () => {
  test("no key is 400 INVALID_ARGUMENT / API_KEY_INVALID exactly as recorded", async () => {
    const res = await postJson(generateUrl(), hello);
    expect(res.status).toBe(400);
    const recorded = fixtureHttp("gemini", "error-400-invalid-api-key.http");
    expect(res.headers.get("content-type")).toBe(recorded.headers["content-type"]!);
    expect(await res.json()).toEqual(recorded.body);
  });

  test("unknown paths are 404 NOT_FOUND", async () => {
    const res = await postJson(`${sim.baseUrl("google")}/v1beta/models/g:countTokens`, hello, GEMINI_AUTH);
    expect(res.status).toBe(404);
    expect((await res.json()).error.status).toBe("NOT_FOUND");
  });
});
