/**
 * The Gemini embeddings adapter against a local server: which method it calls (one text:
 * embedContent; several: batchEmbedContents with one request each), what it sends (the key
 * header, `models/<id>`, outputDimensionality), what it reads back, and its failures.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { UpstreamError } from "../../src/core/upstream/error";
import { fromGeminiEmbedResponse, geminiEmbeddingProvider } from "../../src/providers/gemini/embed";
import { ctxFor, fixtureServer, httpFixture, type Reply } from "./helpers";

let next: () => Reply = () => ({ kind: "body", body: "{}" });
const srv = fixtureServer(() => next());
afterAll(() => srv.stop());
const json = (body: unknown): Reply => ({ kind: "body", body: JSON.stringify(body) });

describe("Gemini embeddings adapter", () => {
  test("one text: POST :embedContent with the key header; the vector back, no token count", async () => {
    next = () => json({ embedding: { values: [0.5, -0.5] } });
    const r = await geminiEmbeddingProvider.embed(["hello"], "gemini-embedding-001", ctxFor(srv.url));
    const sent = srv.requests.at(-1)!;
    expect(sent.path).toBe("/v1beta/models/gemini-embedding-001:embedContent");
    expect(sent.headers.get("x-goog-api-key")).toBeTruthy();
    expect(sent.body).toEqual({ model: "models/gemini-embedding-001", content: { parts: [{ text: "hello" }] } });
    expect(r).toEqual({ vectors: [[0.5, -0.5]], promptTokens: null });
  });

  test("several texts: one batchEmbedContents call, dimensions on every request, vectors in order", async () => {
    next = () => json({ embeddings: [{ values: [1] }, { values: [2] }, { values: [3] }] });
    const r = await geminiEmbeddingProvider.embed(["a", "b", "c"], "gemini-embedding-001", ctxFor(srv.url), {
      dimensions: 1,
      user: "ignored",
    });
    const sent = srv.requests.at(-1)!;
    expect(sent.path).toBe("/v1beta/models/gemini-embedding-001:batchEmbedContents");
    expect(sent.body.requests).toHaveLength(3);
    expect(sent.body.requests[1]).toEqual({
      model: "models/gemini-embedding-001",
      content: { parts: [{ text: "b" }] },
      outputDimensionality: 1,
    });
    expect(r.vectors).toEqual([[1], [2], [3]]);
  });

  test("a response with the wrong number of vectors is a transient failure (retried elsewhere)", () => {
    const err = (() => {
      try {
        fromGeminiEmbedResponse({ embeddings: [{ values: [1] }] }, 2);
      } catch (e) {
        return e;
      }
    })() as UpstreamError;
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.kind).toBe("transient");
    expect(() => fromGeminiEmbedResponse({ embeddings: [{}] }, 1)).toThrow(UpstreamError);
  });

  test("errors keep Gemini's classification: 429 rate_limited with its retry delay, 400 key rejected", async () => {
    const limited = await httpFixture("gemini", "error-429.http");
    next = () => ({ kind: "http", fixture: limited });
    const e429 = await geminiEmbeddingProvider.embed(["x"], "gemini-embedding-001", ctxFor(srv.url)).catch((e) => e);
    expect(e429.kind).toBe("rate_limited");
    expect(e429.retryAfterMs).toBeGreaterThan(0);
    const badKey = await httpFixture("gemini", "error-400-invalid-api-key.http");
    next = () => ({ kind: "http", fixture: badKey });
    const e400 = await geminiEmbeddingProvider
      .embed(["x", "y"], "gemini-embedding-001", ctxFor(srv.url))
      .catch((e) => e);
    expect([e400.kind, e400.reason]).toEqual(["rejected", "auth"]);
  });

  test("token ids are refused without a call (Gemini embeds text only)", async () => {
    const before = srv.requests.length;
    const err = await geminiEmbeddingProvider.embed([[1, 2]], "gemini-embedding-001", ctxFor(srv.url)).catch((e) => e);
    expect(err.kind).toBe("rejected");
    expect(srv.requests.length).toBe(before);
    expect(geminiEmbeddingProvider.tokenInputs).toBe(false);
  });
});
