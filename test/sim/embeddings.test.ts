import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { fixtureJson, OPENAI_AUTH, postJson, structuralDiff } from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.stop());

const embed = async (input: unknown, extra: object = {}, provider = "openai") => {
  const res = await postJson(
    `${sim.baseUrl(provider)}/v1/embeddings`,
    { model: "text-embedding-3-small", input, ...extra },
    OPENAI_AUTH,
  );
  return { status: res.status, body: await res.json() };
};
const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe("embeddings", () => {
  test("OpenAI's list shape with usage", async () => {
    const { status, body } = await embed(["hello world", "goodbye"]);
    expect(status).toBe(200);
    expect(structuralDiff(fixtureJson("openai", "embeddings.json"), body)).toEqual([]);
    expect(body.data.map((d: { index: number }) => d.index)).toEqual([0, 1]);
    expect(body.usage).toEqual({ prompt_tokens: 3 + 2, total_tokens: 5 });
  });

  test("same text, same vector; similar texts close; unrelated texts far", async () => {
    const { body } = await embed([
      "The quick brown fox jumps over the lazy dog",
      "The quick brown fox jumped over the lazy dog!",
      "Quarterly revenue grew by eleven percent in Seoul",
      "The quick brown fox jumps over the lazy dog",
    ]);
    const [a, b, c, a2] = body.data.map((d: { embedding: number[] }) => d.embedding);
    expect(a).toEqual(a2);
    expect(Math.hypot(...a)).toBeCloseTo(1, 5);
    expect(cosine(a, b)).toBeGreaterThan(0.8);
    expect(cosine(a, c)).toBeLessThan(0.3);
  });

  test("dimensions, base64 encoding, token-array input", async () => {
    expect((await embed("abc", { dimensions: 64 })).body.data[0].embedding).toHaveLength(64);
    const floats = (await embed("some text")).body.data[0].embedding as number[];
    const b64 = (await embed("some text", { encoding_format: "base64" })).body.data[0].embedding as string;
    const decoded = Array.from(new Float32Array(Buffer.from(b64, "base64").buffer.slice(0)));
    expect(decoded).toHaveLength(floats.length);
    decoded.forEach((x, i) => expect(x).toBeCloseTo(floats[i]!, 6));
    const tokens = await embed([[1, 2, 3]]);
    expect(tokens.body.usage.prompt_tokens).toBe(3);
  });

  test("served by every OpenAI-compatible provider; bad input is a 400", async () => {
    expect((await embed("x", {}, "together")).status).toBe(200);
    const bad = await embed({ not: "valid" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe("input");
  });

  test("directives in the input apply", async () => {
    expect((await embed(["fine", "[sim:fail=500]"])).status).toBe(500);
  });
});
