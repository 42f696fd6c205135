/**
 * Provider preferences (`provider: {order, only, ignore, sort, max_price, allow_fallbacks}`)
 * and cross-border training consent, observed by who answers and by the simulator's counts.
 * deepseek-v3 is offered by deepseek then together; llama-3.3-70b by together then groq;
 * together trains on data (needs consent).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { chat, errorCode, fastUser, simChatCalls, tenant, user } from "../support/chat";

// Real servers and databases on a shared machine: generous per-test deadlines.
setDefaultTimeout(20_000);

let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway();
}, 60_000);
afterAll(async () => {
  await g?.stop();
});

const consent = (userId: string, on: boolean) =>
  g.admin("PATCH", `/v1/admin/users/${userId}`, { xborder_training_consent: on });

/** A consenting tenant's call; returns status, provider and the simulator's counts. */
async function run(key: string, model: string, provider: unknown, text = "prefs") {
  g.gw.sim!.reset();
  const r = await chat(g, key, { model, messages: user(text), provider });
  return { status: r.status, provider: r.body?.provider, body: r.body, calls: simChatCalls(g) };
}

describe("provider preferences", () => {
  let key: string;
  beforeAll(async () => {
    const t = await tenant(g, 1000);
    await consent(t.user.id, true);
    key = t.key.key;
  });

  test("default order is the catalog's", async () => {
    expect((await run(key, "deepseek-v3", undefined)).provider).toBe("deepseek");
    expect((await run(key, "llama-3.3-70b", undefined)).provider).toBe("together");
  });

  test("order: listed providers first, the others still follow as fallbacks", async () => {
    expect((await run(key, "deepseek-v3", { order: ["together"] })).provider).toBe("together");
    const r = await run(key, "deepseek-v3", { order: ["together"] }, "order fallback [sim:fail@together=503]");
    expect(r.provider).toBe("deepseek");
    expect(r.calls).toEqual({ together: 3, deepseek: 1 });
    // Unknown ids in order are harmless.
    expect((await run(key, "deepseek-v3", { order: ["nope", "together"] })).provider).toBe("together");
  });

  test("allow_fallbacks: false tries only the first candidate", async () => {
    const r = await run(
      key,
      "deepseek-v3",
      { order: ["together"], allow_fallbacks: false },
      "no fallback [sim:fail@together=503]",
    );
    expect(r.status).toBe(502);
    expect(r.calls).toEqual({ together: 3 });
    const d = await run(key, "deepseek-v3", { allow_fallbacks: false }, "no fallback [sim:fail@deepseek=503]");
    expect(d.status).toBe(502);
    expect(d.calls).toEqual({ deepseek: 3 });
  });

  test("only: an allowlist (no fallback outside it)", async () => {
    expect((await run(key, "deepseek-v3", { only: ["together"] })).provider).toBe("together");
    const r = await run(key, "deepseek-v3", { only: ["deepseek"] }, "only [sim:fail@deepseek=503]");
    expect(r.status).toBe(502);
    expect(r.calls).toEqual({ deepseek: 3 });
  });

  test("ignore: a blocklist", async () => {
    expect((await run(key, "deepseek-v3", { ignore: ["deepseek"] })).provider).toBe("together");
    expect((await run(key, "llama-3.3-70b", { ignore: ["together"] })).provider).toBe("groq");
  });

  test("only/ignore leaving nothing is 400 naming the model's providers, before any call", async () => {
    for (const prefs of [
      { only: ["openai"] },
      { ignore: ["deepseek", "together"] },
      { only: ["deepseek"], ignore: ["deepseek"] },
    ]) {
      const r = await run(key, "deepseek-v3", prefs);
      expect([prefs, r.status]).toEqual([prefs, 400]);
      expect(new Set(r.body.detail.providers)).toEqual(new Set(["deepseek", "together"]));
      expect(r.calls).toEqual({});
    }
  });

  test("sort: price puts the cheapest offering first", async () => {
    // llama: together 0.88+0.88, groq 0.59+0.79 USD/Mtok.
    expect((await run(key, "llama-3.3-70b", { sort: "price" })).provider).toBe("groq");
    const r = await run(key, "llama-3.3-70b", { sort: "price" }, "sorted fallback [sim:fail@groq=503]");
    expect(r.provider).toBe("together");
    expect(r.calls).toEqual({ groq: 3, together: 1 });
  });

  test("sort: latency and throughput are accepted (no data yet keeps catalog order)", async () => {
    for (const sort of ["latency", "throughput"]) expect((await run(key, "deepseek-v3", { sort })).status).toBe(200);
  });

  test("sort: latency prefers the provider with the faster recent first byte", async () => {
    // together answers slowly, groq quickly; the gateway remembers both.
    expect((await run(key, "llama-3.3-70b", { only: ["together"] }, "slow one [sim:latency=250]")).provider).toBe(
      "together",
    );
    expect((await run(key, "llama-3.3-70b", { only: ["groq"] })).provider).toBe("groq");
    expect((await run(key, "llama-3.3-70b", undefined)).provider).toBe("together");
    expect((await run(key, "llama-3.3-70b", { sort: "latency" })).provider).toBe("groq");
  });

  test("max_price (USD per million tokens) drops pricier offerings", async () => {
    expect((await run(key, "llama-3.3-70b", { max_price: { prompt: 0.7 } })).provider).toBe("groq");
    expect((await run(key, "llama-3.3-70b", { max_price: { completion: 0.8 } })).provider).toBe("groq");
    expect((await run(key, "llama-3.3-70b", { max_price: { prompt: 0.88, completion: 0.88 } })).provider).toBe(
      "together",
    );
    const none = await run(key, "llama-3.3-70b", { max_price: { prompt: 0.1 } });
    expect(none.status).toBe(400);
    expect(none.calls).toEqual({});
  });

  test("order combines with the filters", async () => {
    const r = await run(key, "llama-3.3-70b", { order: ["groq"], ignore: ["groq"] });
    expect(r.provider).toBe("together");
  });

  test("malformed preferences are 422", async () => {
    for (const [prefs, loc] of [
      [{ order: "groq" }, ["body", "provider", "order"]],
      [{ only: [1] }, ["body", "provider", "only", 0]],
      [{ sort: "cheapest" }, ["body", "provider", "sort"]],
      [{ max_price: { prompt: -1 } }, ["body", "provider", "max_price", "prompt"]],
      [{ allow_fallbacks: "no" }, ["body", "provider", "allow_fallbacks"]],
    ] as const) {
      const r = await chat(g, key, { model: "deepseek-v3", messages: user("x"), provider: prefs });
      expect([prefs, r.status]).toEqual([prefs, 422]);
      expect(r.body.detail.map((d: any) => JSON.stringify(d.loc))).toContain(JSON.stringify(loc));
    }
  });
});

describe("cross-border training consent", () => {
  test("without consent a training provider is skipped: llama-3.3-70b uses groq, not together", async () => {
    const { key } = await tenant(g);
    const r = await run(key.key, "llama-3.3-70b", undefined);
    expect(r.provider).toBe("groq");
    expect(r.calls).toEqual({ groq: 1 });
    // Even asking for together first.
    expect((await run(key.key, "llama-3.3-70b", { order: ["together"] })).provider).toBe("groq");
  });

  test("only together without consent: 403 xborder_training_consent_required listing it; consent opens it", async () => {
    const u = await fastUser(g, { creditKrw: 100 });
    const k = await g.newKey(u);
    const r = await run(k.key, "llama-3.3-70b", { only: ["together"] });
    expect(r.status).toBe(403);
    expect(errorCode(r.body)).toBe("xborder_training_consent_required");
    expect(r.body.detail.providers).toEqual(["together"]);
    expect(typeof r.body.detail.message).toBe("string");
    expect(r.calls).toEqual({});
    await consent(u.id, true);
    const ok = await run(k.key, "llama-3.3-70b", { only: ["together"] });
    expect([ok.status, ok.provider]).toEqual([200, "together"]);
    // Withdrawing consent closes it again (the key cache follows the account).
    await consent(u.id, false);
    expect((await run(k.key, "llama-3.3-70b", { only: ["together"] })).status).toBe(403);
  });

  test("without consent, a failing groq does not fall back to together", async () => {
    const { key } = await tenant(g);
    const r = await run(key.key, "llama-3.3-70b", undefined, "groq down [sim:fail@groq=503]");
    expect(r.status).toBe(502);
    expect(r.calls).toEqual({ groq: 3 });
  });
});
