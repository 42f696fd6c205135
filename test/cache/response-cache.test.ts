import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openDatabase, type Database } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { ResponseCacheRepo } from "../../src/db/repos/response-cache";
import { ResponseCache, type EmbedFn, type ResponseCacheOptions } from "../../src/core/cache/response-cache";
import type { CacheableRequest, ResponseCacheStore, StoredAnswer } from "../../src/core/cache/types";
import { dbKinds, freshPostgres } from "../harness";
import { fakeEmbed } from "./fake-embed";

const QUESTION = "Explain in two sentences how photosynthesis turns sunlight into chemical energy in plants.";
const PARAPHRASE = "In two sentences, explain how photosynthesis turns sunlight into chemical energy in plants.";
const UNRELATED = "Write a haiku about autumn leaves falling on a quiet pond.";

function req(text: string, over: Partial<CacheableRequest> = {}): CacheableRequest {
  return {
    model: "openai/gpt-4o-mini",
    messages: [
      { role: "system", content: "You are a concise tutor." },
      { role: "user", content: text },
    ],
    max_tokens: 200,
    temperature: 0.2,
    ...over,
  };
}

function answer(content: string): StoredAnswer {
  return {
    content,
    finishReason: "stop",
    usage: { promptTokens: 30, completionTokens: 40, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    provider: "openai",
    model: "gpt-4o-mini",
  };
}

const newKey = () => crypto.randomUUID();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Counts calls, so a test can tell whether the embedder was consulted. */
function countingEmbed(inner: EmbedFn = fakeEmbed()): EmbedFn & { calls: number } {
  const f = (async (t: string) => {
    f.calls++;
    return inner(t);
  }) as EmbedFn & { calls: number };
  f.calls = 0;
  return f;
}

for (const kind of await dbKinds()) {
  describe(`response cache on ${kind}`, () => {
    let db: Database;
    let drop = async () => {};
    let repo: ResponseCacheRepo;
    const cache = (opts: Partial<ResponseCacheOptions> = {}) =>
      new ResponseCache(repo, { ttlSeconds: 3600, threshold: 0.95, embed: fakeEmbed(), ...opts });

    beforeAll(async () => {
      if (kind === "pg") {
        const fresh = await freshPostgres();
        drop = fresh.drop;
        db = await openDatabase({ url: fresh.url, max: 3 });
      } else {
        db = await openDatabase({});
      }
      await runMigrations(db);
      repo = new ResponseCacheRepo(db);
    });
    afterAll(async () => {
      await db.close();
      await drop();
    });

    test("exact: a miss, then a hit with the stored answer and a counted hit", async () => {
      const c = cache();
      const key = newKey();
      expect(await c.lookup(key, "exact", req(QUESTION))).toBeNull();
      await c.store(key, "exact", req(QUESTION), { ...answer("Plants capture light."), toolCalls: [] });
      const hit = await c.lookup(key, "exact", req(QUESTION));
      expect(hit).not.toBeNull();
      expect(hit!.content).toBe("Plants capture light.");
      expect(hit!.match).toBe("exact");
      expect(hit!.similarity).toBe(1);
      expect(hit!.usage.completionTokens).toBe(40);
      expect(hit!.provider).toBe("openai");
      expect(hit!.storedAt).toBeInstanceOf(Date);
      expect(hit!.toolCalls).toBeUndefined();
      await c.lookup(key, "exact", req(QUESTION));
      const [row] = await db.query<{ hit_count: unknown }>("select hit_count from response_cache where key_id = $1", [
        key,
      ]);
      expect(Number(row!.hit_count)).toBe(2);
    });

    test("off never reads nor writes", async () => {
      const c = cache();
      const key = newKey();
      await c.store(key, "off", req(QUESTION), answer("x"));
      expect(await db.query("select 1 from response_cache where key_id = $1", [key])).toHaveLength(0);
      await c.store(key, "exact", req(QUESTION), answer("x"));
      expect(await c.lookup(key, "off", req(QUESTION))).toBeNull();
    });

    test("another key never hits, in either mode", async () => {
      const c = cache();
      const a = newKey();
      const b = newKey();
      await c.store(a, "semantic", req(QUESTION), answer("for a"));
      expect(await c.lookup(b, "exact", req(QUESTION))).toBeNull();
      expect(await c.lookup(b, "semantic", req(QUESTION))).toBeNull();
      expect(await c.lookup(b, "semantic", req(PARAPHRASE))).toBeNull();
      expect((await c.lookup(a, "exact", req(QUESTION)))?.content).toBe("for a");
    });

    test("a changed parameter misses; the stream flag and trace id do not matter", async () => {
      const c = cache();
      const key = newKey();
      await c.store(key, "exact", req(QUESTION, { stream: true, trace_id: "trace-1" }), answer("streamed"));
      expect((await c.lookup(key, "exact", req(QUESTION)))?.content).toBe("streamed");
      expect((await c.lookup(key, "exact", req(QUESTION, { stream: false, trace_id: "trace-2" })))?.content).toBe(
        "streamed",
      );
      expect(await c.lookup(key, "exact", req(QUESTION, { temperature: 0.7 }))).toBeNull();
      expect(await c.lookup(key, "exact", req(QUESTION, { max_tokens: 201 }))).toBeNull();
      expect(await c.lookup(key, "exact", req(QUESTION, { model: "anthropic/claude-sonnet-4-5" }))).toBeNull();
    });

    test("storing the same request again replaces the answer", async () => {
      const c = cache();
      const key = newKey();
      await c.store(key, "exact", req(QUESTION), answer("first"));
      await c.store(key, "exact", req(QUESTION), answer("second"));
      expect((await c.lookup(key, "exact", req(QUESTION)))?.content).toBe("second");
      expect(await db.query("select 1 from response_cache where key_id = $1", [key])).toHaveLength(1);
    });

    test("expired entries never hit, and purge deletes them", async () => {
      const c = cache({ ttlSeconds: 0.3 });
      const key = newKey();
      await c.store(key, "semantic", req(QUESTION), answer("short-lived"));
      expect((await c.lookup(key, "exact", req(QUESTION)))?.content).toBe("short-lived");
      await sleep(450);
      expect(await c.lookup(key, "exact", req(QUESTION))).toBeNull();
      expect(await c.lookup(key, "semantic", req(PARAPHRASE))).toBeNull();
      const live = newKey();
      await cache().store(live, "exact", req(QUESTION), answer("long-lived"));
      expect(await c.purgeExpired(1)).toBeGreaterThanOrEqual(1);
      expect(await db.query("select 1 from response_cache where key_id = $1", [key])).toHaveLength(0);
      expect(await db.query("select 1 from response_cache where key_id = $1", [live])).toHaveLength(1);
    });

    test("semantic: a close paraphrase hits, an unrelated text misses", async () => {
      const c = cache();
      const key = newKey();
      await c.store(key, "semantic", req(QUESTION), answer("Light becomes sugar."));
      const hit = await c.lookup(key, "semantic", req(PARAPHRASE, { stream: true }));
      expect(hit?.content).toBe("Light becomes sugar.");
      expect(hit?.match).toBe("semantic");
      expect(hit!.similarity).toBeGreaterThanOrEqual(0.95);
      expect(hit!.similarity).toBeLessThan(1);
      expect(await c.lookup(key, "semantic", req(UNRELATED))).toBeNull();
      // The exact mode never matches by similarity.
      expect(await c.lookup(key, "exact", req(PARAPHRASE))).toBeNull();
    });

    test("semantic: the best of several candidates wins; the threshold is honoured", async () => {
      const c = cache();
      const key = newKey();
      await c.store(key, "semantic", req(UNRELATED), answer("haiku"));
      await c.store(key, "semantic", req(QUESTION), answer("photosynthesis"));
      expect((await c.lookup(key, "semantic", req(PARAPHRASE)))?.content).toBe("photosynthesis");
      expect(await cache({ threshold: 0.999 }).lookup(key, "semantic", req(PARAPHRASE))).toBeNull();
    });

    test("semantic: model, parameters and system prompt must match", async () => {
      const c = cache();
      const key = newKey();
      await c.store(key, "semantic", req(QUESTION), answer("x"));
      expect(await c.lookup(key, "semantic", req(PARAPHRASE, { model: "openai/gpt-4o" }))).toBeNull();
      expect(await c.lookup(key, "semantic", req(PARAPHRASE, { temperature: 1 }))).toBeNull();
      const otherSystem = req(PARAPHRASE);
      otherSystem.messages[0] = { role: "system", content: "Answer in Korean." };
      expect(await c.lookup(key, "semantic", otherSystem)).toBeNull();
    });

    test("semantic: multi-turn and tool requests are exact-only and never embedded", async () => {
      const embed = countingEmbed();
      const c = cache({ embed });
      const key = newKey();
      const multi = (text: string): CacheableRequest =>
        req(text, {
          messages: [
            { role: "user", content: "Hi" },
            { role: "assistant", content: "Hello! How can I help?" },
            { role: "user", content: text },
          ],
        });
      await c.store(key, "semantic", multi(QUESTION), answer("multi"));
      expect(embed.calls).toBe(0);
      const [row] = await db.query<{ embedding: unknown }>("select embedding from response_cache where key_id = $1", [
        key,
      ]);
      expect(row!.embedding).toBeNull();
      expect(await c.lookup(key, "semantic", multi(PARAPHRASE))).toBeNull();
      expect(await c.lookup(key, "semantic", req(QUESTION))).toBeNull();
      expect((await c.lookup(key, "semantic", multi(QUESTION)))?.content).toBe("multi");
      const tools = { tools: [{ type: "function" as const, function: { name: "lookup" } }] };
      await c.store(key, "semantic", req(QUESTION, tools), answer("tools"));
      expect(await c.lookup(key, "semantic", req(PARAPHRASE, tools))).toBeNull();
      expect(embed.calls).toBe(1); // only the single-turn lookup above embedded
    });

    test("store after a missed semantic lookup reuses the lookup's embedding", async () => {
      const embed = countingEmbed();
      const c = cache({ embed });
      const key = newKey();
      expect(await c.lookup(key, "semantic", req(QUESTION))).toBeNull();
      await c.store(key, "semantic", req(QUESTION), answer("x"));
      expect(embed.calls).toBe(1);
    });

    test("an embedding failure or timeout is a miss; exact hits still work", async () => {
      const key = newKey();
      await cache().store(key, "semantic", req(QUESTION), answer("stored"));
      const failing = cache({
        embed: async () => {
          throw new Error("embedding upstream down");
        },
      });
      expect(await failing.lookup(key, "semantic", req(PARAPHRASE))).toBeNull();
      expect((await failing.lookup(key, "semantic", req(QUESTION)))?.content).toBe("stored");
      const hanging = cache({ embed: () => new Promise<number[]>(() => {}), embedTimeoutMs: 50 });
      expect(await hanging.lookup(key, "semantic", req(PARAPHRASE))).toBeNull();
      const garbage = cache({ embed: async () => [Number.NaN, 1] });
      expect(await garbage.lookup(key, "semantic", req(PARAPHRASE))).toBeNull();
      // Store without an embedding: the entry still serves exact hits.
      const key2 = newKey();
      await failing.store(key2, "semantic", req(QUESTION), answer("no vector"));
      expect((await cache().lookup(key2, "semantic", req(QUESTION)))?.content).toBe("no vector");
      expect(await cache().lookup(key2, "semantic", req(PARAPHRASE))).toBeNull();
    });

    test("n > 1 and content-filtered answers are not cached", async () => {
      const c = cache();
      const key = newKey();
      await c.store(key, "exact", req(QUESTION, { n: 2 }), answer("two"));
      await c.store(key, "exact", req(UNRELATED), { ...answer(""), finishReason: "content_filter" });
      expect(await db.query("select 1 from response_cache where key_id = $1", [key])).toHaveLength(0);
    });

    test("tool calls round-trip", async () => {
      const c = cache();
      const key = newKey();
      const toolCalls = [
        { id: "call_1", type: "function" as const, function: { name: "get_weather", arguments: '{"city":"Seoul"}' } },
      ];
      await c.store(key, "exact", req(QUESTION), {
        ...answer(null as never),
        content: null,
        toolCalls,
        finishReason: "tool_calls",
      });
      const hit = await c.lookup(key, "exact", req(QUESTION));
      expect(hit?.content).toBeNull();
      expect(hit?.toolCalls).toEqual(toolCalls);
      expect(hit?.finishReason).toBe("tool_calls");
    });
  });
}

describe("response cache failures never fail the request", () => {
  const broken: ResponseCacheStore = {
    takeExact: async () => {
      throw new Error("connection refused");
    },
    recentEmbeddings: async () => {
      throw new Error("connection refused");
    },
    takeById: async () => {
      throw new Error("connection refused");
    },
    put: async () => {
      throw new Error("connection refused");
    },
    purgeExpired: async () => {
      throw new Error("connection refused");
    },
  };

  test("lookup returns null and store resolves when the store throws", async () => {
    const outcomes: string[] = [];
    const c = new ResponseCache(broken, {
      ttlSeconds: 60,
      threshold: 0.95,
      embed: fakeEmbed(),
      onOutcome: (o) => outcomes.push(o),
    });
    expect(await c.lookup(newKey(), "exact", req(QUESTION))).toBeNull();
    expect(await c.lookup(newKey(), "semantic", req(QUESTION))).toBeNull();
    await c.store(newKey(), "semantic", req(QUESTION), answer("x"));
    expect(outcomes).toEqual(["error", "error"]);
  });

  test("a closed database is a miss", async () => {
    const db = await openDatabase({});
    await runMigrations(db);
    const c = new ResponseCache(new ResponseCacheRepo(db), { ttlSeconds: 60, threshold: 0.95, embed: fakeEmbed() });
    await db.close();
    expect(await c.lookup(newKey(), "semantic", req(QUESTION))).toBeNull();
    await c.store(newKey(), "semantic", req(QUESTION), answer("x"));
  });
});
