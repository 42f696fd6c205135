/**
 * Money for policy calls: one hold sized for the worst case of everything a policy may run,
 * settled once with the exact sum of the sub-calls' costs (each sub-call priced like the same
 * call made directly), and released in full when the call fails.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import OpenAI from "openai";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { synthesisRequest } from "../../src/core/routing/parallel";
import { chat, client, createPolicy, money, quickUser, rawChat } from "./helpers";

let g: TestGateway;

beforeAll(async () => {
  g = await startTestGateway();
  await g.admin("PATCH", "/v1/admin/settings", { "routing.orchestrators_enabled": true });
}, 90_000);
afterAll(async () => {
  await g?.stop();
});

interface Account {
  user: TestUser;
  key: any;
  c: OpenAI;
}
async function account(creditKrw: number): Promise<Account> {
  const user = await quickUser(g, creditKrw);
  const key = await g.newKey(user);
  return { user, key, c: client(g, key) };
}

/** What a call costs the account: the balance before minus after (micro-won precision). */
async function charged(a: Account, f: () => Promise<unknown>): Promise<number> {
  const before = await money(g, a.user);
  await f();
  const after = await money(g, a.user);
  expect(after.held).toBe(0);
  return Math.round((before.balance - after.balance) * 1e6);
}

// Long enough answers that every sub-call costs more than the 0.1 KRW minimum charge, so the
// sum of direct calls (each with its own minimum) equals the policy's single settlement.
const PROMPT = "Tell me about billing [sim:tokens=400]";
const MAX = 1000;

test("cascade: the balance moves by exactly the sum of every tier that ran", async () => {
  const a = await account(500);
  const p = await createPolicy(g, a.user, {
    policy_type: "cascade",
    entries: [{ model: "gpt-4o-mini" }, { model: "claude-haiku-4-5" }, { model: "gpt-4o" }],
    config: { response_check: { must_include: ["anthropic/"] } },
  });
  const mini = await charged(a, () => chat(a.c, "gpt-4o-mini", PROMPT, { max_tokens: MAX }));
  const haiku = await charged(a, () => chat(a.c, "claude-haiku-4-5", PROMPT, { max_tokens: MAX }));
  expect(mini).toBeGreaterThan(100_000);
  let body: any;
  const policyCost = await charged(a, async () => {
    body = (await chat(a.c, `orch/${p.slug}`, PROMPT, { max_tokens: MAX })).body;
  });
  expect(body.model).toBe("claude-haiku-4-5");
  expect(policyCost).toBe(mini + haiku);
  expect(body.cost.usd).toBeCloseTo((mini + haiku) / 1e6 / 1400, 8);
  expect(body.usage.completion_tokens).toBe(800);
});

test("parallel: the balance moves by exactly the workers' costs plus the merge's", async () => {
  const a = await account(500);
  const p = await createPolicy(g, a.user, {
    policy_type: "parallel",
    entries: [{ model: "gpt-4o-mini" }, { model: "claude-haiku-4-5" }],
    config: { synthesis: "gemini-2.5-flash" },
  });
  const answers: any[] = [];
  const mini = await charged(a, async () =>
    answers.push((await chat(a.c, "gpt-4o-mini", PROMPT, { max_tokens: MAX })).body),
  );
  const haiku = await charged(a, async () =>
    answers.push((await chat(a.c, "claude-haiku-4-5", PROMPT, { max_tokens: MAX })).body),
  );
  // The merge call the policy makes, made directly: same messages, same parameters.
  const merge = synthesisRequest(
    { messages: [{ role: "user", content: PROMPT }], max_tokens: MAX },
    answers.map((b) => ({
      content: b.choices[0].message.content,
      finishReason: "stop",
      usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    })),
  );
  const synth = await charged(a, () =>
    a.c.chat.completions.create({ model: "gemini-2.5-flash", messages: merge.messages as any, max_tokens: MAX }),
  );
  let body: any;
  const policyCost = await charged(a, async () => {
    body = (await chat(a.c, `orch/${p.slug}`, PROMPT, { max_tokens: MAX })).body;
  });
  expect(body.model).toBe("gemini-2.5-flash");
  expect(policyCost).toBe(mini + haiku + synth);
});

test("single-answer policies are billed like the direct call of the model that answered", async () => {
  const a = await account(500);
  const p = await createPolicy(g, a.user, {
    policy_type: "fallback",
    entries: [{ model: "gpt-4o-mini" }, { model: "claude-haiku-4-5" }],
  });
  const direct = await charged(a, () =>
    chat(a.c, "claude-haiku-4-5", `${PROMPT} [sim:fail@openai=503]`, { max_tokens: MAX }),
  );
  const viaPolicy = await charged(a, () =>
    chat(a.c, `orch/${p.slug}`, `${PROMPT} [sim:fail@openai=503]`, { max_tokens: MAX }),
  );
  expect(viaPolicy).toBe(direct);
});

test("a failed cascade or parallel call releases the whole hold: nothing is charged", async () => {
  const a = await account(500);
  const cascade = await createPolicy(g, a.user, {
    policy_type: "cascade",
    entries: [{ model: "gpt-4o-mini" }, { model: "claude-haiku-4-5" }],
  });
  const parallel = await createPolicy(g, a.user, {
    policy_type: "parallel",
    entries: [{ model: "gpt-4o-mini" }, { model: "claude-haiku-4-5" }],
    config: { synthesis: "gpt-4o" },
  });
  for (const slug of [cascade.slug, parallel.slug]) {
    const cost = await charged(a, async () => {
      const r = await rawChat(g, a.key, `orch/${slug}`, "everything is down [sim:fail=503]");
      expect(r.status).toBe(502);
      expect(r.body.detail.error).toBe("upstream_unavailable");
    });
    expect(cost).toBe(0);
  }
});

test("the hold covers the worst case: a balance that covers one tier but not every tier is 402", async () => {
  // gpt-4o alone at max_tokens 100000 holds about 1,400 KRW; the three tiers together about 2,200 KRW.
  const a = await account(1500);
  const p = await createPolicy(g, a.user, {
    policy_type: "cascade",
    entries: [{ model: "gpt-4o-mini" }, { model: "claude-haiku-4-5" }, { model: "gpt-4o" }],
  });
  const big = { max_tokens: 100_000 };
  expect((await rawChat(g, a.key, "gpt-4o", "one model", big)).status).toBe(200);
  const r = await rawChat(g, a.key, `orch/${p.slug}`, "three tiers", big);
  expect(r.status).toBe(402);
  expect(r.body.detail.error).toBe("insufficient_credits");
  // Fewer tiers fit: max_escalations shrinks the worst case and the hold with it.
  await g.call("PATCH", `/v1/routing-policies/${p.id}`, {
    token: a.user.jwt,
    body: { config: { limits: { max_escalations: 1 } } },
  });
  expect((await rawChat(g, a.key, `orch/${p.slug}`, "two tiers", big)).status).toBe(200);
});

test("limits.max_cost_krw: a worst case above the limit is 400 before any money moves", async () => {
  const a = await account(100);
  const p = await createPolicy(g, a.user, {
    policy_type: "cascade",
    entries: [{ model: "gpt-4o" }],
    config: { limits: { max_cost_krw: 1 } },
  });
  const cost = await charged(a, async () => {
    const r = await rawChat(g, a.key, `orch/${p.slug}`, "too dear", { max_tokens: 4096 });
    expect(r.status).toBe(400);
    expect(r.body.detail.error).toBe("policy_cost_limit_exceeded");
  });
  expect(cost).toBe(0);
  // A smaller max_tokens fits under the limit.
  expect((await rawChat(g, a.key, `orch/${p.slug}`, "cheap enough", { max_tokens: 50 })).status).toBe(200);
});
