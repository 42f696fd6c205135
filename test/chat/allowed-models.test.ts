/**
 * `allowed_models` holds for every model a call reaches, not only the one it names: the
 * variant `reasoning_mode: "pro"` switches to, the providers a call falls back to, and the
 * routing policies a key may call.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { chat, money, tenant, user } from "../support/chat";
import { createPolicy } from "../routing/helpers";

setDefaultTimeout(20_000);

let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway();
  await g.admin("PATCH", "/v1/admin/settings", { "routing.orchestrators_enabled": true });
}, 60_000);
afterAll(async () => {
  await g?.stop();
});

/** Simulator calls whose path names this model (Gemini puts the model in the path). */
function callsTo(model: string): number {
  let n = 0;
  for (const routes of Object.values(g.gw.sim!.stats().calls))
    for (const [route, c] of Object.entries(routes)) if (route.includes(`/${model}:`)) n += c;
  return n;
}

async function usageEvents(userId: string): Promise<{ model: string }[]> {
  await g.gw.settlements.quiesce(userId);
  return g.gw.deps.db.query<{ model: string }>("select model from usage_events where user_id = $1", [userId]);
}

describe("reasoning_mode pro and allowed_models", () => {
  test("a key limited to gemini-2.5-flash asking for pro is 400 model_not_allowed and never reaches gemini-2.5-pro", async () => {
    const { user: u, key } = await tenant(g, 200, { allowed_models: ["gemini-2.5-flash"] });
    const before = await money(g, u.id);
    g.gw.sim!.reset();
    const json = await chat(g, key.key, {
      model: "gemini-2.5-flash",
      messages: user("pro please"),
      reasoning_mode: "pro",
    });
    expect(json.status).toBe(400);
    expect(json.body.detail.error).toBe("model_not_allowed");
    expect(json.body.detail.message).toContain("gemini-2.5-pro");
    const stream = await chat(g, key.key, {
      model: "gemini-2.5-flash",
      messages: user("pro please"),
      reasoning_mode: "pro",
      stream: true,
    });
    expect(stream.status).toBe(400);
    expect(stream.body.detail.error).toBe("model_not_allowed");
    const responses = await g.call("POST", "/v1/responses", {
      token: key.key,
      body: { model: "google/gemini-2.5-flash", input: "pro please", reasoning: { mode: "pro" } },
    });
    expect(responses.status).toBe(400);
    expect(responses.body.detail.error).toBe("model_not_allowed");
    expect(callsTo("gemini-2.5-pro")).toBe(0);
    expect(g.gw.sim!.stats().total).toBe(0);
    expect(await usageEvents(u.id)).toEqual([]);
    expect(await money(g, u.id)).toEqual(before);
    // The standard mode of the allowed model still answers, on that model.
    const standard = await chat(g, key.key, {
      model: "gemini-2.5-flash",
      messages: user("standard please"),
      reasoning_mode: "standard",
    });
    expect(standard.status).toBe(200);
    expect(standard.body.model).toBe("gemini-2.5-flash");
    expect(callsTo("gemini-2.5-pro")).toBe(0);
    expect((await usageEvents(u.id)).map((e) => e.model)).toEqual(["gemini-2.5-flash"]);
  });

  test("a key that lists the pro variant too gets it", async () => {
    const { key } = await tenant(g, 200, { allowed_models: ["google/gemini-2.5-flash", "gemini-2.5-pro"] });
    g.gw.sim!.reset();
    const r = await chat(g, key.key, {
      model: "gemini-2.5-flash",
      messages: user("pro please"),
      reasoning_mode: "pro",
    });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe("gemini-2.5-pro");
    expect(callsTo("gemini-2.5-pro")).toBe(1);
  });

  test("a pro call is not answered from the cache of the standard call (the variant is another model)", async () => {
    const { key } = await tenant(g, 200, {
      allowed_models: ["gemini-2.5-flash", "gemini-2.5-pro"],
      response_cache_mode: "exact",
    });
    const body = { model: "gemini-2.5-flash", messages: user("cache me"), temperature: 0 };
    expect((await chat(g, key.key, body)).body.model).toBe("gemini-2.5-flash");
    const pro = await chat(g, key.key, { ...body, reasoning_mode: "pro" });
    expect([pro.body.model, pro.body.cached]).toEqual(["gemini-2.5-pro", false]);
    const again = await chat(g, key.key, { ...body, reasoning_mode: "pro" });
    expect([again.body.model, again.body.cached]).toEqual(["gemini-2.5-pro", true]);
    const standard = await chat(g, key.key, body);
    expect([standard.body.model, standard.body.cached]).toEqual(["gemini-2.5-flash", true]);
  });

  test("a pro mode that only raises the effort stays on the allowed model", async () => {
    const { key } = await tenant(g, 200, { allowed_models: ["claude-haiku-4-5"] });
    const r = await chat(g, key.key, {
      model: "claude-haiku-4-5",
      messages: user("pro please"),
      reasoning_mode: "pro",
    });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe("claude-haiku-4-5");
  });
});

describe("fallbacks and policies stay inside allowed_models", () => {
  test("a failing allowed model falls back only across its own providers, never to another model", async () => {
    const { key } = await tenant(g, 200, { allowed_models: ["gemini-2.5-flash"] });
    g.gw.sim!.reset();
    const r = await chat(g, key.key, {
      model: "gemini-2.5-flash",
      messages: user("down [sim:fail=503]"),
      reasoning_mode: "standard",
    });
    expect(r.status).toBe(502);
    expect(callsTo("gemini-2.5-flash")).toBe(3);
    expect(g.gw.sim!.stats().total).toBe(3);
  });

  test("a policy or routing parent the key does not list is 400 before any upstream call, whatever it routes to", async () => {
    const { user: u, key } = await tenant(g, 200, { allowed_models: ["gemini-2.5-flash"] });
    const fallback = await createPolicy(g, u, {
      policy_type: "fallback",
      entries: [{ model: "gemini-2.5-flash" }, { model: "gemini-2.5-pro" }],
    });
    const cascade = await createPolicy(g, u, {
      policy_type: "cascade",
      entries: [{ model: "gemini-2.5-flash" }, { model: "gemini-2.5-pro" }],
    });
    const parallel = await createPolicy(g, u, {
      policy_type: "parallel",
      entries: [{ model: "gemini-2.5-flash" }, { model: "gemini-2.5-pro" }],
    });
    g.gw.sim!.reset();
    for (const model of [
      `orch/${fallback.slug}`,
      `policy/${cascade.slug}`,
      `orch/${parallel.slug}`,
      "analytics_smart",
    ]) {
      for (const reasoning_mode of ["standard", "pro"]) {
        const r = await chat(g, key.key, { model, messages: user("route me"), reasoning_mode });
        expect([model, reasoning_mode, r.status, r.body.detail?.error]).toEqual([
          model,
          reasoning_mode,
          400,
          "model_not_allowed",
        ]);
      }
    }
    expect(g.gw.sim!.stats().total).toBe(0);
  });
});
