import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startTestGateway, type TestGateway } from "../harness";

let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway({ db: "pglite" });
});
afterAll(async () => {
  await g?.stop();
});

async function setup(credit = 1000) {
  const u = await g.newUser({ creditKrw: credit });
  const k = await g.newKey(u);
  return { u, k, client: new OpenAI({ apiKey: k.key, baseURL: g.url + "/v1", maxRetries: 0 }) };
}

const balance = async (jwt: string) => (await g.call("GET", "/v1/me", { token: jwt })).body.balance_krw as number;

describe("web plugin", () => {
  test("search results reach the upstream prompt, the answer cites them, and the search is charged", async () => {
    const { u, k } = await setup();
    g.gw.sim!.reset();
    const r = await g.call("POST", "/v1/chat/completions", {
      token: k.key,
      body: {
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "best hiking trails in Seoul" }],
        plugins: [{ id: "web", max_results: 3 }],
      },
    });
    expect(r.status).toBe(200);
    const ann = r.body.choices[0].message.annotations;
    expect(ann).toHaveLength(3);
    expect(ann[0].type).toBe("url_citation");
    expect(ann[0].url_citation.url).toMatch(/^https:\/\/.+\/best-hiking-trails-in-seoul\/1$/);
    const stats = g.gw.sim!.stats();
    expect(stats.calls.brave?.["GET /res/v1/web/search"]).toBe(1);
    // Token cost (min 0.1) + 7 KRW per search.
    expect(r.body.cost.krw).toBe(7);
    expect(1000 - (await balance(u.jwt))).toBeGreaterThan(7);
  });

  test("the upstream sees the numbered sources as a system message before the user message", async () => {
    const { k } = await setup();
    // Anthropic's simulator counts prompt tokens: the injected sources make the prompt larger.
    const plain = await g.call("POST", "/v1/chat/completions", {
      token: k.key,
      body: { model: "gpt-4o-mini", messages: [{ role: "user", content: "tell me about kimchi" }] },
    });
    const withWeb = await g.call("POST", "/v1/chat/completions", {
      token: k.key,
      body: {
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "tell me about kimchi" }],
        plugins: [{ id: "web" }],
      },
    });
    expect(withWeb.body.usage.prompt_tokens).toBeGreaterThan(plain.body.usage.prompt_tokens + 50);
    expect(plain.body.choices[0].message.annotations).toBeUndefined();
  });

  test("streams carry the annotations before the finish", async () => {
    const { client } = await setup();
    const stream = await client.chat.completions.create({
      model: "claude-haiku-4-5",
      messages: [{ role: "user", content: "news about rivers" }],
      stream: true,
      plugins: [{ id: "web", max_results: 2 }],
    } as any);
    const anns: any[] = [];
    for await (const c of stream as any)
      if (c.choices?.[0]?.delta?.annotations) anns.push(...c.choices[0].delta.annotations);
    expect(anns.map((a) => a.type)).toEqual(["url_citation", "url_citation"]);
  });

  test("responses carry url_citation annotations on the output text", async () => {
    const { client } = await setup();
    const r = await client.responses.create({
      model: "gpt-4o-mini",
      input: "weather in Busan",
      plugins: [{ id: "web", max_results: 2 }],
    } as any);
    const part = (r.output[0] as any).content[0];
    expect(part.annotations).toHaveLength(2);
    expect(part.annotations[0]).toMatchObject({ type: "url_citation" });
  });

  test("a failed search fails the call before money moves; optional goes on without sources", async () => {
    const { u, k } = await setup();
    const before = await balance(u.jwt);
    const r = await g.call("POST", "/v1/chat/completions", {
      token: k.key,
      body: {
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "x [sim:fail@brave=503]" }],
        plugins: [{ id: "web" }],
      },
    });
    expect(r.status).toBe(502);
    expect(r.body.detail.error).toBe("upstream_unavailable");
    expect(await balance(u.jwt)).toBe(before);
    const o = await g.call("POST", "/v1/chat/completions", {
      token: k.key,
      body: {
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "x [sim:fail@brave=503]" }],
        plugins: [{ id: "web", optional: true }],
      },
    });
    expect(o.status).toBe(200);
    expect(o.body.choices[0].message.annotations).toBeUndefined();
    expect(o.body.cost.krw).toBe(0);
  });

  test("unknown plugin ids are 400; bad options are 422 with loc", async () => {
    const { k } = await setup();
    const r = await g.call("POST", "/v1/chat/completions", {
      token: k.key,
      body: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], plugins: [{ id: "browser" }] },
    });
    expect(r.status).toBe(400);
    expect(r.body.detail.error).toBe("unknown_plugin");
    const bad = await g.call("POST", "/v1/chat/completions", {
      token: k.key,
      body: {
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "hi" }],
        plugins: [{ id: "web", max_results: 11 }],
      },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(["body", "plugins", 0, "max_results"]);
  });
});

describe("reasoning_mode", () => {
  test("pro routes to the documented variant or raises the effort; a model without it is 400", async () => {
    const { k } = await setup(5000);
    const v = await g.call("POST", "/v1/chat/completions", {
      token: k.key,
      body: {
        model: "gemini-2.5-flash",
        reasoning_mode: "pro",
        max_tokens: 100,
        messages: [{ role: "user", content: "hi" }],
      },
    });
    expect(v.status).toBe(200);
    expect(v.body.model).toBe("gemini-2.5-pro");
    const bad = await g.call("POST", "/v1/chat/completions", {
      token: k.key,
      body: { model: "gpt-4o-mini", reasoning_mode: "pro", messages: [{ role: "user", content: "hi" }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.detail.error).toBe("reasoning_mode_unsupported");
    expect(bad.body.detail.suggestions).toContain("gemini-2.5-flash");
    const r = await g.call("POST", "/v1/responses", {
      token: k.key,
      body: { model: "gemini-2.5-flash", reasoning: { mode: "pro" }, input: "hi", max_output_tokens: 100 },
    });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe("gemini-2.5-pro");
  });
});
