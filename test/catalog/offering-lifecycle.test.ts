/**
 * A model outlives one of its providers (docs/catalog.md, "Retired offerings"), against real
 * gateways and a simulator over real sockets, on the shipped data (deepseek-v3@deepseek,
 * DeepSeek's own `deepseek-chat`, retired on 2026-07-24; Together still serves DeepSeek V3):
 * - production (simulator off; DeepSeek, Together and Groq configured with a base URL pointing
 *   at an external simulator): `deepseek-v3` goes to Together only, `deepseek-v3@deepseek` is
 *   400 `model_retired` naming its successor before any hold (no upstream call, nothing in the
 *   books, SQL), a deprecated offering answers with the deprecation headers, and
 *   `GET /v1/models` shows each provider entry's stage and dates;
 * - demo mode (the simulator serves DeepSeek): `deepseek-v3@deepseek` still answers, with the
 *   headers, and is charged once.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { formatHashFile } from "../../src/core/catalog/verify";
import { startSimulator, type Simulator } from "../../src/sim";
import { startTestGateway, type TestGateway } from "../harness";
import { booksOf } from "./lifecycle-gateway";
import { mutated, offering } from "./helpers";

setDefaultTimeout(60_000);

const TODAY = "2026-12-01";
const dir = mkdtempSync(join(tmpdir(), "offering-life-"));
let ext: Simulator;
let catalogPath = "";

beforeAll(async () => {
  ext = await startSimulator();
  // The shipped catalog (deepseek-v3@deepseek as shipped), plus a deprecated Groq offering.
  const text = mutated((d) => {
    Object.assign(offering(d, "llama-3.3-70b", "groq"), {
      deprecated_at: "2026-11-01",
      retires_at: "2027-01-15",
      successor: "gpt-oss-120b@groq",
    });
    Object.assign(offering(d, "llama-3.3-70b", "together"), { deprecated_at: null, retires_at: null, successor: null });
  });
  catalogPath = join(dir, "catalog.json");
  writeFileSync(catalogPath, text);
  writeFileSync(join(dir, "catalog.sha256"), formatHashFile(text));
});
afterAll(async () => {
  await ext?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Calls the external simulator received per provider (every path). */
function extCalls(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [p, routes] of Object.entries(ext.stats().calls))
    out[p] = Object.values(routes).reduce((a, b) => a + b, 0);
  return out;
}

function gatewaySuite(env: () => Record<string, string>) {
  let g: TestGateway | undefined;
  beforeAll(async () => {
    g = await startTestGateway({ env: { CATALOG_PATH: catalogPath, CATALOG_TODAY: TODAY, ...env() } });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });
  return () => g!;
}

async function tenant(g: TestGateway, creditKrw = 1000) {
  const user = await g.newUser({ creditKrw });
  // Together trains on data: its calls need the cross-border training consent.
  expect((await g.admin("PATCH", `/v1/admin/users/${user.id}`, { xborder_training_consent: true })).status).toBe(200);
  const key = await g.newKey(user);
  return { user, key: key.key as string };
}

function chat(g: TestGateway, key: string, model: string, extra: object = {}, headers: Record<string, string> = {}) {
  return fetch(g.url + "/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hello" }], ...extra }),
  });
}

describe("production: DeepSeek's own deepseek-chat is retired, Together still serves DeepSeek V3", () => {
  const g = gatewaySuite(() => ({
    SIMULATOR: "off",
    DEMO_MODE: "false",
    DEEPSEEK_API_KEY: "sk-deepseek-test",
    DEEPSEEK_BASE_URL: ext.baseUrl("deepseek"),
    TOGETHER_API_KEY: "tg-test",
    TOGETHER_BASE_URL: ext.baseUrl("together"),
    GROQ_API_KEY: "gsk-test",
    GROQ_BASE_URL: ext.baseUrl("groq"),
  }));

  test("deepseek-v3 is routed to Together only (JSON and stream), charged, without a warning", async () => {
    const { user, key } = await tenant(g());
    const before = extCalls();
    const res = await chat(g(), key, "deepseek-v3");
    const out: any = await res.json();
    expect([res.status, out.provider, out.model]).toEqual([200, "together", "deepseek-v3"]);
    expect(res.headers.get("x-gateway-warnings")).toBeNull();
    const s = await chat(g(), key, "deepseek-v3", { stream: true });
    expect(s.status).toBe(200);
    expect(await s.text()).toContain("[DONE]");
    const after = extCalls();
    expect((after.together ?? 0) - (before.together ?? 0)).toBe(2);
    expect(after.deepseek ?? 0).toBe(before.deepseek ?? 0);
    const b = await booksOf(g(), user.id);
    expect([b.events.length, b.charges.length, b.held]).toEqual([2, 2, 0n]);
    expect(b.events.map((e: any) => e.model)).toEqual(["deepseek-v3", "deepseek-v3"]);
  });

  test("deepseek-v3@deepseek is 400 model_retired naming its successor, before any hold", async () => {
    const { user, key } = await tenant(g(), 100);
    const before = extCalls();
    for (const stream of [false, true]) {
      const res = await chat(g(), key, "deepseek-v3@deepseek", { stream }, { "accept-language": "en" });
      const out: any = await res.json();
      expect(res.status).toBe(400);
      expect(out.detail).toMatchObject({
        error: "model_retired",
        message:
          "The model 'deepseek-v3@deepseek' was retired on 2026-07-24. Use 'deepseek-v4-flash@deepseek' instead.",
        suggestions: ["deepseek-v4-flash@deepseek"],
      });
    }
    // The vendor-prefixed pin and the Messages dialect alike.
    const msg = await fetch(g().url + "/v1/messages", {
      method: "POST",
      headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({
        model: "deepseek/deepseek-v3@deepseek",
        max_tokens: 20,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
    const m: any = await msg.json();
    expect([msg.status, m.error.type, m.error.code]).toEqual([400, "not_found_error", "model_retired"]);
    // No upstream call, no hold, no charge, no usage event.
    expect(extCalls().deepseek ?? 0).toBe(before.deepseek ?? 0);
    const b = await booksOf(g(), user.id);
    expect([b.holds, b.charges, b.events, b.balance, b.held]).toEqual([[], [], [], 100_000_000n, 0n]);
    const holds = await g().gw.deps.db.query<{ n: string }>(
      "select count(*)::text as n from holds where user_id = $1",
      [user.id],
    );
    expect(holds[0]!.n).toBe("0");
  });

  test("DeepSeek's current model still answers through DeepSeek", async () => {
    const { key } = await tenant(g());
    const res = await chat(g(), key, "deepseek-v4-flash@deepseek");
    const out: any = await res.json();
    expect([res.status, out.provider]).toEqual([200, "deepseek"]);
  });

  test("a deprecated offering answers with the deprecation headers naming model@provider", async () => {
    const { key } = await tenant(g());
    const res = await chat(g(), key, "llama-3.3-70b@groq");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-gateway-warnings")).toBe(
      "deprecated-model=llama-3.3-70b@groq; retires=2027-01-15; successor=gpt-oss-120b@groq",
    );
    expect(res.headers.get("deprecation")).toBe(`@${Date.parse("2026-11-01T00:00:00Z") / 1000}`);
    expect(res.headers.get("sunset")).toBe("Fri, 15 Jan 2027 00:00:00 GMT");
    expect(res.headers.get("link")).toBe('</v1/models/gpt-oss-120b>; rel="successor-version"');
    // Its other provider is not deprecated: an answer from Together carries nothing.
    const t = await chat(g(), key, "llama-3.3-70b@together");
    expect([t.status, t.headers.get("x-gateway-warnings"), t.headers.get("deprecation")]).toEqual([200, null, null]);
  });

  test("a model whose every offering is retired is refused as a model (qwen3-32b, Groq only)", async () => {
    const { user, key } = await tenant(g(), 100);
    const before = extCalls();
    const res = await chat(g(), key, "qwen3-32b", {}, { "accept-language": "en" });
    const out: any = await res.json();
    expect(res.status).toBe(400);
    expect(out.detail).toMatchObject({
      error: "model_retired",
      message: "The model 'qwen3-32b' was retired on 2026-07-17. Use 'gpt-oss-120b@groq' instead.",
      suggestions: ["gpt-oss-120b@groq"],
    });
    expect(extCalls().groq ?? 0).toBe(before.groq ?? 0);
    const b = await booksOf(g(), user.id);
    expect([b.holds, b.charges, b.events]).toEqual([[], [], []]);
    const listed: any = await (await fetch(g().url + "/v1/models/qwen3-32b")).json();
    expect([listed.lifecycle, listed.retires_at, listed.successor, listed.available]).toEqual([
      "retired",
      "2026-07-17",
      "gpt-oss-120b@groq",
      false,
    ]);
  });

  test("GET /v1/models shows each provider entry's stage and dates", async () => {
    const res = await fetch(g().url + "/v1/models/deepseek-v3");
    const m: any = await res.json();
    expect([m.lifecycle, m.retires_at, m.available]).toEqual(["active", null, true]);
    const [deepseek, together] = m.providers;
    expect(deepseek).toMatchObject({
      id: "deepseek",
      available: false,
      lifecycle: "retired",
      deprecated_at: "2026-04-24",
      retires_at: "2026-07-24",
      successor: "deepseek-v4-flash@deepseek",
    });
    expect(together).toMatchObject({ id: "together", available: true, lifecycle: "active", retires_at: null });
    const llama: any = await (await fetch(g().url + "/v1/models/llama-3.3-70b")).json();
    expect(llama.providers.find((p: any) => p.id === "groq")).toMatchObject({
      available: true,
      lifecycle: "deprecated",
      retires_at: "2027-01-15",
    });
  });
});

describe("demo mode: the simulator keeps answering deepseek-v3@deepseek", () => {
  const g = gatewaySuite(() => ({ DEMO_MODE: "true" }));

  test("200 with the deprecation headers, charged once", async () => {
    const { user, key } = await tenant(g(), 100);
    const res = await chat(g(), key, "deepseek-v3@deepseek");
    const out: any = await res.json();
    expect([res.status, out.provider]).toEqual([200, "deepseek"]);
    expect(res.headers.get("x-gateway-warnings")).toBe(
      "deprecated-model=deepseek-v3@deepseek; retires=2026-07-24; successor=deepseek-v4-flash@deepseek",
    );
    expect(res.headers.get("sunset")).toBe("Fri, 24 Jul 2026 00:00:00 GMT");
    const b = await booksOf(g(), user.id);
    expect([b.events.length, b.charges.length, b.held]).toEqual([1, 1, 0n]);
    const listed: any = await (await fetch(g().url + "/v1/models/deepseek-v3")).json();
    expect(listed.providers[0]).toMatchObject({ id: "deepseek", available: true, lifecycle: "retired" });
  });
});
