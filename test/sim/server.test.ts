import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { registerSimRoutes, simProviders, startSimulator, type Simulator } from "../../src/sim/index.ts";
import { obeyDirectives, parseDirectives, readJsonBody } from "../../src/sim/index.ts";
import { ANTHROPIC_AUTH, GEMINI_AUTH, OPENAI_AUTH, postJson } from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.stop());

describe("simulator handle", () => {
  test("url and per-provider base URLs", () => {
    expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sim.baseUrl("anthropic")).toBe(`${sim.url}/sim/anthropic`);
    expect(simProviders()).toEqual(
      expect.arrayContaining(["openai", "deepseek", "together", "groq", "anthropic", "google"]),
    );
  });

  test("an explicit port is honoured", async () => {
    const probe = Bun.serve({ port: 0, fetch: () => new Response() });
    const port = probe.port!;
    await probe.stop(true);
    const other = await startSimulator({ port });
    expect(other.url).toBe(`http://127.0.0.1:${port}`);
    await other.stop();
  });
});

describe("stats and reset", () => {
  test("counts calls per provider and path, over HTTP and in-process", async () => {
    sim.reset();
    const chat = { model: "m", messages: [{ role: "user", content: "hi" }] };
    await postJson(`${sim.baseUrl("openai")}/v1/chat/completions`, chat, OPENAI_AUTH);
    await postJson(`${sim.baseUrl("openai")}/v1/chat/completions`, chat, OPENAI_AUTH);
    await postJson(
      `${sim.baseUrl("openai")}/v1/chat/completions`,
      { ...chat, messages: [{ role: "user", content: "[sim:fail=500]" }] },
      OPENAI_AUTH,
    );
    await postJson(`${sim.baseUrl("anthropic")}/v1/messages`, { ...chat, max_tokens: 5 }, ANTHROPIC_AUTH);
    await postJson(
      `${sim.baseUrl("google")}/v1beta/models/g1:generateContent`,
      { contents: [{ parts: [{ text: "x" }] }] },
      GEMINI_AUTH,
    );
    await postJson(`${sim.baseUrl("openai")}/v1/embeddings`, { model: "e", input: "x" }); // 401: still a call received

    const expected = {
      total: 6,
      calls: {
        openai: { "POST /v1/chat/completions": 3, "POST /v1/embeddings": 1 },
        anthropic: { "POST /v1/messages": 1 },
        google: { "POST /v1beta/models/g1:generateContent": 1 },
      },
    };
    expect(sim.stats()).toEqual(expected);
    const res = await fetch(`${sim.url}/sim/stats`);
    expect(await res.json()).toEqual(expected);
    // Reading the stats is not a call.
    expect(sim.stats().total).toBe(6);

    const reset = await fetch(`${sim.url}/sim/reset`, { method: "POST" });
    expect(reset.status).toBe(200);
    expect(sim.stats()).toEqual({ total: 0, calls: {} });
  });

  test("unknown providers and paths outside /sim are plain JSON 404s", async () => {
    const unknown = await postJson(`${sim.baseUrl("nobody")}/v1/chat/completions`, {});
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.message).toContain("nobody");
    expect((await fetch(`${sim.url}/elsewhere`)).status).toBe(404);
  });
});

describe("registerSimRoutes", () => {
  test("a new protocol gets its params, auth, error envelope, directives and per-instance state", async () => {
    const error = (status: number, message?: string) =>
      Response.json({ code: status, message: message ?? "failed" }, { status });
    registerSimRoutes("acme-video", {
      protocol: "acme-video",
      authenticate: (req) => (req.headers.get("x-acme-key") ? undefined : error(401, "no key")),
      error,
      routes: {
        "POST /v1/tasks": async (ctx) => {
          const { raw, body } = await readJsonBody<{ prompt: string }>(ctx);
          const early = await obeyDirectives(ctx, parseDirectives(body.prompt), raw);
          if (early) return early;
          const tasks = ctx.sim.scratch("acme-tasks", () => new Map<string, string>());
          const id = `task-${tasks.size + 1}`;
          tasks.set(id, body.prompt);
          return Response.json({ id });
        },
        "GET /v1/tasks/{id}": (ctx) => {
          const prompt = ctx.sim.scratch("acme-tasks", () => new Map<string, string>()).get(ctx.params.id!);
          return prompt ? Response.json({ id: ctx.params.id, prompt }) : ctx.error(404);
        },
      },
    });
    const base = sim.baseUrl("acme-video");
    const key = { "x-acme-key": "k" };
    expect((await postJson(`${base}/v1/tasks`, { prompt: "a cat" })).status).toBe(401);
    const created = await (await postJson(`${base}/v1/tasks`, { prompt: "a cat" }, key)).json();
    expect(created).toEqual({ id: "task-1" });
    const got = await (await fetch(`${base}/v1/tasks/task-1`, { headers: key })).json();
    expect(got).toEqual({ id: "task-1", prompt: "a cat" });
    const limited = await postJson(`${base}/v1/tasks`, { prompt: "[sim:fail=429]" }, key);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    expect((await fetch(`${base}/v1/nope`, { headers: key })).status).toBe(404);

    sim.reset();
    expect((await fetch(`${base}/v1/tasks/task-1`, { headers: key })).status).toBe(404);
  });
});
