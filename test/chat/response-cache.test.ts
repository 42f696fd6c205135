/**
 * The response cache through /v1/chat/completions: `exact` and `semantic` hits answer without
 * a provider call, cost 0, say `cached: true` (also as a stream), and leave the balance alone;
 * misses go upstream. Semantic similarity uses the simulator's trigram embeddings through the
 * catalog's embedding model, at the default threshold 0.95.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import {
  chat,
  chatFetch,
  eventually,
  fastUser,
  money,
  parseSse,
  sdk,
  simChatCalls,
  totalChatCalls,
  usageOf,
  user,
} from "../support/chat";

// Real servers and databases on a shared machine: generous per-test deadlines.
setDefaultTimeout(20_000);

let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway();
}, 60_000);
afterAll(async () => {
  await g?.stop();
});

/** Entries stored for a key (the store after a miss does not delay the answer). */
const entries = async (keyId: string) =>
  Number(
    (
      await g.gw.deps.db.query<{ n: string }>("select count(*)::text as n from response_cache where key_id = $1", [
        keyId,
      ])
    )[0]!.n,
  );
const stored = async (keyId: string, n: number) =>
  expect(await eventually(async () => (await entries(keyId)) >= n)).toBe(true);

async function cachingTenant(mode: "exact" | "semantic" | "off") {
  const u = await fastUser(g, { creditKrw: 100 });
  const k = await g.newKey(u, { response_cache_mode: mode });
  expect(k.response_cache_mode).toBe(mode);
  return { u, k, c: sdk(g, k.key) };
}

describe("exact", () => {
  test("the second identical call is a free hit with no upstream call", async () => {
    const { u, k, c } = await cachingTenant("exact");
    const body = { model: "gpt-4o", messages: user("cache this answer") };
    const first: any = await c.chat.completions.create(body);
    expect(first.cached).toBe(false);
    expect(first.cost.usd).toBeGreaterThan(0);
    await stored(k.id, 1);
    const balance = await money(g, u.id);
    g.gw.sim!.reset();
    const second: any = await c.chat.completions.create(body);
    expect(second.cached).toBe(true);
    expect(second.cost).toEqual({ usd: 0, krw: 0, fx_rate: 1400, markup_rate: 0 });
    expect(second.choices[0].message.content).toBe(first.choices[0].message.content);
    expect([second.model, second.provider]).toEqual([first.model, first.provider]);
    expect(second.usage.total_tokens).toBe(first.usage.total_tokens);
    expect(second.id).not.toBe(first.id);
    expect(totalChatCalls(g)).toBe(0);
    expect(await money(g, u.id)).toEqual(balance);
    // The hit is recorded for statistics, at cost 0.
    const raw = await chat(g, k.key, body);
    const ev = await usageOf(g, raw.headers.get("x-request-id")!);
    expect(ev.cached).toBe(true);
    expect(BigInt(ev.cost_micro)).toBe(0n);
    expect(raw.headers.get("x-cost-krw")).toBe("0");
  });

  test("stream: true on a cached entry replays it as a stream, free", async () => {
    const { u, k, c } = await cachingTenant("exact");
    const body = { model: "claude-haiku-4-5", messages: user("replay me as a stream") };
    const first: any = await c.chat.completions.create(body);
    await stored(k.id, 1);
    const balance = await money(g, u.id);
    g.gw.sim!.reset();
    const res = await chatFetch(g, k.key, { ...body, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    const events = parseSse(await res.text()).filter((e) => e.data !== null);
    expect(events.at(-1)!.data).toBe("[DONE]");
    const final = events.at(-2)!.json;
    expect(final.choices).toEqual([]);
    expect(final.cached).toBe(true);
    expect(final.cost).toEqual({ usd: 0, krw: 0, fx_rate: 1400, markup_rate: 0 });
    const chunks = events.slice(0, -2).map((e) => e.json);
    expect(chunks[0].choices[0].delta.role).toBe("assistant");
    expect(chunks.at(-1).choices[0]).toMatchObject({ delta: {}, finish_reason: "stop" });
    expect(chunks.map((ch) => ch.choices[0].delta.content ?? "").join("")).toBe(first.choices[0].message.content);
    expect(totalChatCalls(g)).toBe(0);
    expect(await money(g, u.id)).toEqual(balance);
  });

  test("a streamed answer is stored too, and serves a later non-streamed call", async () => {
    const { k, c } = await cachingTenant("exact");
    for (const model of ["gpt-4o-mini", "gemini-2.5-flash"]) {
      const body = { model, messages: user(`stream first for ${model}`) };
      const s = await c.chat.completions.create({ ...body, stream: true });
      let text = "";
      for await (const ch of s) text += ch.choices[0]?.delta?.content ?? "";
      await stored(k.id, model === "gpt-4o-mini" ? 1 : 2);
      g.gw.sim!.reset();
      const hit: any = await c.chat.completions.create(body);
      expect([model, hit.cached]).toEqual([model, true]);
      expect(hit.choices[0].message.content).toBe(text);
      expect(totalChatCalls(g)).toBe(0);
    }
  });

  test("misses: other parameters, another model, another key, a failed call, mode off", async () => {
    const { u, k, c } = await cachingTenant("exact");
    const body = { model: "gpt-4o-mini", messages: user("miss matrix") };
    await c.chat.completions.create(body);
    await stored(k.id, 1);
    g.gw.sim!.reset();
    const misses: any[] = [
      await c.chat.completions.create({ ...body, temperature: 0.2 }),
      await c.chat.completions.create({ ...body, max_tokens: 99 }),
      await c.chat.completions.create({ ...body, model: "gpt-4o" }),
      await c.chat.completions.create({
        ...body,
        messages: [{ role: "system", content: "be brief" }, ...body.messages],
      }),
      await sdk(g, (await g.newKey(u, { response_cache_mode: "exact" })).key).chat.completions.create(body),
    ];
    expect(misses.map((m) => m.cached)).toEqual([false, false, false, false, false]);
    expect(simChatCalls(g)).toEqual({ openai: 5 });
    // Failed answers are not stored.
    const failing = { model: "gpt-4o-mini", messages: user("not stored [sim:fail=503]") };
    expect((await chat(g, k.key, failing)).status).toBe(502);
    expect((await chat(g, k.key, failing)).status).toBe(502);
    // Mode off never hits.
    const off = await cachingTenant("off");
    await off.c.chat.completions.create(body);
    await Bun.sleep(100);
    expect(await entries(off.k.id)).toBe(0);
    expect(((await off.c.chat.completions.create(body)) as any).cached).toBe(false);
  });

  test("a hit needs no credits and passes no hold", async () => {
    const { u, k, c } = await cachingTenant("exact");
    const body = { model: "gpt-4o-mini", messages: user("cheap again"), max_tokens: 50 };
    await c.chat.completions.create(body);
    await stored(k.id, 1);
    // Empty the balance: a hit still answers (no hold), a miss is 402.
    await g.gw.deps.db.query("update users set balance_micro = 0 where id = $1", [u.id]);
    const hit: any = await c.chat.completions.create(body);
    expect(hit.cached).toBe(true);
    const miss: any = await c.chat.completions.create({ ...body, messages: user("new one") }).catch((e) => e);
    expect(miss.status).toBe(402);
  });
});

describe("semantic", () => {
  const original = "What is the capital city of France and what is its population?";

  test("a close paraphrase hits (no upstream call, free); an unrelated prompt misses", async () => {
    const { u, k, c } = await cachingTenant("semantic");
    const first: any = await c.chat.completions.create({ model: "gpt-4o-mini", messages: user(original) });
    expect(first.cached).toBe(false);
    await stored(k.id, 1);
    const balance = await money(g, u.id);
    g.gw.sim!.reset();
    for (const paraphrase of [
      "What is the capital of France and what is its population?",
      "what's the capital city of France and what is its population?",
    ]) {
      const hit: any = await c.chat.completions.create({ model: "gpt-4o-mini", messages: user(paraphrase) });
      expect([paraphrase, hit.cached]).toEqual([paraphrase, true]);
      expect(hit.choices[0].message.content).toBe(first.choices[0].message.content);
      expect(hit.cost.krw).toBe(0);
    }
    expect(totalChatCalls(g)).toBe(0);
    expect(await money(g, u.id)).toEqual(balance);
    // Below the threshold (cosine ≈ 0.93 with these embeddings) and unrelated: misses.
    const near: any = await c.chat.completions.create({
      model: "gpt-4o-mini",
      messages: user("What is the capital city of France and what's its population"),
    });
    expect(near.cached).toBe(false);
    const far: any = await c.chat.completions.create({
      model: "gpt-4o-mini",
      messages: user("How do I bake sourdough bread at home?"),
    });
    expect(far.cached).toBe(false);
    expect(far.choices[0].message.content).toContain("sourdough");
    expect(totalChatCalls(g)).toBe(2);
  });

  test("semantic mode still hits exactly, and a paraphrase streams from the cache", async () => {
    const { k, c } = await cachingTenant("semantic");
    await c.chat.completions.create({ model: "gemini-2.5-flash", messages: user(original) });
    await stored(k.id, 1);
    g.gw.sim!.reset();
    expect(
      ((await c.chat.completions.create({ model: "gemini-2.5-flash", messages: user(original) })) as any).cached,
    ).toBe(true);
    const res = await chatFetch(g, k.key, {
      model: "gemini-2.5-flash",
      stream: true,
      messages: user("What is the capital of France and what is its population?"),
    });
    const final = parseSse(await res.text())
      .filter((e) => e.json?.cost)
      .at(-1)!.json;
    expect(final.cached).toBe(true);
    expect(totalChatCalls(g)).toBe(0);
  });

  test("multi-turn requests and another model never hit semantically", async () => {
    const { k, c } = await cachingTenant("semantic");
    await c.chat.completions.create({ model: "gpt-4o-mini", messages: user(original) });
    await stored(k.id, 1);
    g.gw.sim!.reset();
    const turns: any = await c.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [
        { role: "user", content: "hello" },
        { role: "assistant", content: "hi" },
        { role: "user", content: "What is the capital of France and what is its population?" },
      ],
    });
    expect(turns.cached).toBe(false);
    const other: any = await c.chat.completions.create({
      model: "gpt-4o",
      messages: user("What is the capital of France and what is its population?"),
    });
    expect(other.cached).toBe(false);
    expect(simChatCalls(g)).toEqual({ openai: 2 });
  });
});
