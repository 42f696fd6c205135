/**
 * The simulator's Gemini embeddings: `:embedContent` answers `{embedding: {values}}`,
 * `:batchEmbedContents` answers `{embeddings: [...]}` in request order, with no token count
 * (as Google sends none); `outputDimensionality` sizes the vectors; bad requests get Google's
 * 400 envelope; directives in any text apply.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { embedText } from "../../src/sim/embed-vector.ts";
import { GEMINI_AUTH, postJson } from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.stop());
beforeEach(() => sim.reset());

const url = (method: "embedContent" | "batchEmbedContents", model = "gemini-embedding-001", version = "v1beta") =>
  `${sim.baseUrl("google")}/${version}/models/${model}:${method}`;
const req = (text: string, extra: object = {}) => ({
  model: "models/gemini-embedding-001",
  content: { parts: [{ text }] },
  ...extra,
});
const vec = (text: string, dims = 256) => Array.from(embedText(text, dims));

describe("Gemini embeddings", () => {
  test("embedContent: one vector, the same for the same text, no usage", async () => {
    const res = await postJson(url("embedContent"), req("hello world"), GEMINI_AUTH);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(Object.keys(body)).toEqual(["embedding"]);
    expect(body.embedding.values).toEqual(vec("hello world"));
    const v1 = await (
      await postJson(url("embedContent", "gemini-embedding-001", "v1"), req("hello world"), GEMINI_AUTH)
    ).json();
    expect(v1.embedding.values).toEqual(body.embedding.values);
  });

  test("batchEmbedContents: vectors in request order; outputDimensionality per request", async () => {
    const body = await (
      await postJson(
        url("batchEmbedContents"),
        { requests: [req("first"), req("second", { outputDimensionality: 8 })] },
        GEMINI_AUTH,
      )
    ).json();
    expect(body.embeddings.map((e: any) => e.values)).toEqual([vec("first"), vec("second", 8)]);
    expect(sim.stats().calls.google).toEqual({ "POST /v1beta/models/gemini-embedding-001:batchEmbedContents": 1 });
  });

  test("bad requests: Google's 400 INVALID_ARGUMENT", async () => {
    for (const [method, body] of [
      ["embedContent", { content: { parts: [] } }],
      ["embedContent", req("x", { outputDimensionality: 0 })],
      ["batchEmbedContents", { requests: [] }],
      ["batchEmbedContents", { requests: [{ ...req("x"), model: "models/other" }] }],
    ] as const) {
      const res = await postJson(url(method), body, GEMINI_AUTH);
      expect(res.status).toBe(400);
      expect((await res.json()).error.status).toBe("INVALID_ARGUMENT");
    }
  });

  test("a missing key is Google's 400 API_KEY_INVALID; directives apply", async () => {
    expect((await postJson(url("embedContent"), req("x"), {})).status).toBe(400);
    expect(
      (await postJson(url("batchEmbedContents"), { requests: [req("ok"), req("[sim:fail=503]")] }, GEMINI_AUTH)).status,
    ).toBe(503);
    const once = { requests: [req("[sim:fail=500x1]")] };
    expect((await postJson(url("batchEmbedContents"), once, GEMINI_AUTH)).status).toBe(500);
    expect((await postJson(url("batchEmbedContents"), once, GEMINI_AUTH)).status).toBe(200);
  });
});
