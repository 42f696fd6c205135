/**
 * Model lifecycle on every dialect, against a real gateway on a catalog with dates (see
 * lifecycle-gateway.ts, day pinned to 2026-12-01):
 * - a deprecated model answers 200 with an `x-gateway-warnings` entry and the `Deprecation`,
 *   `Sunset` and successor `Link` headers (JSON and streams, chat, Responses, Messages, embeddings);
 * - a retired model on a real upstream is 400 `model_retired` naming its successor, in each
 *   dialect's envelope, before any hold: no upstream call, nothing in the books (SQL);
 * - a retired model the simulator serves keeps answering, with the warning (the demo exception);
 * - aliases call their model everywhere, and the answer names the catalog id.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { TestGateway } from "../harness";
import { corsPolicy } from "../../src/http/cors";
import { booksOf, lifecycleGateway, TODAY } from "./lifecycle-gateway";

setDefaultTimeout(30_000);

const life = lifecycleGateway();

async function tenant(g: TestGateway, creditKrw = 1000) {
  const user = await g.newUser({ creditKrw });
  const key = await g.newKey(user);
  return { user, key: key.key as string };
}

function post(g: TestGateway, path: string, key: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(g.url + path, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

const ask = (content: string) => [{ role: "user", content }];

/** The body of each dialect's call for `model`. */
const CALLS: Record<string, (model: string, stream?: boolean) => [string, object]> = {
  chat: (model, stream = false) => ["/v1/chat/completions", { model, stream, messages: ask("hello") }],
  responses: (model, stream = false) => ["/v1/responses", { model, stream, input: "hello" }],
  messages: (model, stream = false) => ["/v1/messages", { model, stream, max_tokens: 50, messages: ask("hello") }],
};

const deprecation = (day: string) => `@${Date.parse(`${day}T00:00:00Z`) / 1000}`;

function expectDeprecated(
  res: Response,
  model: string,
  deprecatedAt: string,
  retiresAt: string | null,
  successor: string | null,
) {
  const entry = [
    `deprecated-model=${model}`,
    retiresAt && `retires=${retiresAt}`,
    successor && `successor=${successor}`,
  ]
    .filter(Boolean)
    .join("; ");
  expect(res.headers.get("x-gateway-warnings")?.split(", ")[0]).toBe(entry);
  expect(res.headers.get("deprecation")).toBe(deprecation(deprecatedAt));
  expect(res.headers.get("sunset")).toBe(retiresAt ? new Date(`${retiresAt}T00:00:00Z`).toUTCString() : null);
  expect(res.headers.get("link")).toBe(successor ? `</v1/models/${successor}>; rel="successor-version"` : null);
}

describe("a deprecated model answers with the warning headers", () => {
  for (const [dialect, call] of Object.entries(CALLS)) {
    test(`${dialect}: JSON and stream`, async () => {
      const g = life.g();
      const { key } = await tenant(g);
      for (const stream of [false, true]) {
        const [path, body] = call("gemini-2.5-flash", stream);
        const res = await post(g, path, key, body);
        expect(res.status).toBe(200);
        expectDeprecated(res, "gemini-2.5-flash", "2026-11-01", "2027-03-01", "gemini-2.5-pro");
        const text = await res.text();
        if (!stream) expect(JSON.parse(text).model).toBe("gemini-2.5-flash");
        else expect(text).toContain("gemini-2.5-flash");
      }
    });
  }

  test("embeddings", async () => {
    const g = life.g();
    const { key } = await tenant(g);
    const res = await post(g, "/v1/embeddings", key, { model: "gemini-embedding-001", input: "hello" });
    expect(res.status).toBe(200);
    expectDeprecated(res, "gemini-embedding-001", "2026-11-20", null, "text-embedding-3-small");
    expect(((await res.json()) as any).model).toBe("gemini-embedding-001");
  });

  test("a cached answer of a deprecated model carries them too", async () => {
    const g = life.g();
    const user = await g.newUser({ creditKrw: 100 });
    const key = await g.newKey(user, { response_cache_mode: "exact" });
    const body = { model: "gemini-2.5-flash", messages: ask("cache this deprecated answer") };
    const first = await post(g, "/v1/chat/completions", key.key, body);
    expect(((await first.json()) as any).cached).toBe(false);
    const stored = async () =>
      (
        await g.gw.deps.db.query<{ n: string }>("select count(*)::text as n from response_cache where key_id = $1", [
          key.id,
        ])
      )[0]!.n !== "0";
    for (let i = 0; i < 100 && !(await stored()); i++) await Bun.sleep(20);
    const second = await post(g, "/v1/chat/completions", key.key, body);
    expect(((await second.json()) as any).cached).toBe(true);
    expectDeprecated(second, "gemini-2.5-flash", "2026-11-01", "2027-03-01", "gemini-2.5-pro");
  });

  test("an active model, or one deprecated only from a later day, has none of them", async () => {
    const g = life.g();
    const { key } = await tenant(g);
    for (const model of ["gpt-4o-mini", "claude-haiku-4-5"]) {
      const res = await post(g, "/v1/chat/completions", key, { model, messages: ask("hi") });
      expect(res.status).toBe(200);
      for (const h of ["x-gateway-warnings", "deprecation", "sunset", "link"]) expect(res.headers.get(h)).toBeNull();
    }
    const e = await post(g, "/v1/embeddings", key, { model: "text-embedding-3-small", input: "x" });
    expect([e.status, e.headers.get("deprecation")]).toEqual([200, null]);
  });

  test("a setting warning of the same call follows the deprecation entry", async () => {
    const g = life.g();
    const { key } = await tenant(g);
    const res = await post(g, "/v1/chat/completions", key, {
      model: "gemini-2.5-flash",
      messages: ask("hi"),
      logit_bias: { "50256": -100 },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-gateway-warnings")).toBe(
      "deprecated-model=gemini-2.5-flash; retires=2027-03-01; successor=gemini-2.5-pro, unsupported-setting=logit_bias; provider=google",
    );
  });

  test("the headers are readable by a browser client (CORS)", () => {
    const headers: Record<string, string | number> = {};
    corsPolicy("*")!.apply(
      new Request("http://gw/v1/chat/completions", { headers: { origin: "https://a.example" } }),
      headers,
    );
    const exposed = String(headers["access-control-expose-headers"]).split(", ");
    for (const h of ["deprecation", "sunset", "link", "x-gateway-warnings"]) expect(exposed).toContain(h);
  });
});

describe("a retired model is refused before any hold, naming its successor", () => {
  test("chat, Responses, Messages, count_tokens, embeddings: 400 model_retired, nothing moves", async () => {
    const g = life.g();
    const { user, key } = await tenant(g, 100);
    const before = life.proxy().bodies.length;
    const refusals: [string, object][] = [
      ...Object.values(CALLS).flatMap((call) => [call("gpt-4o"), call("gpt-4o", true)]),
      ["/v1/messages/count_tokens", { model: "gpt-4o", messages: ask("count") }],
      ["/v1/embeddings", { model: "text-embedding-3-large", input: "x" }],
    ];
    for (const [path, body] of refusals) {
      const res = await post(g, path, key, body);
      const out: any = await res.json();
      expect([path, res.status]).toEqual([path, 400]);
      const successor = path === "/v1/embeddings" ? "text-embedding-3-small" : "gpt-4o-mini";
      const retired = path === "/v1/embeddings" ? "2026-11-15" : "2026-11-30";
      if (path.startsWith("/v1/messages")) {
        expect(out).toMatchObject({ type: "error", error: { type: "not_found_error", code: "model_retired" } });
        expect(out.error.message).toContain(`'${successor}'`);
      } else {
        expect(out.detail.error).toBe("model_retired");
        expect(out.detail.suggestions).toEqual([successor]);
        expect(out.detail.message).toContain(retired);
        expect(out.detail.message).toContain(`'${successor}'`);
      }
      expect(res.headers.get("content-type")).toContain("application/json");
    }
    // Not one request reached the (real, not simulated) OpenAI upstream; no hold, no charge, no usage event.
    expect(life.proxy().bodies.length).toBe(before);
    const b = await booksOf(g, user.id);
    expect(b.holds).toEqual([]);
    expect(b.charges).toEqual([]);
    expect(b.events).toEqual([]);
    expect([b.balance, b.held]).toEqual([100_000_000n, 0n]);
  });

  test("the message is English when asked, Korean by default; the SDKs raise it", async () => {
    const g = life.g();
    const { key } = await tenant(g);
    const en: any = await (
      await post(g, "/v1/chat/completions", key, CALLS.chat!("gpt-4o")[1], { "accept-language": "en" })
    ).json();
    expect(en.detail.message).toBe("The model 'gpt-4o' was retired on 2026-11-30. Use 'gpt-4o-mini' instead.");
    const ko: any = await (await post(g, "/v1/chat/completions", key, CALLS.chat!("gpt-4o")[1])).json();
    expect(ko.detail.message).toBe(
      "'gpt-4o' 모델은 2026-11-30에 지원이 종료되었습니다. 대신 'gpt-4o-mini' 모델을 사용하세요.",
    );
    const openai = new OpenAI({ apiKey: key, baseURL: g.url + "/v1", maxRetries: 0 });
    const e1: any = await openai.chat.completions
      .create({ model: "gpt-4o", messages: ask("x") as any })
      .catch((e) => e);
    expect([e1.status, e1.code]).toEqual([400, "model_retired"]);
    const e2: any = await openai.responses.create({ model: "openai/gpt-4o", input: "x" }).catch((e) => e);
    expect([e2.status, e2.code]).toEqual([400, "model_retired"]);
    const anthropic = new Anthropic({ apiKey: key, baseURL: g.url, maxRetries: 0 });
    const e3: any = await anthropic.messages
      .create({ model: "gpt-4o", max_tokens: 10, messages: ask("x") as any })
      .catch((e) => e);
    expect(e3).toBeInstanceOf(Anthropic.BadRequestError);
    expect(e3.error.error.code).toBe("model_retired");
  });

  test("its aliases, vendor form and provider pin are refused alike", async () => {
    const g = life.g();
    const { key } = await tenant(g);
    for (const model of [
      "gpt-4o-2024-08-06",
      "openai/gpt-4o-2024-08-06",
      "gpt-4o@openai",
      "GPT-4o-2024-08-06@openai",
    ]) {
      const res = await post(g, "/v1/chat/completions", key, { model, messages: ask("x") });
      const out: any = await res.json();
      expect([model, res.status, out.detail.error]).toEqual([model, 400, "model_retired"]);
    }
  });

  test("a routing parent skips its retired candidate", async () => {
    const g = life.g();
    const { key } = await tenant(g);
    // `perfect` is claude-sonnet-4-5 (retired, simulated: kept), gemini-2.5-pro, gpt-4o (retired: dropped).
    const before = life.proxy().bodies.length;
    const res = await post(g, "/v1/chat/completions", key, { model: "perfect", messages: ask("route [sim:fail=503]") });
    expect(res.status).toBe(502);
    expect(life.proxy().bodies.length).toBe(before);
  });
});

describe("a retired model the simulator serves keeps answering (the demo exception)", () => {
  test("chat, Responses and Messages, JSON and streams: 200 with the deprecation headers, charged once", async () => {
    const g = life.g();
    const { user, key } = await tenant(g);
    let answered = 0;
    for (const call of Object.values(CALLS)) {
      for (const stream of [false, true]) {
        const [path, body] = call("claude-sonnet-4-5", stream);
        const res = await post(g, path, key, body);
        expect([path, stream, res.status]).toEqual([path, stream, 200]);
        expectDeprecated(res, "claude-sonnet-4-5", "2026-09-29", "2026-11-30", "claude-haiku-4-5");
        await res.text();
        answered++;
      }
    }
    const b = await booksOf(g, user.id);
    expect(b.events).toHaveLength(answered);
    expect(b.charges).toHaveLength(answered);
    expect(b.events.every((e: any) => e.model === "claude-sonnet-4-5" && e.status === 200)).toBe(true);
    expect(b.held).toBe(0n);
  });

  test("a BYOK key's own provider is no simulator: refused there", async () => {
    const g = life.g();
    const user = await g.newUser({ creditKrw: 10 });
    const byok = await g.admin("POST", `/v1/admin/users/${user.id}/byok-keys`, {
      provider: "anthropic",
      provider_api_key: "sk-ant-users-own",
    });
    expect(byok.status).toBe(201);
    const res = await post(g, "/v1/messages", byok.body.key, CALLS.messages!("claude-sonnet-4-5")[1]);
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.code).toBe("model_retired");
  });
});

describe("video models follow the same rule", () => {
  test("a retired video model is refused before any hold; one the simulator serves is accepted", async () => {
    const g = life.g();
    const { user, key } = await tenant(g, 1000);
    const refused = await post(g, "/v1/video/generations", key, {
      model: "kling-v2-6",
      duration_seconds: 5,
      prompt: "x",
    });
    const out: any = await refused.json();
    expect([refused.status, out.detail.error, out.detail.suggestions]).toEqual([400, "model_retired", ["kling-v3"]]);
    let b = await booksOf(g, user.id);
    expect([b.holds, b.charges, b.held]).toEqual([[], [], 0n]);
    const served = await post(g, "/v1/video/generations", key, {
      model: "seedance-1-0-pro",
      duration_seconds: 5,
      prompt: "x",
    });
    expect(served.status).toBe(202);
    b = await booksOf(g, user.id);
    expect(b.holds).toHaveLength(1);
  });
});

describe("aliases call their catalog model on every dialect", () => {
  test("dated snapshots, -latest, vendor forms and pins; the answer names the catalog id", async () => {
    const g = life.g();
    const { key } = await tenant(g);
    const cases: [string, string][] = [
      ["claude-haiku-4-5-20251001", "claude-haiku-4-5"],
      ["anthropic/claude-haiku-4-5-latest", "claude-haiku-4-5"],
      ["claude-haiku-4-5-20251001@anthropic", "claude-haiku-4-5"],
      ["gpt-4o-mini-2024-07-18", "gpt-4o-mini"],
      ["gemini-2.5-flash-latest", "gemini-2.5-flash"],
    ];
    for (const [alias, id] of cases) {
      for (const [dialect, call] of Object.entries(CALLS)) {
        const [path, body] = call(alias);
        const res = await post(g, path, key, body);
        const out: any = await res.json();
        expect([alias, dialect, res.status]).toEqual([alias, dialect, 200]);
        // A relayed Anthropic answer keeps the upstream's own body (and model field).
        if (!(dialect === "messages" && id.startsWith("claude")))
          expect([alias, dialect, out.model]).toEqual([alias, dialect, id]);
      }
    }
    const count = await post(g, "/v1/messages/count_tokens", key, {
      model: "claude-haiku-4-5-latest",
      messages: ask("count me"),
    });
    expect(count.status).toBe(200);
    expect(((await count.json()) as any).input_tokens).toBeGreaterThan(0);
  });

  test("an alias of a deprecated model warns about the catalog model", async () => {
    const g = life.g();
    const { key } = await tenant(g);
    const res = await post(g, "/v1/chat/completions", key, {
      model: "google/gemini-2.5-flash-latest",
      messages: ask("x"),
    });
    expect(res.status).toBe(200);
    expectDeprecated(res, "gemini-2.5-flash", "2026-11-01", "2027-03-01", "gemini-2.5-pro");
  });

  test("a pin to a provider that does not serve the alias's model is 400 model_not_found", async () => {
    const g = life.g();
    const { key } = await tenant(g);
    const res = await post(g, "/v1/chat/completions", key, {
      model: "claude-haiku-4-5-latest@openai",
      messages: ask("x"),
    });
    const out: any = await res.json();
    expect([res.status, out.detail.error, out.detail.suggestions]).toEqual([
      400,
      "model_not_found",
      ["claude-haiku-4-5@anthropic"],
    ]);
  });
});

describe("GET /v1/models shows the lifecycle", () => {
  test("dates, successor, aliases and today's stage; retired models stay listed", async () => {
    const g = life.g();
    const list: any = (await g.call("GET", "/v1/models")).body;
    const byId = new Map<string, any>(list.data.map((m: any) => [m.id, m]));
    const pick = (m: any) => [m.lifecycle, m.deprecated_at, m.retires_at, m.successor, m.aliases, m.available];
    expect(pick(byId.get("gpt-4o"))).toEqual([
      "retired",
      "2026-06-01",
      "2026-11-30",
      "gpt-4o-mini",
      ["gpt-4o-2024-08-06"],
      false,
    ]);
    expect(pick(byId.get("claude-sonnet-4-5"))).toEqual([
      "retired",
      "2026-09-29",
      "2026-11-30",
      "claude-haiku-4-5",
      ["claude-sonnet-4-5-20250929"],
      true, // the simulator serves it
    ]);
    expect(pick(byId.get("gemini-2.5-flash"))).toEqual([
      "deprecated",
      "2026-11-01",
      "2027-03-01",
      "gemini-2.5-pro",
      ["gemini-2.5-flash-latest"],
      true,
    ]);
    expect(pick(byId.get("gpt-4o-mini"))).toEqual([
      "active",
      "2027-01-01",
      "2027-06-01",
      null,
      ["gpt-4o-mini-2024-07-18"],
      true,
    ]);
    expect(pick(byId.get("deepseek-v3"))).toEqual(["active", null, null, null, [], true]);
    expect(pick(byId.get("perfect"))).toEqual(["active", null, null, null, [], true]);
  });

  test("GET /v1/models/{id} finds a model by alias, vendor alias and id", async () => {
    const g = life.g();
    for (const id of ["gpt-4o-2024-08-06", "openai%2Fgpt-4o-2024-08-06", "gpt-4o"]) {
      const r = await g.call("GET", `/v1/models/${id}`);
      expect([id, r.status, r.body.id, r.body.lifecycle, r.body.successor]).toEqual([
        id,
        200,
        "gpt-4o",
        "retired",
        "gpt-4o-mini",
      ]);
    }
  });

  test("the day is the gateway's: CATALOG_TODAY", async () => {
    expect(life.g().gw.deps.config.CATALOG_TODAY).toBe(TODAY);
  });
});
