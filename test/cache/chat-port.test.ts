import { describe, expect, test } from "bun:test";
import { chatCachePort } from "../../src/core/cache/chat-port";
import { ResponseCache } from "../../src/core/cache/response-cache";
import type { NewCacheEntry, ResponseCacheStore, StoredHit } from "../../src/core/cache/types";
import type { ChatRequest } from "../../src/core/model/types";
import { fakeEmbed } from "./fake-embed";

/** An in-memory store: enough to check the adapter's mapping without a database. */
function memoryStore(): ResponseCacheStore {
  const rows = new Map<string, NewCacheEntry & { id: string; createdAt: Date }>();
  return {
    async takeExact(keyId, requestHash) {
      const r = rows.get(keyId + requestHash);
      return r ? ({ answer: r.answer, createdAt: r.createdAt } satisfies StoredHit) : null;
    },
    async recentEmbeddings(keyId, model, paramHash, limit) {
      return [...rows.values()]
        .filter((r) => r.keyId === keyId && r.model === model && r.paramHash === paramHash && r.embedding)
        .slice(0, limit)
        .map((r) => ({ id: r.id, embedding: r.embedding! }));
    },
    async takeById(id) {
      const r = [...rows.values()].find((x) => x.id === id);
      return r ? { answer: r.answer, createdAt: r.createdAt } : null;
    },
    async put(e) {
      rows.set(e.keyId + e.requestHash, { ...e, id: crypto.randomUUID(), createdAt: new Date() });
    },
    async purgeExpired() {
      return 0;
    },
  };
}

describe("chatCachePort", () => {
  const req: Omit<ChatRequest, "model"> = {
    messages: [{ role: "user", content: "What is two plus two?" }],
    max_tokens: 50,
    temperature: 0,
  };

  test("stores a ChatResult under the requested model and gives it back", async () => {
    const port = chatCachePort(
      new ResponseCache(memoryStore(), { ttlSeconds: 60, threshold: 0.95, embed: fakeEmbed() }),
    );
    const key = crypto.randomUUID();
    expect(await port.lookup(key, "semantic", "openai/gpt-4o-mini", req)).toBeNull();
    const usage = { promptTokens: 5, completionTokens: 1, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
    await port.store(key, "semantic", "openai/gpt-4o-mini", req, {
      result: { id: "up-1", content: "4", finishReason: "stop", usage },
      model: "gpt-4o-mini",
      provider: "openai",
    });
    const hit = await port.lookup(key, "semantic", "openai/gpt-4o-mini", { ...req, stream: true } as never);
    expect(hit).toEqual({
      result: { content: "4", finishReason: "stop", usage },
      model: "gpt-4o-mini",
      provider: "openai",
    });
    expect(await port.lookup(key, "semantic", "anthropic/claude-sonnet-4-5", req)).toBeNull();
  });
});
