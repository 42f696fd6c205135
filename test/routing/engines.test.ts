/**
 * The pure decision cores of the routing engines: rendezvous hashing, the latency tracker, the
 * intent classifier and benchmark ranking, the response check and judge verdicts, preference
 * merging, and how an execution sizes its hold under the limits.
 */
import { describe, expect, test } from "bun:test";
import { rankWeighted, entryKeys, unitHash } from "../../src/core/routing/weighted";
import { LatencyTracker } from "../../src/core/routing/latency";
import { classifyText, classifyMessages, CATEGORIES } from "../../src/core/routing/classify";
import { rankByBenchmark, verifyBenchmarks } from "../../src/core/routing/benchmarks";
import { loadBenchmarks } from "../../src/core/routing/benchmark-table";
import { checkResponse, isRefusal, parseVerdict, judgeRequest } from "../../src/core/routing/cascade";
import { synthesisRequest, shouldFanOut } from "../../src/core/routing/parallel";
import { mergePrefs } from "../../src/core/routing/prefs";
import { decideRoute, decisionHeader } from "../../src/core/routing/decide";
import { buildExecution } from "../../src/core/routing/execution";
import { pieces } from "../../src/core/routing/replay";
import { RETRIES_PER_PROVIDER } from "../../src/core/chat/attempts";
import { holdAmountMicro } from "../../src/core/billing/pricing";
import { CatalogStore } from "../../src/config/catalog-store";
import type { ChatResult } from "../../src/core/model/types";
import type { Policy } from "../../src/core/routing/types";
import { fxToMilli, krwToMicro } from "../../src/lib/money";

const result = (content: string | null, finishReason: ChatResult["finishReason"] = "stop"): ChatResult => ({
  content,
  finishReason,
  usage: { promptTokens: 1, completionTokens: 1, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
});

describe("weighted: rendezvous hashing", () => {
  const entries = [
    { key: "gpt-4o-mini", weight: 1 },
    { key: "claude-haiku-4-5", weight: 3 },
  ];
  const traces = Array.from({ length: 20_000 }, (_, i) => `trace-${i}`);

  test("the share of each entry follows its weight", () => {
    const wins = [0, 0];
    for (const t of traces) wins[rankWeighted(entries, t)[0]!]!++;
    expect(wins[0]! / traces.length).toBeCloseTo(0.25, 1);
    expect(Math.abs(wins[0]! / traces.length - 0.25)).toBeLessThan(0.015);
  });

  test("a trace id always maps to the same entry, and the order is a full ranking", () => {
    for (const t of traces.slice(0, 200)) {
      const first = rankWeighted(entries, t);
      expect(rankWeighted(entries, t)).toEqual(first);
      expect([...first].sort()).toEqual([0, 1]);
    }
  });

  test("raising one weight moves only traces onto that entry, about as few as possible", () => {
    const three = [
      { key: "a", weight: 2 },
      { key: "b", weight: 3 },
      { key: "c", weight: 5 },
    ];
    const raised = three.map((e) => (e.key === "a" ? { ...e, weight: 4 } : e));
    let moved = 0;
    for (const t of traces) {
      const before = rankWeighted(three, t)[0]!;
      const after = rankWeighted(raised, t)[0]!;
      if (before !== after) {
        moved++;
        expect(after).toBe(0); // traces only ever move to the entry that gained weight
      }
    }
    // a's share goes from 2/10 to 4/12: the minimum possible movement is 1/3 − 1/5 ≈ 13.3 %.
    expect(moved / traces.length).toBeGreaterThan(0.12);
    expect(moved / traces.length).toBeLessThan(0.15);
  });

  test("adding an entry takes traces only from the others onto itself", () => {
    const more = [...entries, { key: "gemini-2.5-flash", weight: 2 }];
    for (const t of traces.slice(0, 5000)) {
      const before = rankWeighted(entries, t)[0]!;
      const after = rankWeighted(more, t)[0]!;
      if (after !== before) expect(after).toBe(2);
    }
  });

  test("duplicate models get distinct keys; the hash stays in (0,1)", () => {
    expect(entryKeys(["a", "b", "a", "a"])).toEqual(["a", "b", "a#2", "a#3"]);
    for (const s of ["", "x", "trace-1", "한국어"]) {
      const u = unitHash(s);
      expect(u).toBeGreaterThan(0);
      expect(u).toBeLessThan(1);
    }
    expect(unitHash("trace-1")).not.toBe(unitHash("trace-2"));
  });
});

describe("latency tracker", () => {
  test("unmeasured entries first, then the fastest; a slowdown moves traffic within a few calls", () => {
    let now = 0;
    const t = new LatencyTracker(() => now);
    expect(t.rank(["a", "b"], "blend", 0).order).toEqual([0, 1]);
    t.observe("a", "p", true, 300, 400);
    expect(t.rank(["a", "b"], "blend", 0)).toMatchObject({ order: [1, 0], unmeasured: true });
    t.observe("b", "q", true, 50, 80);
    expect(t.rank(["a", "b"], "blend", 0)).toMatchObject({ order: [1, 0], unmeasured: false, scoreMs: 65 });
    // b becomes slow: two slow samples are enough to give a the lead.
    now += 1000;
    t.observe("b", "q", true, 900, 1000);
    t.observe("b", "q", true, 900, 1000);
    expect(t.rank(["a", "b"], "blend", 0).order).toEqual([0, 1]);
  });

  test("failures count as slow, the metric can be chosen, and a pinned entry ranks by its provider", () => {
    const t = new LatencyTracker(() => 0);
    t.observe("m", "x", true, 100, 2000);
    t.observe("n", "y", true, 500, 600);
    expect(t.rank(["m", "n"], "ttft", 0).order).toEqual([0, 1]);
    expect(t.rank(["m", "n"], "total", 0).order).toEqual([1, 0]);
    t.observe("n", "y", false, 50, 50);
    expect(t.get("n")!.totalMs).toBeGreaterThan(4000);
    t.observe("d", "fast", true, 10, 10);
    t.observe("d", "slow", true, 900, 900);
    expect(t.get("d@fast")!.ttftMs).toBe(10);
    expect(t.rank(["d@slow", "d@fast"], "blend", 0).order).toEqual([1, 0]);
  });

  test("old measurements fade: after long silence an entry counts as unmeasured again", () => {
    let now = 0;
    const t = new LatencyTracker(() => now);
    t.observe("a", null, true, 100, 100);
    expect(t.get("a")).not.toBeNull();
    now += 15 * 60_000; // three half-lives
    expect(t.get("a")).toBeNull();
  });

  test("exploration sends a share of calls to another entry", () => {
    const t = new LatencyTracker(() => 0);
    t.observe("fast", null, true, 10, 10);
    t.observe("slow", null, true, 500, 500);
    let seed = 1;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    let explored = 0;
    for (let i = 0; i < 10_000; i++) {
      const r = t.rank(["slow", "fast"], "blend", 0.1, random);
      if (r.explored) {
        explored++;
        expect(r.order[0]).toBe(0);
      } else expect(r.order[0]).toBe(1);
    }
    expect(explored / 10_000).toBeCloseTo(0.1, 1);
    expect(t.rank(["slow", "fast"], "blend", 0, random).explored).toBe(false);
  });
});

describe("intent classifier", () => {
  const cases: [string, string][] = [
    ["Translate this paragraph into English: 오늘 날씨가 좋네요", "translation"],
    ["이 문장을 영어로 번역해 주세요", "translation"],
    ["Fix this bug in my Python function:\n```python\ndef f(x):\n    return x +\n```", "coding"],
    ["TypeError: cannot read properties of undefined (reading 'map') in my React component", "coding"],
    ["이 자바스크립트 함수에서 버그를 찾아줘", "coding"],
    ["Solve the equation 3x + 5 = 20 and show the derivative of x^2", "math"],
    ["∫ x² dx 를 계산해줘", "math"],
    ["Summarize this article in three bullet points", "summarization"],
    ["다음 회의록을 세 줄로 요약해줘", "summarization"],
    ["Write a short poem about autumn leaves", "writing"],
    ["고객에게 보낼 사과 이메일을 작성해 주세요", "writing"],
    ["Think step by step: which is better for a startup, and what are the trade-offs?", "reasoning"],
    ["이 두 전략의 장단점을 비교하고 왜 그런지 분석해줘", "reasoning"],
    ["hello there", "general"],
    ["what's up", "general"],
  ];
  for (const [text, category] of cases) {
    test(`${category}: ${text.slice(0, 40).replace(/\n/g, " ")}`, () => {
      expect(classifyText(text).category).toBe(category as any);
    });
  }

  test("reads the last user message (and the system message at half weight), text parts included", () => {
    const c = classifyMessages([
      { role: "system", content: "You are a helpful assistant." },
      { role: "user", content: "Translate to French: good morning" },
      { role: "assistant", content: "Bonjour" },
      { role: "user", content: [{ type: "text", text: "Now write a haiku about the sea" }] },
    ]);
    expect(c.category).toBe("writing");
  });

  test("reads only the head of a long prompt: text past the scan window changes nothing", () => {
    // The classifier runs on every auto-routed call; its cost is bounded by reading a fixed
    // window, which is what this checks (its speed is measured by benchmarks, not asserted).
    const head = "Please review the following code and explain it. ".repeat(200);
    const tail = " Write a poem about the sea, a haiku, a sonnet.".repeat(200);
    expect(classifyText(head + tail)).toEqual(classifyText(head));
  });
});

describe("benchmark table", () => {
  test("the shipped table passes its schema and scores every catalog chat model in every category", () => {
    const { table, problems } = loadBenchmarks();
    expect(problems).toEqual([]);
    const snap = new CatalogStore().current();
    for (const m of snap.models.filter((x) => x.kind === "leaf" && x.modality === "text")) {
      for (const c of CATEGORIES) expect(typeof (table.scores[m.id] as any)?.[c]).toBe("number");
    }
  });

  test("ranks the pool by the category's score; unscored entries last; pinned providers use the model's score", () => {
    const { table } = loadBenchmarks();
    const pool = ["gpt-4o-mini", "claude-sonnet-4-5", "gemini-2.5-pro", "mystery-model", "gpt-4o@openai"];
    const top = (c: any) => pool[rankByBenchmark(table, pool, c).order[0]!];
    expect(top("coding")).toBe("claude-sonnet-4-5");
    expect(top("math")).toBe("gemini-2.5-pro");
    expect(top("translation")).toBe("gpt-4o@openai");
    expect(rankByBenchmark(table, pool, "coding").order.at(-1)).toBe(3);
  });

  test("a malformed table is refused with its problems", () => {
    expect(verifyBenchmarks({ version: 1, scores: { x: { coding: 300 } } }).ok).toBe(false);
    expect(verifyBenchmarks({ version: 1, scores: { x: { cooking: 3 } } }).ok).toBe(false);
    expect(loadBenchmarks({ version: 2 }).problems.length).toBeGreaterThan(0);
  });
});

describe("cascade response check and judge", () => {
  const plain = {};
  const json = { response_format: { type: "json_object" } };
  test("each check and its switch", () => {
    expect(checkResponse(result("fine answer"), plain)).toBeNull();
    expect(checkResponse(result("   "), plain)).toBe("empty");
    expect(checkResponse(result(null), plain)).toBe("empty");
    expect(checkResponse(result("   "), plain, { empty: false })).toBeNull();
    expect(
      checkResponse(
        { ...result(null), toolCalls: [{ id: "1", type: "function", function: { name: "f", arguments: "{}" } }] },
        plain,
      ),
    ).toBeNull();
    expect(checkResponse(result("half a sent", "length"), plain)).toBe("truncated");
    expect(checkResponse(result("half a sent", "length"), plain, { truncated: false })).toBeNull();
    expect(checkResponse(result("I'm sorry, but I can't help with that."), plain)).toBe("refusal");
    expect(checkResponse(result("I'm sorry, but I can't help with that."), plain, { refusal: false })).toBeNull();
    expect(checkResponse(result("not json"), json)).toBe("invalid_json");
    expect(checkResponse(result('{"a": 1}'), json)).toBeNull();
    expect(checkResponse(result('```json\n{"a": 1}\n```'), json)).toBeNull();
    expect(checkResponse(result("not json"), json, { invalid_json: false })).toBeNull();
    expect(checkResponse(result("not json"), plain)).toBeNull();
    expect(checkResponse(result("short"), plain, { min_chars: 10 })).toBe("too_short");
    expect(checkResponse(result("Sources: [1]"), plain, { must_include: ["sources:"] })).toBeNull();
    expect(checkResponse(result("no cites"), plain, { must_include: ["sources:"] })).toBe("missing_text");
  });

  test("refusals: English and Korean openings of short answers only", () => {
    expect(isRefusal("I cannot assist with that request.")).toBe(true);
    expect(isRefusal("As an AI language model, I can't browse the web.")).toBe(true);
    expect(isRefusal("죄송하지만 그 요청은 도와드릴 수 없습니다.")).toBe(true);
    expect(isRefusal("해당 정보는 제공할 수 없습니다.")).toBe(true);
    expect(isRefusal("Sure! Here is the answer you asked for.")).toBe(false);
    expect(isRefusal("I can help with that. " + "x".repeat(2000))).toBe(false);
    expect(isRefusal("Long answer. ".repeat(100) + "I cannot help with that.")).toBe(false);
  });

  test("verdicts: the first PASS or FAIL word; neither is unclear", () => {
    expect(parseVerdict("PASS")).toBe("pass");
    expect(parseVerdict("fail\nthe answer is off-topic")).toBe("fail");
    expect(parseVerdict("Verdict: PASS. It is not a FAIL.")).toBe("pass");
    expect(parseVerdict("PASSABLE")).toBeNull();
    expect(parseVerdict(null)).toBeNull();
    const req = judgeRequest([{ role: "user", content: "What is 2+2?" }], result("4"));
    expect(req.messages[1]!.content).toBe("Answer:\n4\n\nRequest:\nWhat is 2+2?");
    expect(req.temperature).toBe(0);
  });
});

describe("parallel", () => {
  test("fans out for deep categories only (every category when unset), never with tools", () => {
    expect(shouldFanOut("general", undefined, {})).toBe(true);
    expect(shouldFanOut("general", ["math"], {})).toBe(false);
    expect(shouldFanOut("math", ["math"], {})).toBe(true);
    expect(shouldFanOut("math", ["math"], { tools: [{ type: "function", function: { name: "f" } }] })).toBe(false);
  });

  test("the merge request lists the answers before the original request and drops tools", () => {
    const req = synthesisRequest(
      {
        messages: [
          { role: "system", content: "be brief" },
          { role: "user", content: "why?" },
        ],
        max_tokens: 50,
        tools: [{ type: "function", function: { name: "f" } }],
      },
      [result("because A"), result("because B")],
      "Prefer A.",
    );
    expect(req.tools).toBeUndefined();
    expect(req.max_tokens).toBe(50);
    expect(req.messages[0]!.content).toContain("Prefer A.");
    expect(req.messages[1]).toEqual({ role: "system", content: "be brief" });
    expect(req.messages[2]!.content).toBe("Candidate answers:\n[1] because A\n\n[2] because B\n\nRequest:\nwhy?");
  });
});

test("routing_prefs and the request's provider object: restrictions add up, order choices are the request's", () => {
  expect(mergePrefs(undefined, { sort: "price" })).toEqual({ sort: "price" });
  expect(mergePrefs({ ignore: ["together"] }, undefined)).toEqual({ ignore: ["together"] });
  const m = mergePrefs(
    { only: ["a", "b"], ignore: ["x"], sort: "latency", max_price: { prompt: 2 } },
    { only: ["b", "c"], ignore: ["y"], sort: "price", max_price: { prompt: 5, completion: 1 } },
  )!;
  expect(m.only).toEqual(["b"]);
  expect(m.ignore).toEqual(["x", "y"]);
  expect(m.sort).toBe("price");
  expect(m.max_price).toEqual({ prompt: 2, completion: 1 });
  expect(mergePrefs({ only: ["a"] }, { only: ["c"] })!.only).toEqual(["(none)"]);
});

test("replayed text is cut into pieces without splitting a surrogate pair", () => {
  const text = "😀".repeat(100) + "abc";
  const p = pieces(text);
  expect(p.join("")).toBe(text);
  for (const s of p) expect(s.isWellFormed()).toBe(true);
  expect(pieces("")).toEqual([]);
});

describe("decisions and executions over the shipped catalog", () => {
  const snapshot = new CatalogStore().current();
  const { table } = loadBenchmarks();
  const fx = fxToMilli(1400);
  const policy = (
    policyType: Policy["policyType"],
    models: string[],
    config: Policy["config"] = {},
    extra: Partial<Policy> = {},
  ): Policy => ({
    id: "00000000-0000-4000-8000-000000000001",
    userId: "u",
    orgId: null,
    slug: "s",
    displayName: "S",
    policyType,
    entries: models.map((model) => ({ model, retries: 1 })),
    config,
    isActive: true,
    createdAt: new Date(),
    updatedAt: new Date(),
    ...extra,
  });
  const ctx = (content: string, traceId?: string) => ({
    traceId,
    request: { messages: [{ role: "user" as const, content }], max_tokens: 1000 },
    benchmarks: table,
    latency: new LatencyTracker(),
    random: () => 0.5,
  });
  const exec = (p: Policy, content = "hello", maxTokens = 1000) => {
    const route = decideRoute(p, p.entries, {
      ...ctx(content),
      request: { messages: [{ role: "user", content }], max_tokens: maxTokens },
    });
    return buildExecution({
      route,
      snapshot,
      candidateOptions: { consent: true, byokProvider: null },
      inputTokens: 10,
      maxTokens,
      fxMilli: fx,
      free: false,
    });
  };
  const worst = (model: string, inTok = 10, out = 1000) =>
    holdAmountMicro(
      snapshot.offeringsByModel[model]!.map((o) => o.pricing!),
      inTok,
      out,
      fx,
    );

  test("fallback keeps entry order and per-entry retries; weighted and latency keep the chat default", () => {
    const f = exec(policy("fallback", ["gpt-4o-mini", "deepseek-v3"]));
    expect(f.kind).toBe("single");
    if (f.kind !== "single") return;
    expect(f.candidates.map((c) => `${c.model.id}@${c.provider.id}`)).toEqual([
      "gpt-4o-mini@openai",
      "deepseek-v3@deepseek",
      "deepseek-v3@together",
    ]);
    expect(f.retries).toEqual([1, 1, 1]);
    const w = exec(policy("weighted", ["gpt-4o-mini", "claude-haiku-4-5"]));
    if (w.kind === "single") expect(w.retries.every((r) => r === null)).toBe(true);
    expect(RETRIES_PER_PROVIDER).toBe(2);
  });

  test("max_escalations trims the entries a call may reach; the header lists what remains", () => {
    const f = exec(
      policy("fallback", ["gpt-4o-mini", "claude-haiku-4-5", "gpt-4o"], { limits: { max_escalations: 1 } }),
    );
    expect(f.facts).toContain("order=gpt-4o-mini,claude-haiku-4-5");
    expect(decisionHeader(f.route, f.facts)).toBe("fallback; policy=s; order=gpt-4o-mini,claude-haiku-4-5");
  });

  test("cascade holds every tier plus its judge call; hard categories start at the top tier", () => {
    const p = policy("cascade", ["gpt-4o-mini", "claude-haiku-4-5", "gpt-4o"], {
      judge_model: "gemini-2.5-flash",
      hard_categories: ["math"],
    });
    const x = exec(p);
    if (x.kind !== "cascade") throw new Error("not a cascade");
    const judge = worst("gemini-2.5-flash", 10 + 1000 + 64, 64);
    expect(x.holdMicro).toBe(worst("gpt-4o-mini") + worst("claude-haiku-4-5") + worst("gpt-4o") + 3n * judge);
    expect(x.tiers.map((t) => t.model)).toEqual(["gpt-4o-mini", "claude-haiku-4-5", "gpt-4o"]);
    const hard = exec(p, "Solve the equation 3x + 5 = 20");
    if (hard.kind !== "cascade") throw new Error("not a cascade");
    expect(hard.tiers.map((t) => t.model)).toEqual(["gpt-4o"]);
    expect(hard.facts).toContain("hard=yes");
  });

  test("max_cost_krw: cascade keeps the tiers that fit; single routes drop dear candidates; nothing fitting is a 400", () => {
    const cheapPlusMid = worst("gpt-4o-mini") + worst("claude-haiku-4-5");
    const limitKrw = Number(cheapPlusMid + 1000n) / 1e6;
    const x = exec(
      policy("cascade", ["gpt-4o-mini", "claude-haiku-4-5", "gpt-4o"], { limits: { max_cost_krw: limitKrw } }),
    );
    if (x.kind !== "cascade") throw new Error("not a cascade");
    expect(x.tiers.map((t) => t.model)).toEqual(["gpt-4o-mini", "claude-haiku-4-5"]);
    expect(x.holdMicro).toBeLessThanOrEqual(krwToMicro(limitKrw));
    const s = exec(
      policy("fallback", ["gpt-4o", "gpt-4o-mini"], { limits: { max_cost_krw: Number(worst("gpt-4o-mini")) / 1e6 } }),
    );
    if (s.kind !== "single") throw new Error("not single");
    expect(s.candidates.map((c) => c.model.id)).toEqual(["gpt-4o-mini"]);
    expect(() => exec(policy("fallback", ["gpt-4o"], { limits: { max_cost_krw: 0.001 } }))).toThrow(
      expect.objectContaining({ errorCode: "policy_cost_limit_exceeded" }),
    );
  });

  test("parallel holds every worker plus the merge of all their answers; too little budget means one worker", () => {
    const p = policy("parallel", ["gpt-4o-mini", "claude-haiku-4-5"], { synthesis: "gpt-4o" });
    const x = exec(p);
    if (x.kind !== "parallel") throw new Error("not parallel");
    const merge = worst("gpt-4o", 10 + 2 * (1000 + 8) + 120, 1000);
    expect(x.holdMicro).toBe(worst("gpt-4o-mini") + worst("claude-haiku-4-5") + merge);
    const tight = exec(
      policy("parallel", ["gpt-4o-mini", "claude-haiku-4-5"], {
        synthesis: "gpt-4o",
        limits: { max_cost_krw: Number(worst("claude-haiku-4-5")) / 1e6 },
      }),
    );
    expect(tight.kind).toBe("single");
    expect(tight.facts).toContain("fanout=no");
    const shallow = exec(
      policy("parallel", ["gpt-4o-mini", "claude-haiku-4-5"], { deep_categories: ["math"] }),
      "hello",
    );
    expect(shallow.kind).toBe("single");
  });
});
