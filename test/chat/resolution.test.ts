/**
 * What a `model` value means on chat (short, vendor-namespaced, `model@provider`, routing
 * parents, retired and unknown ids, other modalities) and who may call it (allowed_models,
 * scopes, BYOK keys, credentials that are not API keys).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import {
  candidates,
  chat,
  errorCode,
  fastUser,
  money,
  RecordingProxy,
  sdk,
  simChatCalls,
  tenant,
  user,
} from "../support/chat";

// Real servers and databases on a shared machine: generous per-test deadlines.
setDefaultTimeout(20_000);

let g: TestGateway;
let proxy: RecordingProxy;
beforeAll(async () => {
  proxy = new RecordingProxy();
  g = await startTestGateway({ env: { OPENAI_BASE_URL: proxy.url } });
  proxy.aim(g.gw.sim!.baseUrl("openai"));
}, 60_000);
afterAll(async () => {
  await g?.stop();
  proxy?.stop();
});

const consent = (userId: string, on = true) =>
  g.admin("PATCH", `/v1/admin/users/${userId}`, { xborder_training_consent: on });

describe("model resolution", () => {
  test("short and vendor-namespaced ids answer with the short id and the provider", async () => {
    const { sdk: c } = await tenant(g);
    for (const model of ["gpt-4o-mini", "openai/gpt-4o-mini"]) {
      const r: any = await c.chat.completions.create({ model, messages: user("which model") });
      expect(r.model).toBe("gpt-4o-mini");
      expect(r.provider).toBe("openai");
      expect(r.choices[0].message.content).toContain("openai/gpt-4o-mini");
    }
    const v: any = await c.chat.completions.create({ model: "anthropic/claude-haiku-4-5", messages: user("vendor") });
    expect([v.model, v.provider]).toEqual(["claude-haiku-4-5", "anthropic"]);
  });

  test("model@provider pins the provider (together needs training consent)", async () => {
    const { user: u, sdk: c, key } = await tenant(g);
    g.gw.sim!.reset();
    const denied: any = await c.chat.completions
      .create({ model: "deepseek-v3@together", messages: user("pin") })
      .catch((e) => e);
    expect(denied.status).toBe(403);
    expect(denied.code).toBe("xborder_training_consent_required");
    const raw = await chat(g, key.key, { model: "deepseek-v3@together", messages: user("pin") });
    expect(raw.body.detail.providers).toEqual(["together"]);
    expect(g.gw.sim!.stats().total).toBe(0);
    await consent(u.id);
    const r: any = await c.chat.completions.create({ model: "deepseek-v3@together", messages: user("pin") });
    expect([r.model, r.provider]).toEqual(["deepseek-v3", "together"]);
    const d: any = await c.chat.completions.create({ model: "deepseek-v3@deepseek", messages: user("pin") });
    expect([d.model, d.provider]).toEqual(["deepseek-v3", "deepseek"]);
    expect(simChatCalls(g)).toEqual({ together: 1, deepseek: 1 });
  });

  test("a pin to a provider that does not offer the model is 400", async () => {
    const { key } = await tenant(g);
    const r = await chat(g, key.key, { model: "gpt-4o-mini@anthropic", messages: user("x") });
    expect(r.status).toBe(400);
  });

  test("an unknown model is 400 model_not_found with up to 5 suggestions", async () => {
    const { key, user: u } = await tenant(g, 50);
    g.gw.sim!.reset();
    const r = await chat(g, key.key, { model: "gpt-4o-mni", messages: user("x") });
    expect(r.status).toBe(400);
    expect(errorCode(r.body)).toBe("model_not_found");
    expect(typeof r.body.detail.message).toBe("string");
    expect(Array.isArray(r.body.detail.suggestions)).toBe(true);
    expect(r.body.detail.suggestions.length).toBeGreaterThan(0);
    expect(r.body.detail.suggestions.length).toBeLessThanOrEqual(5);
    expect(r.body.detail.suggestions).toContain("gpt-4o-mini");
    expect(g.gw.sim!.stats().total).toBe(0);
    expect(await money(g, u.id)).toEqual({ balance: 50_000_000n, held: 0n });
  });

  test("a video model on chat is 400; an embedding model too", async () => {
    const { key } = await tenant(g);
    for (const model of ["kling-v3", "veo-3", "text-embedding-3-small"]) {
      const r = await chat(g, key.key, { model, messages: user("x") });
      expect([model, r.status, errorCode(r.body)]).toEqual([model, 400, "model_not_found"]);
    }
  });

  test("a routing parent answers with one of its leaves as `model`", async () => {
    const { sdk: c } = await tenant(g);
    const r: any = await c.chat.completions.create({ model: "benchmark_smart", messages: user("route me") });
    expect(candidates("benchmark_smart")).toContain(r.model);
    expect(r.model).not.toBe("benchmark_smart");
    expect(typeof r.provider).toBe("string");
    const s = await c.chat.completions.create({ model: "benchmark_smart", messages: user("route me"), stream: true });
    const models = new Set<string>();
    for await (const ch of s) models.add(ch.model);
    expect([...models].every((m) => m !== "benchmark_smart")).toBe(true);
  });

  test("a routing parent falls back to its next leaf when the first leaf's providers fail", async () => {
    const { sdk: c } = await tenant(g);
    g.gw.sim!.reset();
    const r: any = await c.chat.completions.create({
      model: "benchmark_smart",
      messages: user("first leaf down [sim:fail@anthropic=503]"),
    });
    // The first leaf is a Claude model, the second an OpenAI one.
    const [first, second] = candidates("benchmark_smart");
    expect(first).toStartWith("claude-");
    expect(r.model).toBe(second!);
    expect(r.provider).toBe("openai");
    expect(simChatCalls(g)).toEqual({ anthropic: 3, openai: 1 });
  });

  test("reasoning_mode pro: a variant model, the top effort, or 400 naming the models that have it", async () => {
    const { key } = await tenant(g, 200);
    const variant = await chat(g, key.key, {
      model: "gemini-2.5-flash",
      messages: user("pro please"),
      reasoning_mode: "pro",
    });
    expect(variant.status).toBe(200);
    expect(variant.body.model).toBe("gemini-2.5-pro");
    const effort = await chat(g, key.key, {
      model: "claude-haiku-4-5",
      messages: user("pro please"),
      reasoning_mode: "pro",
    });
    expect(effort.status).toBe(200);
    expect(effort.body.model).toBe("claude-haiku-4-5");
    // Anthropic counts thinking inside output_tokens: the pro answer carries the thinking.
    const standard = await chat(g, key.key, {
      model: "claude-haiku-4-5",
      messages: user("pro please"),
      reasoning_mode: "standard",
    });
    expect(effort.body.usage.completion_tokens).toBeGreaterThan(standard.body.usage.completion_tokens);
    expect(effort.body.choices[0].message.content).toBe(standard.body.choices[0].message.content);
    const none = await chat(g, key.key, { model: "gpt-4o-mini", messages: user("pro please"), reasoning_mode: "pro" });
    expect(none.status).toBe(400);
    expect(none.body.detail.error).toBe("reasoning_mode_unsupported");
    expect(none.body.detail.suggestions).toContain("claude-sonnet-4-5");
  });

  test("the retired parents are 400", async () => {
    const { key } = await tenant(g);
    for (const model of ["pleum-smart", "pleum-perfect"]) {
      const r = await chat(g, key.key, { model, messages: user("x") });
      expect([model, r.status]).toEqual([model, 400]);
      expect(r.body.detail.error).toBeString();
    }
  });
});

describe("who may call", () => {
  test("allowed_models: a model outside the set is 400; inside (any id form) works", async () => {
    // Enough credit for the parent's hold (sized by its dearest candidate).
    const { key } = await tenant(g, 1000, { allowed_models: ["openai/gpt-4o-mini", "benchmark_smart"] });
    const out = await chat(g, key.key, { model: "gpt-4o", messages: user("x") });
    expect(out.status).toBe(400);
    expect(errorCode(out.body)).toBe("model_not_allowed");
    for (const model of ["gpt-4o-mini", "openai/gpt-4o-mini", "gpt-4o-mini@openai", "benchmark_smart"]) {
      const r = await chat(g, key.key, { model, messages: user("x") });
      expect([model, r.status]).toEqual([model, 200]);
    }
    // A parent in the set does not open its leaves one by one.
    expect((await chat(g, key.key, { model: candidates("benchmark_smart")[0]!, messages: user("x") })).status).toBe(
      400,
    );
  });

  test("scopes: usage:read only is 403; chat and null (legacy) call models", async () => {
    const u = await fastUser(g, { creditKrw: 100 });
    const readOnly = await g.newKey(u, { scopes: ["usage:read"] });
    const r = await chat(g, readOnly.key, { model: "gpt-4o-mini", messages: user("x") });
    expect(r.status).toBe(403);
    expect(errorCode(r.body)).toBe("scope_required");
    const err: any = await sdk(g, readOnly.key)
      .chat.completions.create({ model: "gpt-4o-mini", messages: user("x"), stream: true })
      .catch((e) => e);
    expect(err.status).toBe(403);
    for (const scopes of [["chat"], ["chat", "usage:read"], null]) {
      const k = await g.newKey(u, { scopes });
      expect([scopes, (await chat(g, k.key, { model: "gpt-4o-mini", messages: user("x") })).status]).toEqual([
        scopes,
        200,
      ]);
    }
  });

  test("a management key, a JWT, or no credential on chat is 401", async () => {
    const u = await fastUser(g, { creditKrw: 100 });
    const m = await g.call("POST", "/v1/management-keys", { token: u.jwt, body: { name: "ops" } });
    expect(m.status).toBe(201);
    for (const token of [m.body.key, u.jwt, undefined]) {
      const r = await chat(g, token, { model: "gpt-4o-mini", messages: user("x") });
      expect(r.status).toBe(401);
      expect(errorCode(r.body)).toBe("unauthorized");
    }
  });

  test("BYOK: the user's credential reaches only its provider, and nothing is charged", async () => {
    const u = await fastUser(g, { creditKrw: 10 });
    const b = await g.admin("POST", `/v1/admin/users/${u.id}/byok-keys`, {
      provider: "openai",
      provider_api_key: "sk-users-own-openai",
    });
    expect(b.status).toBe(201);
    const c = sdk(g, b.body.key);
    const before = await money(g, u.id);
    g.gw.sim!.reset();
    proxy.clear();
    const r: any = await c.chat.completions.create({ model: "gpt-4o-mini", messages: user("bring your own key") });
    expect(r.provider).toBe("openai");
    expect(r.cost.krw).toBe(0);
    expect(r.cost.usd).toBe(0);
    // A routing parent keeps only the BYOK provider's leaves.
    const p: any = await c.chat.completions.create({ model: "benchmark_smart", messages: user("parent with byok") });
    const openaiLeaf = candidates("benchmark_smart").find((m) => m.startsWith("gpt-"));
    expect([p.model, p.provider]).toEqual([openaiLeaf, "openai"]);
    // Streams too.
    const s = await c.chat.completions.create({ model: "gpt-4o-mini", messages: user("stream byok"), stream: true });
    let cost: any;
    for await (const ch of s as any) if (ch.cost) cost = ch.cost;
    expect(cost.krw).toBe(0);
    expect(await money(g, u.id)).toEqual(before);
    expect(simChatCalls(g)).toEqual({ openai: 3 });
    expect(proxy.chatBodies()).toHaveLength(3);
    for (const sent of proxy.bodies) expect(sent.authorization).toBe("Bearer sk-users-own-openai");
    // A model the provider does not serve is refused before any call.
    const other = await chat(g, b.body.key, { model: "claude-haiku-4-5", messages: user("x") });
    expect(other.status).toBe(400);
    expect(simChatCalls(g)).toEqual({ openai: 3 });
    // No token price means no credits are needed either.
    const broke = await fastUser(g);
    const bk = await g.admin("POST", `/v1/admin/users/${broke.id}/byok-keys`, {
      provider: "anthropic",
      provider_api_key: "sk-ant-own",
    });
    const free: any = await sdk(g, bk.body.key).chat.completions.create({
      model: "claude-haiku-4-5",
      messages: user("no credits needed"),
    });
    expect([free.provider, free.cost.krw, free.cost.usd]).toEqual(["anthropic", 0, 0]);
    expect(await money(g, broke.id)).toEqual({ balance: 0n, held: 0n });
    // The platform key still uses the platform credential.
    const plain = await g.newKey(u);
    proxy.clear();
    expect((await chat(g, plain.key, { model: "gpt-4o-mini", messages: user("platform") })).status).toBe(200);
    expect(proxy.bodies[0]!.authorization).not.toBe("Bearer sk-users-own-openai");
  });
});
