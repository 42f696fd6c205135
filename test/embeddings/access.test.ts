/**
 * Who may call POST /v1/embeddings and what is refused, with the specification's bodies: the
 * key's scopes and allowed_models, rate and concurrency limits, ids that are not embedding
 * models (and the chat endpoints called with one), and, outside demo mode, providers without
 * a credential (503 `provider_not_configured`, nothing charged; a BYOK key reaches its own).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startSimulator, type Simulator } from "../../src/sim";
import { startTestGateway, suiteGateway, type TestGateway } from "../harness";
import { errorCode, fastUser, money, sdk, tenant, user } from "../support/chat";
import { embed, simEmbedCalls, simVector } from "./helpers";

setDefaultTimeout(30_000);

const small = (input: unknown = "hello") => ({ model: "text-embedding-3-small", input });

describe("embeddings: keys, models and limits", () => {
  const gw = suiteGateway({ env: { RATE_LIMIT_RPM: "3", CONCURRENCY_PER_KEY: "1" } });

  test("scopes: `chat` (or none set) may call; `usage:read` alone is 403 scope_required", async () => {
    const u = await fastUser(gw(), { creditKrw: 10 });
    for (const scopes of [["chat"], null])
      expect((await embed(gw(), (await gw().newKey(u, { scopes })).key, small())).status).toBe(200);
    const r = await embed(gw(), (await gw().newKey(u, { scopes: ["usage:read"] })).key, small());
    expect(r.status).toBe(403);
    expect(errorCode(r.body)).toBe("scope_required");
  });

  test("allowed_models: another model is 400 model_not_allowed, the allowed one answers", async () => {
    const { key } = await tenant(gw(), 10, { allowed_models: ["gemini-embedding-001", "gpt-4o-mini"] });
    const r = await embed(gw(), key.key, small());
    expect(r.status).toBe(400);
    expect(errorCode(r.body)).toBe("model_not_allowed");
    expect((await embed(gw(), key.key, { model: "google/gemini-embedding-001", input: "ok" })).status).toBe(200);
  });

  test("ids that are not embedding models: 400 model_not_found with embedding suggestions", async () => {
    const u = await fastUser(gw(), { creditKrw: 10 });
    // One key per call: this suite's keys may make 3 calls a minute.
    const call = async (model: string, headers?: Record<string, string>) =>
      embed(gw(), (await gw().newKey(u)).key, { model, input: "x" }, headers);
    for (const model of ["gpt-4o-mini", "benchmark_smart", "veo-3", "orch/some-policy", "text-embedding-3-smal"]) {
      const r = await call(model);
      expect([model, r.status, errorCode(r.body)]).toEqual([model, 400, "model_not_found"]);
      if (model.endsWith("smal")) expect(r.body.detail.suggestions).toContain("text-embedding-3-small");
    }
    const chat = await call("gpt-4o-mini", { "accept-language": "en" });
    expect(chat.body.detail.message).toContain("'gpt-4o-mini' is a chat model and cannot serve an embedding request.");
  });

  test("the chat endpoints refuse an embedding model (400 model_not_found), through the SDK too", async () => {
    const { key, sdk: c } = await tenant(gw(), 10);
    const r = await gw().call("POST", "/v1/chat/completions", {
      token: key.key,
      body: { model: "text-embedding-3-small", messages: user("hi") },
    });
    expect(r.status).toBe(400);
    expect(errorCode(r.body)).toBe("model_not_found");
    const e: any = await c.responses.create({ model: "gemini-embedding-001", input: "hi" }).catch((x) => x);
    expect([e.status, e.code]).toEqual([400, "model_not_found"]);
  });

  test("request fields: a bad encoding_format, dimensions or input type is a 422 naming the field", async () => {
    const { key } = await tenant(gw(), 10);
    for (const [extra, field] of [
      [{ encoding_format: "int8" }, "encoding_format"],
      [{ dimensions: 0 }, "dimensions"],
      [{ dimensions: 1.5 }, "dimensions"],
      [{ input: { text: "x" } }, "input"],
      [{ input: [1, "a"] }, "input"],
      [{ input: [-1] }, "input"],
      [{ model: "" }, "model"],
      [{ input: Array.from({ length: 2049 }, () => "a") }, "input"],
    ] as const) {
      const r = await embed(gw(), key.key, { ...small(), ...extra });
      expect([field, r.status, r.body.detail[0].loc[1]]).toEqual([field, 422, field]);
    }
  });

  test("base64 is float32 little-endian bytes of the same vector", async () => {
    const { key } = await tenant(gw(), 10);
    const r = await embed(gw(), key.key, { ...small("same vector"), encoding_format: "base64" });
    const bytes = Buffer.from(r.body.data[0].embedding, "base64");
    const floats = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
    expect(floats).toEqual(Array.from(Float32Array.from(simVector("same vector"))));
  });

  test("the key's rate limit counts embeddings: the 4th call in a minute is 429", async () => {
    const { key } = await tenant(gw(), 10);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await embed(gw(), key.key, small(`rate ${i}`))).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  test("concurrency per key: a second call while one is in flight is 429 concurrency_limit_exceeded, not charged", async () => {
    const { key, user: u } = await tenant(gw(), 10);
    gw().gw.sim!.reset();
    const slow = embed(gw(), key.key, small("slow [sim:latency=400]"));
    await Bun.sleep(100);
    const r = await embed(gw(), key.key, small("meanwhile"));
    expect(r.status).toBe(429);
    expect(errorCode(r.body)).toBe("concurrency_limit_exceeded");
    expect((await slow).status).toBe(200);
    expect(simEmbedCalls(gw())).toEqual({ openai: 1 });
    expect(await money(gw(), u.id)).toEqual({ balance: 9_900_000n, held: 0n });
  });
});

describe("embeddings outside demo mode, simulator off", () => {
  let ext: Simulator;
  let g: TestGateway;
  beforeAll(async () => {
    ext = await startSimulator();
    g = await startTestGateway({
      env: {
        SIMULATOR: "off",
        VIDEO_POLL_WORKERS: "0",
        STATS_ROLLUP_INTERVAL_MS: "0",
        GOOGLE_API_KEY: "google-test-credential",
        GOOGLE_BASE_URL: ext.baseUrl("google"),
        // A base URL without a credential leaves OpenAI unavailable (BYOK keys still reach it).
        OPENAI_BASE_URL: ext.baseUrl("openai"),
      },
    });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    await ext?.stop();
  });

  test("a model whose provider has no credential: 503 provider_not_configured before any hold", async () => {
    const { key, user: u } = await tenant(g, 10);
    for (const model of ["text-embedding-3-small", "text-embedding-3-large"]) {
      const r = await embed(g, key.key, { model, input: "x" });
      expect(r.status).toBe(503);
      expect(r.body.detail).toMatchObject({
        error: "provider_not_configured",
        retryable: false,
        providers: ["openai"],
      });
    }
    expect(Object.keys(ext.stats().calls)).toEqual([]);
    expect(await money(g, u.id)).toEqual({ balance: 10_000_000n, held: 0n });
    const [n] = await g.gw.deps.db.query<{ n: number }>(
      "select count(*)::int as n from usage_events where user_id = $1",
      [u.id],
    );
    expect(n!.n).toBe(0);
  });

  test("a configured provider answers and is charged; /v1/models says which embedding models are available", async () => {
    const { sdk: c, user: u } = await tenant(g, 10);
    const r = await c.embeddings.create({ model: "gemini-embedding-001", input: "configured" });
    expect(r.data[0]!.embedding).toHaveLength(256);
    expect(ext.stats().calls.google).toBeDefined();
    expect((await money(g, u.id)).balance).toBe(9_900_000n);
    const models = await g.call("GET", "/v1/models");
    const available = Object.fromEntries(
      models.body.data.filter((m: any) => m.modality === "embedding").map((m: any) => [m.id, m.available]),
    );
    expect(available).toEqual({
      "text-embedding-3-small": false,
      "text-embedding-3-large": false,
      "gemini-embedding-001": true,
      "gemini-embedding-2": true,
    });
  });

  test("a BYOK key reaches its own provider with its own credential, free", async () => {
    const u = await fastUser(g, { creditKrw: 10 });
    const b = await g.admin("POST", `/v1/admin/users/${u.id}/byok-keys`, {
      provider: "openai",
      provider_api_key: "sk-own-credential",
    });
    expect(b.status).toBe(201);
    const r = await sdk(g, b.body.key).embeddings.create({
      model: "text-embedding-3-small",
      input: "my own key",
      encoding_format: "float",
    });
    expect(r.data[0]!.embedding).toEqual(simVector("my own key"));
    expect(await money(g, u.id)).toEqual({ balance: 10_000_000n, held: 0n });
    const other = await embed(g, b.body.key, { model: "gemini-embedding-001", input: "not my provider" });
    expect(other.status).toBe(400);
    expect(errorCode(other.body)).toBe("byok_not_supported");
  });
});
