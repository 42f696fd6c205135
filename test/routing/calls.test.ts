/**
 * Calling policies (`orch/<slug>`) through the real gateway, the official OpenAI SDK and the
 * upstream simulator: each of the six engines, the decision header, streaming, the operator
 * gates, inactive policies and organization policies. Billing has its own file.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { loadBenchmarks } from "../../src/core/routing/benchmark-table";
import { rankByBenchmark } from "../../src/core/routing/benchmarks";
import { entryKeys, rankWeighted } from "../../src/core/routing/weighted";
import { chat, client, createPolicy, delta, money, quickUser, rawChat, simCalls } from "./helpers";

let g: TestGateway;
let user: TestUser;
let key: any;
let c: OpenAI;
let initialSettings: Record<string, unknown>;

beforeAll(async () => {
  g = await startTestGateway();
  user = await quickUser(g, 5000);
  key = await g.newKey(user);
  c = client(g, key);
  initialSettings = (await g.admin("GET", "/v1/admin/settings")).body;
  await g.admin("PATCH", "/v1/admin/settings", { "routing.orchestrators_enabled": true });
}, 90_000);
afterAll(async () => {
  await g?.stop();
});

const policy = (body: Record<string, unknown>) => createPolicy(g, user, body);
const decisionOf = (h: Headers) => h.get("x-policy-decision") ?? "";

describe("gates and policy state", () => {
  test("defaults: policies on, orchestrators off; a cascade call is 400 policy_gate_disabled until turned on", async () => {
    expect(initialSettings).toMatchObject({ "routing.policies_enabled": true, "routing.orchestrators_enabled": false });
    await g.admin("PATCH", "/v1/admin/settings", { "routing.orchestrators_enabled": false });
    const p = await policy({ policy_type: "cascade", entries: [{ model: "gpt-4o-mini" }] });
    const off = await rawChat(g, key, `orch/${p.slug}`, "hi");
    expect(off.status).toBe(400);
    expect(off.body.detail.error).toBe("policy_gate_disabled");
    const par = await policy({
      policy_type: "parallel",
      entries: [{ model: "gpt-4o-mini" }, { model: "gemini-2.5-flash" }],
    });
    expect((await rawChat(g, key, `orch/${par.slug}`, "hi")).body.detail.error).toBe("policy_gate_disabled");
    expect((await g.admin("PATCH", "/v1/admin/settings", { "routing.orchestrators_enabled": true })).status).toBe(200);
    expect((await rawChat(g, key, `orch/${p.slug}`, "hi")).status).toBe(200);
    expect((await rawChat(g, key, `orch/${par.slug}`, "hi")).status).toBe(200);
  });

  test("routing.policies_enabled off: the four original types are 400, orchestrators and CRUD still work", async () => {
    const f = await policy({ policy_type: "fallback", entries: [{ model: "gpt-4o-mini" }] });
    const cas = await policy({ policy_type: "cascade", entries: [{ model: "gpt-4o-mini" }] });
    await g.admin("PATCH", "/v1/admin/settings", { "routing.policies_enabled": false });
    try {
      for (const type of ["fallback", "weighted", "latency", "auto"]) {
        const p = type === "fallback" ? f : await policy({ policy_type: type, entries: [{ model: "gpt-4o-mini" }] });
        const r = await rawChat(g, key, `orch/${p.slug}`, "hi");
        expect(r.status, type).toBe(400);
        expect(r.body.detail.error).toBe("policy_gate_disabled");
      }
      expect((await rawChat(g, key, `orch/${cas.slug}`, "hi")).status).toBe(200);
      expect((await g.call("GET", "/v1/routing-policies", { token: user.jwt })).status).toBe(200);
      expect(
        (
          await g.call("PATCH", `/v1/routing-policies/${f.id}`, {
            token: user.jwt,
            body: { display_name: "still editable" },
          })
        ).status,
      ).toBe(200);
    } finally {
      await g.admin("PATCH", "/v1/admin/settings", { "routing.policies_enabled": true });
    }
    expect((await rawChat(g, key, `orch/${f.slug}`, "hi")).status).toBe(200);
  });

  test("an inactive policy: calls are 400 policy_inactive, CRUD works, reactivation restores calls; policy/<slug> is accepted too", async () => {
    const p = await policy({ policy_type: "fallback", entries: [{ model: "gpt-4o-mini" }] });
    expect((await rawChat(g, key, `policy/${p.slug}`, "hi")).status).toBe(200);
    await g.call("PATCH", `/v1/routing-policies/${p.id}`, { token: user.jwt, body: { is_active: false } });
    const r = await rawChat(g, key, `orch/${p.slug}`, "hi");
    expect(r.status).toBe(400);
    expect(r.body.detail.error).toBe("policy_inactive");
    expect((await g.call("GET", `/v1/routing-policies/${p.id}`, { token: user.jwt })).body.is_active).toBe(false);
    await g.call("PATCH", `/v1/routing-policies/${p.id}`, { token: user.jwt, body: { is_active: true } });
    expect((await rawChat(g, key, `orch/${p.slug}`, "hi")).status).toBe(200);
  });

  test("an unknown slug, or another user's policy, is 400 policy_not_found", async () => {
    expect((await rawChat(g, key, "orch/no-such-policy", "hi")).body.detail.error).toBe("policy_not_found");
    const other = await quickUser(g);
    const theirs = await createPolicy(g, other, { policy_type: "fallback", entries: [{ model: "gpt-4o-mini" }] });
    const r = await rawChat(g, key, `orch/${theirs.slug}`, "hi");
    expect(r.status).toBe(400);
    expect(r.body.detail.error).toBe("policy_not_found");
  });
});

describe("fallback", () => {
  test("entries in order, each with its own retries, then the next entry", async () => {
    const p = await policy({
      policy_type: "fallback",
      entries: [{ model: "gpt-4o-mini", retries: 1 }, { model: "claude-haiku-4-5" }],
    });
    const before = simCalls(g);
    const r = await chat(c, `orch/${p.slug}`, "hello [sim:fail@openai=503]");
    expect(r.body.model).toBe("claude-haiku-4-5");
    expect(r.body.provider).toBe("anthropic");
    expect(delta(before, simCalls(g))).toEqual({ openai: 2, anthropic: 1 });
    expect(decisionOf(r.headers)).toBe(`fallback; policy=${p.slug}; order=gpt-4o-mini,claude-haiku-4-5`);

    const three = await policy({
      policy_type: "fallback",
      entries: [{ model: "gpt-4o-mini", retries: 3 }, { model: "gemini-2.5-flash" }],
    });
    const b2 = simCalls(g);
    expect((await chat(c, `orch/${three.slug}`, "again [sim:fail@openai=503]")).body.model).toBe("gemini-2.5-flash");
    expect(delta(b2, simCalls(g))).toEqual({ openai: 4, google: 1 });
  });

  test("retries default to 0 per entry; an ordinary call keeps its 2 retries per provider", async () => {
    const p = await policy({
      policy_type: "fallback",
      entries: [{ model: "gpt-4o-mini" }, { model: "claude-haiku-4-5" }],
    });
    const before = simCalls(g);
    await chat(c, `orch/${p.slug}`, "zero retries [sim:fail@openai=503]");
    expect(delta(before, simCalls(g))).toEqual({ openai: 1, anthropic: 1 });
    const b2 = simCalls(g);
    const direct = await rawChat(g, key, "gpt-4o-mini", "plain call [sim:fail@openai=503]");
    expect(direct.status).toBe(502);
    expect(delta(b2, simCalls(g))).toEqual({ openai: 3 });
  });

  test("max_escalations limits how far the call moves; all failing is 502 and releases the hold", async () => {
    const p = await policy({
      policy_type: "fallback",
      entries: [{ model: "gpt-4o-mini" }, { model: "gpt-4o" }, { model: "claude-haiku-4-5" }],
      config: { limits: { max_escalations: 1 } },
    });
    const before = simCalls(g);
    const m0 = await money(g, user);
    const r = await rawChat(g, key, `orch/${p.slug}`, "no luck [sim:fail@openai=503]");
    expect(r.status).toBe(502);
    expect(r.body.detail.error).toBe("upstream_unavailable");
    expect(delta(before, simCalls(g))).toEqual({ openai: 2 });
    expect(await money(g, user)).toEqual(m0);
  });

  test("routing_prefs narrow every entry's providers, merged with the request's provider object", async () => {
    const p = await policy({
      policy_type: "fallback",
      entries: [{ model: "deepseek-v3" }],
      config: { routing_prefs: { ignore: ["deepseek"] } },
    });
    // The only provider left trains on data: without consent the policy cannot use it.
    const denied = await rawChat(g, key, `orch/${p.slug}`, "prefs");
    expect(denied.status).toBe(403);
    expect(denied.body.detail.error).toBe("xborder_training_consent_required");
    await g.admin("PATCH", `/v1/admin/users/${user.id}`, { xborder_training_consent: true });
    const r = await chat(c, `orch/${p.slug}`, "prefs");
    expect(r.body.provider).toBe("together");
    const conflict = await rawChat(g, key, `orch/${p.slug}`, "prefs", { provider: { only: ["deepseek"] } });
    expect(conflict.status).toBe(400);
  });
});

describe("weighted", () => {
  test("distribution follows the weights; a trace id always gets the same model; a weight change moves traces only onto the raised entry", async () => {
    const p = await policy({
      policy_type: "weighted",
      entries: [
        { model: "gpt-4o-mini", weight: 1 },
        { model: "claude-haiku-4-5", weight: 3 },
      ],
    });
    const traces = Array.from({ length: 160 }, (_, i) => `trace-${p.slug}-${i}`);
    const route = async (trace: string) =>
      (await chat(c, `orch/${p.slug}`, "hi", { trace_id: trace, max_tokens: 20 })).body.model as string;
    const first: string[] = [];
    for (let i = 0; i < traces.length; i += 16) first.push(...(await Promise.all(traces.slice(i, i + 16).map(route))));
    const haiku = first.filter((m) => m === "claude-haiku-4-5").length / traces.length;
    expect(haiku).toBeGreaterThan(0.6);
    expect(haiku).toBeLessThan(0.9);
    // The mapping is a pure function of (trace id, entries): the same on every instance.
    const keys = entryKeys(["gpt-4o-mini", "claude-haiku-4-5"]);
    const predicted = traces.map((t) =>
      rankWeighted(
        [
          { key: keys[0]!, weight: 1 },
          { key: keys[1]!, weight: 3 },
        ],
        t,
      )[0] === 0
        ? "gpt-4o-mini"
        : "claude-haiku-4-5",
    );
    expect(first).toEqual(predicted);
    const again = await Promise.all(traces.slice(0, 40).map(route));
    expect(again).toEqual(first.slice(0, 40));

    await g.call("PATCH", `/v1/routing-policies/${p.id}`, {
      token: user.jwt,
      body: {
        entries: [
          { model: "gpt-4o-mini", weight: 3 },
          { model: "claude-haiku-4-5", weight: 3 },
        ],
      },
    });
    const after: string[] = [];
    for (let i = 0; i < traces.length; i += 16) after.push(...(await Promise.all(traces.slice(i, i + 16).map(route))));
    let moved = 0;
    after.forEach((m, i) => {
      if (m !== first[i]) {
        moved++;
        expect(m).toBe("gpt-4o-mini");
      }
    });
    expect(moved).toBeGreaterThan(0);
    const r = await chat(c, `orch/${p.slug}`, "hi", { trace_id: traces[0] });
    expect(decisionOf(r.headers)).toStartWith(`weighted; policy=${p.slug}; trace=sticky; order=`);
  });

  test("without a trace id the choice is random by weight", async () => {
    const p = await policy({
      policy_type: "weighted",
      entries: [
        { model: "gpt-4o-mini", weight: 1 },
        { model: "gemini-2.5-flash", weight: 1 },
      ],
    });
    const models = await Promise.all(
      Array.from({ length: 40 }, () => chat(c, `orch/${p.slug}`, "hi", { max_tokens: 20 }).then((r) => r.body.model)),
    );
    expect(new Set(models).size).toBe(2);
    expect(decisionOf((await chat(c, `orch/${p.slug}`, "hi")).headers)).toContain("trace=random");
  });
});

describe("latency", () => {
  // Provider-pinned entries no other test uses, so the live measurements are this test's alone.
  const A = "deepseek-v3@deepseek";
  const B = "llama-3.3-70b@groq";

  test("prefers the entry measured fastest from live traffic, and follows a slowdown", async () => {
    const p = await policy({
      policy_type: "latency",
      entries: [{ model: A }, { model: B }],
      config: { latency: { exploration: 0 } },
    });
    for (let i = 0; i < 2; i++) {
      await chat(c, A, `warm ${i} [sim:latency=250]`);
      await chat(c, B, `warm ${i}`);
    }
    for (let i = 0; i < 4; i++) {
      const r = await chat(c, `orch/${p.slug}`, `which ${i}`);
      expect(r.body.model).toBe("llama-3.3-70b");
      expect(r.body.provider).toBe("groq");
      expect(decisionOf(r.headers)).toMatch(
        new RegExp(`^latency; policy=${p.slug}; ms=\\d+; order=llama-3.3-70b,deepseek-v3$`),
      );
    }
    // B slows down (streams are measured too); A is fast again.
    for (let i = 0; i < 3; i++) {
      const s = await c.chat.completions.create({
        model: B,
        messages: [{ role: "user", content: `slow ${i} [sim:latency=400]` }],
        stream: true,
      });
      for await (const _ of s);
      await chat(c, A, `fast ${i}`);
    }
    expect((await chat(c, `orch/${p.slug}`, "now")).body.model).toBe("deepseek-v3");
  });

  test("a small exploration share still sends calls to the slower entry", async () => {
    const p = await policy({
      policy_type: "latency",
      entries: [{ model: A }, { model: B }],
      config: { latency: { exploration: 0.5 } },
    });
    const models = new Set<string>();
    let explored = 0;
    for (let i = 0; i < 24; i++) {
      const r = await chat(c, `orch/${p.slug}`, `explore ${i}`, { max_tokens: 20 });
      models.add(r.body.model);
      if (decisionOf(r.headers).includes("explored=yes")) explored++;
    }
    expect(models.size).toBe(2);
    expect(explored).toBeGreaterThan(0);
  });
});

describe("auto", () => {
  test("classifies the intent and picks the pool's top benchmark model for it", async () => {
    const pool = ["gpt-4o-mini", "claude-sonnet-4-5", "gemini-2.5-pro", "gpt-4o"];
    const p = await policy({ policy_type: "auto", entries: pool.map((model) => ({ model })) });
    const { table } = loadBenchmarks();
    const prompts: [string, string][] = [
      ["coding", "Fix this bug in my Python function: def f(x): return x +"],
      ["math", "Solve the equation 3x + 5 = 20 and integrate x^2"],
      ["translation", "Translate this into English: 좋은 아침입니다"],
      ["writing", "Write a short poem about autumn"],
      ["general", "hello there"],
    ];
    const winners = new Set<string>();
    for (const [category, text] of prompts) {
      const expected = pool[rankByBenchmark(table, pool, category as any).order[0]!]!;
      const r = await chat(c, `orch/${p.slug}`, text, { max_tokens: 50 });
      expect(r.body.model, category).toBe(expected);
      expect(decisionOf(r.headers)).toStartWith(`auto; policy=${p.slug}; category=${category}; score=`);
      winners.add(r.body.model);
    }
    expect(winners.size).toBeGreaterThanOrEqual(3); // the category really changes the model
  });
});

describe("cascade", () => {
  const tiers = [{ model: "gpt-4o-mini" }, { model: "claude-haiku-4-5" }, { model: "gpt-4o" }];

  test("stops at the first tier whose answer passes the check", async () => {
    const p = await policy({ policy_type: "cascade", entries: tiers });
    const before = simCalls(g);
    const r = await chat(c, `orch/${p.slug}`, "a plain question");
    expect(r.body.model).toBe("gpt-4o-mini");
    expect(delta(before, simCalls(g))).toEqual({ openai: 1 });
    expect(decisionOf(r.headers)).toBe(
      `cascade; policy=${p.slug}; category=general; tiers=gpt-4o-mini; accepted=gpt-4o-mini`,
    );
  });

  test("escalates on a failed check and stops on the first pass; the dearest tier is never called", async () => {
    const p = await policy({
      policy_type: "cascade",
      entries: tiers,
      config: { response_check: { must_include: ["anthropic/"] } },
    });
    const before = simCalls(g);
    const r = await chat(c, `orch/${p.slug}`, "escalate me");
    expect(r.body.model).toBe("claude-haiku-4-5");
    expect(r.body.choices[0].message.content).toStartWith(
      "Simulated reply from anthropic/claude-haiku-4-5: escalate me",
    );
    expect(delta(before, simCalls(g))).toEqual({ openai: 1, anthropic: 1 });
    expect(decisionOf(r.headers)).toBe(
      `cascade; policy=${p.slug}; category=general; tiers=gpt-4o-mini>claude-haiku-4-5; accepted=claude-haiku-4-5; refused=gpt-4o-mini:missing_text`,
    );
  });

  test("refusals and truncation escalate through every tier; the top tier's answer is returned; max_escalations caps it", async () => {
    const p = await policy({ policy_type: "cascade", entries: tiers });
    const before = simCalls(g);
    const r = await chat(c, `orch/${p.slug}`, "I'm sorry, but I can't help with that.");
    expect(r.body.model).toBe("gpt-4o");
    expect(delta(before, simCalls(g))).toEqual({ openai: 2, anthropic: 1 });
    expect(decisionOf(r.headers)).toContain(
      "accepted=none; refused=gpt-4o-mini:refusal,claude-haiku-4-5:refusal,gpt-4o:refusal",
    );

    const truncated = await chat(c, `orch/${p.slug}`, "long please", { max_tokens: 5 });
    expect(truncated.body.model).toBe("gpt-4o");
    expect(decisionOf(truncated.headers)).toContain("refused=gpt-4o-mini:truncated");
    const lenient = await policy({
      policy_type: "cascade",
      entries: tiers,
      config: { response_check: { truncated: false }, limits: { max_escalations: 1 } },
    });
    expect((await chat(c, `orch/${lenient.slug}`, "long please", { max_tokens: 5 })).body.model).toBe("gpt-4o-mini");
    const b2 = simCalls(g);
    const capped = await chat(c, `orch/${lenient.slug}`, "I'm sorry, but I can't help with that.");
    expect(capped.body.model).toBe("claude-haiku-4-5");
    expect(delta(b2, simCalls(g))).toEqual({ openai: 1, anthropic: 1 });
  });

  test("invalid JSON when JSON was asked escalates", async () => {
    const p = await policy({ policy_type: "cascade", entries: tiers.slice(0, 2) });
    // The simulator answers JSON when asked; `not_json` makes its text plain anyway. Claude's
    // json_object goes through a forced tool, whose input is JSON whatever the text would be.
    const r = await chat(c, `orch/${p.slug}`, "give me json [sim:not_json]", {
      response_format: { type: "json_object" },
    });
    expect(decisionOf(r.headers)).toContain("accepted=claude-haiku-4-5; refused=gpt-4o-mini:invalid_json");
    expect(JSON.parse(r.body.choices[0].message.content)).toEqual({});
  });

  test("the judge model approves or sends the call up a tier", async () => {
    const p = await policy({
      policy_type: "cascade",
      entries: [{ model: "gpt-4o-mini" }, { model: "gpt-4o" }],
      config: { judge_model: "gemini-2.5-flash" },
    });
    // The simulator's answers echo the question, and the judge's reply echoes the answer: "PASS" passes.
    let before = simCalls(g);
    const pass = await chat(c, `orch/${p.slug}`, "PASS");
    expect(pass.body.model).toBe("gpt-4o-mini");
    expect(delta(before, simCalls(g))).toEqual({ openai: 1, google: 1 });
    before = simCalls(g);
    const fail = await chat(c, `orch/${p.slug}`, "FAIL");
    expect(fail.body.model).toBe("gpt-4o");
    expect(delta(before, simCalls(g))).toEqual({ openai: 2, google: 2 });
    expect(decisionOf(fail.headers)).toContain("refused=gpt-4o-mini:judge,gpt-4o:judge");
    // A judge that fails leaves the answer accepted.
    const broken = await chat(c, `orch/${p.slug}`, "judge down [sim:fail@google=503]");
    expect(broken.body.model).toBe("gpt-4o-mini");
    expect(decisionOf(broken.headers)).toContain("judge=error");
  });

  test("a hard category starts at the top tier", async () => {
    const p = await policy({ policy_type: "cascade", entries: tiers, config: { hard_categories: ["math"] } });
    const before = simCalls(g);
    const r = await chat(c, `orch/${p.slug}`, "Solve the equation 3x + 5 = 20");
    expect(r.body.model).toBe("gpt-4o");
    expect(delta(before, simCalls(g))).toEqual({ openai: 1 });
    expect(decisionOf(r.headers)).toContain("category=math; hard=yes");
    expect((await chat(c, `orch/${p.slug}`, "hello")).body.model).toBe("gpt-4o-mini");
  });

  test("streaming clients get the accepted tier's answer as a stream, with the decision header", async () => {
    const p = await policy({
      policy_type: "cascade",
      entries: tiers,
      config: { response_check: { must_include: ["anthropic/"] } },
    });
    const plain = await chat(c, `orch/${p.slug}`, "stream this answer please");
    const { data: stream, response } = await c.chat.completions
      .create({
        model: `orch/${p.slug}`,
        messages: [{ role: "user", content: "stream this answer please" }],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    expect(decisionOf(response.headers)).toContain("accepted=claude-haiku-4-5");
    let text = "";
    let chunks = 0;
    let final: any = null;
    for await (const ch of stream) {
      if (ch.choices.length) {
        chunks++;
        text += ch.choices[0]!.delta?.content ?? "";
        expect(ch.model).toBe("claude-haiku-4-5");
      } else final = ch;
    }
    expect(text).toBe(plain.body.choices[0].message.content);
    expect(chunks).toBeGreaterThan(2);
    expect(final.usage).toEqual(plain.body.usage);
    expect(final.cost).toEqual(plain.body.cost);
  });

  test("deadline_ms: a tier still running at the deadline is cut; no answer at all is 502 and nothing is charged", async () => {
    const p = await policy({ policy_type: "cascade", entries: tiers, config: { limits: { deadline_ms: 300 } } });
    const m0 = await money(g, user);
    const t0 = performance.now();
    const r = await rawChat(g, key, `orch/${p.slug}`, "slow [sim:latency=3000]");
    expect(performance.now() - t0).toBeLessThan(2500); // cut at the deadline, not after the upstream's 3 s
    expect(r.status).toBe(502);
    expect(r.body.detail.error).toBe("upstream_unavailable");
    expect(await money(g, user)).toEqual(m0);
    const f = await policy({
      policy_type: "fallback",
      entries: [{ model: "gpt-4o-mini" }],
      config: { limits: { deadline_ms: 200 } },
    });
    const t1 = performance.now();
    expect((await rawChat(g, key, `orch/${f.slug}`, "slow [sim:latency=3000]")).status).toBe(502);
    expect(performance.now() - t1).toBeLessThan(2500);
  });
});

describe("parallel", () => {
  const pool = [{ model: "gpt-4o-mini" }, { model: "claude-haiku-4-5" }, { model: "gemini-2.5-flash" }];

  test("fans out to the pool and the synthesis model merges the answers", async () => {
    const p = await policy({ policy_type: "parallel", entries: pool, config: { synthesis: "gpt-4o" } });
    const before = simCalls(g);
    const r = await chat(c, `orch/${p.slug}`, "merge these");
    expect(r.body.model).toBe("gpt-4o");
    expect(r.body.provider).toBe("openai");
    // The merge saw the workers' answers (the simulator echoes the start of its prompt).
    expect(r.body.choices[0].message.content).toStartWith(
      "Simulated reply from openai/gpt-4o: Candidate answers: [1] Simulated reply from openai/gpt-4o-mi",
    );
    expect(delta(before, simCalls(g))).toEqual({ openai: 2, anthropic: 1, google: 1 });
    expect(decisionOf(r.headers)).toBe(
      `parallel; policy=${p.slug}; category=general; workers=gpt-4o-mini,claude-haiku-4-5,gemini-2.5-flash; answered=3; synthesis=gpt-4o`,
    );
  });

  test("a failed worker is left out; a single answer is returned without a merge", async () => {
    const p = await policy({
      policy_type: "parallel",
      entries: pool,
      config: { synthesis: { model: "gpt-4o", instructions: "Be brief." } },
    });
    const two = await chat(c, `orch/${p.slug}`, "two of three [sim:fail@anthropic=503]");
    expect(two.body.model).toBe("gpt-4o");
    expect(decisionOf(two.headers)).toContain("answered=2; synthesis=gpt-4o");
    const one = await chat(c, `orch/${p.slug}`, "one left [sim:fail@anthropic=503] [sim:fail@google=503]");
    expect(one.body.model).toBe("gpt-4o-mini");
    expect(decisionOf(one.headers)).toContain("answered=1; synthesis=skipped");
  });

  test("deep_categories decide when to fan out; otherwise one worker answers", async () => {
    const p = await policy({
      policy_type: "parallel",
      entries: pool,
      config: { deep_categories: ["math"], synthesis: "gpt-4o" },
    });
    let before = simCalls(g);
    const shallow = await chat(c, `orch/${p.slug}`, "hello");
    expect(shallow.body.model).toBe("gpt-4o-mini");
    expect(delta(before, simCalls(g))).toEqual({ openai: 1 });
    expect(decisionOf(shallow.headers)).toContain("fanout=no");
    before = simCalls(g);
    const deep = await chat(c, `orch/${p.slug}`, "Solve the equation 3x + 5 = 20");
    expect(deep.body.model).toBe("gpt-4o");
    expect(delta(before, simCalls(g))).toEqual({ openai: 2, anthropic: 1, google: 1 });
  });

  test("streams the merged answer", async () => {
    const p = await policy({
      policy_type: "parallel",
      entries: pool.slice(0, 2),
      config: { synthesis: "gemini-2.5-flash" },
    });
    const plain = await chat(c, `orch/${p.slug}`, "stream the merge");
    const stream = await c.chat.completions.create({
      model: `orch/${p.slug}`,
      messages: [{ role: "user", content: "stream the merge" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    for await (const ch of stream) text += ch.choices[0]?.delta?.content ?? "";
    expect(text).toBe(plain.body.choices[0].message.content);
    expect(text).toStartWith("Simulated reply from google/gemini-2.5-flash: Candidate answers:");
  });
});

describe("the Responses endpoint", () => {
  test("runs policies too, streaming or not, and names the answering model", async () => {
    const p = await policy({
      policy_type: "cascade",
      entries: [{ model: "gpt-4o-mini" }, { model: "claude-haiku-4-5" }],
      config: { response_check: { must_include: ["anthropic/"] } },
    });
    const r = await g.call("POST", "/v1/responses", {
      token: key.key,
      body: { model: `orch/${p.slug}`, input: "via responses" },
    });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe("claude-haiku-4-5");
    expect(r.body.output[0].content[0].text).toStartWith(
      "Simulated reply from anthropic/claude-haiku-4-5: via responses",
    );
    const s = await fetch(`${g.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: `orch/${p.slug}`, input: "via responses", stream: true }),
    });
    const text = await s.text();
    expect(s.status).toBe(200);
    expect(text).toContain("response.completed");
    expect(text).toContain("Simulated reply from anthropic/claude-haiku-4-5");
  });
});

describe("organization policies", () => {
  test("members call the organization's policies; a personal policy with the same slug wins; outsiders cannot", async () => {
    const owner = await quickUser(g, 100);
    const member = await quickUser(g, 100);
    const outsider = await quickUser(g, 100);
    const org = (await g.admin("POST", "/v1/admin/orgs", { name: "Calls", owner_user_id: owner.id })).body.org_id;
    await g.admin("POST", `/v1/admin/orgs/${org}/members`, { user_id: member.id, role: "member" });
    const shared = await createPolicy(g, owner, {
      org_id: org,
      policy_type: "fallback",
      entries: [{ model: "gemini-2.5-flash" }],
    });
    const memberKey = await g.newKey(member);
    expect((await rawChat(g, memberKey, `orch/${shared.slug}`, "hi")).body.model).toBe("gemini-2.5-flash");
    const mine = await createPolicy(g, member, {
      slug: shared.slug,
      policy_type: "fallback",
      entries: [{ model: "claude-haiku-4-5" }],
    });
    expect(mine.slug).toBe(shared.slug);
    expect((await rawChat(g, memberKey, `orch/${shared.slug}`, "hi")).body.model).toBe("claude-haiku-4-5");
    expect((await rawChat(g, await g.newKey(owner), `orch/${shared.slug}`, "hi")).body.model).toBe("gemini-2.5-flash");
    const r = await rawChat(g, await g.newKey(outsider), `orch/${shared.slug}`, "hi");
    expect(r.status).toBe(400);
    expect(r.body.detail.error).toBe("policy_not_found");
  });
});
