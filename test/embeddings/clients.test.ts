/**
 * POST /v1/embeddings through the clients people use, over real sockets to a gateway whose
 * upstreams are the simulator: the `openai` SDK (its default base64, floats, dimensions), the
 * Vercel AI SDK (`embed`, `embedMany`) and LangChain's OpenAIEmbeddings, on an OpenAI-protocol
 * model and on Gemini's. The vectors must be the simulator's own, in input order.
 */
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import OpenAI from "openai";
import { createOpenAI } from "@ai-sdk/openai";
import { embed as aiEmbed, embedMany } from "ai";
import { OpenAIEmbeddings } from "@langchain/openai";
import { suiteGateway } from "../harness";
import { tenant } from "../support/chat";
import { cosine, simEmbedCalls, simVector } from "./helpers";

setDefaultTimeout(30_000);

const close = (got: readonly number[], want: readonly number[]) => {
  expect(got).toHaveLength(want.length);
  got.forEach((x, i) => expect(x).toBeCloseTo(want[i]!, 6));
};

describe("embeddings through the official clients", () => {
  const gw = suiteGateway();

  for (const [model, provider, method] of [
    ["text-embedding-3-small", "openai", "/v1/embeddings"],
    ["gemini-embedding-001", "google", ":embedContent"],
  ] as const) {
    test(`openai SDK, ${model}: base64 by default, decoded by the SDK; usage and cost headers`, async () => {
      const { key } = await tenant(gw());
      // The SDK's own fetch, watched: what it asked for and what came back on the wire.
      const wire: { sent?: any; got?: any } = {};
      const watched = async (url: any, init: any) => {
        wire.sent = JSON.parse(init.body);
        const res = await fetch(url, init);
        wire.got = await res.clone().json();
        return res;
      };
      const sdk = new OpenAI({
        apiKey: key.key,
        baseURL: gw().url + "/v1",
        maxRetries: 0,
        fetch: watched as typeof fetch,
      });
      gw().gw.sim!.reset();
      const { data: r, response } = await sdk.embeddings.create({ model, input: "The quick brown fox" }).withResponse();
      expect(wire.sent.encoding_format).toBe("base64");
      expect(typeof wire.got.data[0].embedding).toBe("string");
      expect(r.object).toBe("list");
      expect(r.model).toBe(model);
      expect(r.data).toHaveLength(1);
      expect(r.data[0]!.object).toBe("embedding");
      expect(r.data[0]!.index).toBe(0);
      close(r.data[0]!.embedding, simVector("The quick brown fox"));
      // 19 characters: OpenAI's count (the simulator's ~4 a token) or, Gemini reporting none, the hold's ~3.
      const n = model.startsWith("gemini") ? 7 : 5;
      expect(r.usage).toEqual({ prompt_tokens: n, total_tokens: n });
      expect(Number(response.headers.get("x-cost-krw"))).toBeGreaterThanOrEqual(0);
      expect(Number(response.headers.get("x-cost-usd"))).toBeGreaterThan(0);
      expect(simEmbedCalls(gw())).toEqual({ [provider]: 1 });
      const route = Object.keys(gw().gw.sim!.stats().calls[provider]!)[0]!;
      expect(route).toContain(method);
    });

    test(`openai SDK, ${model}: floats, several inputs in order, dimensions`, async () => {
      const { sdk } = await tenant(gw());
      const texts = ["alpha beta gamma", "delta epsilon", "zeta eta theta iota"];
      const r = await sdk.embeddings.create({ model, input: texts, encoding_format: "float", dimensions: 64 });
      expect(r.data.map((d) => d.index)).toEqual([0, 1, 2]);
      r.data.forEach((d, i) => close(d.embedding, simVector(texts[i]!, 64)));
      // OpenAI's count (the simulator: ~4 characters a token); Gemini reports none: the hold's ~3 per ASCII character.
      const per = model.startsWith("gemini") ? 3 : 4;
      expect(r.usage.prompt_tokens).toBe(texts.reduce((n, t) => n + Math.ceil(t.length / per), 0));
    });

    test(`AI SDK embed and embedMany, ${model}`, async () => {
      const { key } = await tenant(gw());
      const openai = createOpenAI({ apiKey: key.key, baseURL: gw().url + "/v1" });
      const one = await aiEmbed({ model: openai.embedding(model), value: "sunny day at the beach", maxRetries: 0 });
      close(one.embedding, simVector("sunny day at the beach"));
      expect(one.usage.tokens).toBe(model.startsWith("gemini") ? 8 : 6);
      const values = ["sunny day at the beach", "rainy afternoon in the city", "sunny days at the beach!"];
      const many = await embedMany({ model: openai.embedding(model), values, maxRetries: 0 });
      expect(many.embeddings).toHaveLength(3);
      many.embeddings.forEach((e, i) => close(e, simVector(values[i]!)));
      expect(cosine(many.embeddings[0]!, many.embeddings[2]!)).toBeGreaterThan(
        cosine(many.embeddings[0]!, many.embeddings[1]!),
      );
    });

    test(`LangChain OpenAIEmbeddings embedQuery and embedDocuments, ${model}`, async () => {
      const { key } = await tenant(gw());
      const lc = new OpenAIEmbeddings({
        model,
        apiKey: key.key,
        configuration: { baseURL: gw().url + "/v1" },
        maxRetries: 0,
        dimensions: 32,
      });
      close(await lc.embedQuery("what is a gateway?"), simVector("what is a gateway?", 32));
      const docs = ["A gateway routes calls.", "Credits are held, then settled."];
      const vs = await lc.embedDocuments(docs);
      expect(vs).toHaveLength(2);
      vs.forEach((v, i) => close(v, simVector(docs[i]!, 32)));
    });
  }

  test("token-id inputs reach an OpenAI-protocol model as they are", async () => {
    const { sdk } = await tenant(gw());
    const r = await sdk.embeddings.create({
      model: "text-embedding-3-large",
      input: [[101, 2023, 102], [7]],
      encoding_format: "float",
    });
    expect(r.model).toBe("text-embedding-3-large");
    close(r.data[0]!.embedding, simVector("101 2023 102"));
    close(r.data[1]!.embedding, simVector("7"));
    expect(r.usage.prompt_tokens).toBe(4);
    const flat = await sdk.embeddings.create({
      model: "text-embedding-3-small",
      input: [5, 6, 7],
      encoding_format: "float",
    });
    expect(flat.data).toHaveLength(1);
    close(flat.data[0]!.embedding, simVector("5 6 7"));
  });

  test("a vendor-namespaced id is answered under the short id", async () => {
    const { sdk } = await tenant(gw());
    const r = await sdk.embeddings.create({ model: "google/gemini-embedding-001", input: ["one", "two"] });
    expect(r.model).toBe("gemini-embedding-001");
    expect(r.data).toHaveLength(2);
  });
});
