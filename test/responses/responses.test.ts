/**
 * POST /v1/responses, non-streaming, through the official `openai` SDK: the response object,
 * what the provider receives (through a recording proxy in front of a simulated OpenAI-compatible
 * upstream the gateway translates for; OpenAI itself gets the client's body: relay.test.ts),
 * validation, cost headers, billing and the response cache.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import OpenAI from "openai";
import { startTestGateway, type TestGateway } from "../harness";
import { microToKrwRounded, microToUsd } from "../../src/lib/money";
import { postResponses, tenant, UpstreamRecorder, usageOf } from "./helpers";

// Every test makes its own tenant (signup, login, key) and calls over real sockets.
setDefaultTimeout(30_000);

let g: TestGateway;
let rec: UpstreamRecorder;
beforeAll(async () => {
  rec = new UpstreamRecorder();
  g = await startTestGateway({ env: { GROQ_BASE_URL: rec.url } });
  rec.aim(g.gw.sim!.baseUrl("groq"));
}, 30_000);
afterAll(async () => {
  await g?.stop();
  rec?.stop();
});

const weather = {
  type: "function" as const,
  name: "get_weather",
  description: "Current weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};

describe("the response object", () => {
  test("SDK create: the specification's fields, output_text, usage, no cost in the body", async () => {
    const { sdk } = await tenant(g);
    const { data: r, response } = await sdk.responses
      .create({ model: "llama-3.1-8b", input: "hello there" })
      .withResponse();
    expect(r.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(r.object).toBe("response");
    expect(r.status).toBe("completed");
    expect(r.model).toBe("llama-3.1-8b");
    expect(Math.abs(r.created_at - Date.now() / 1000)).toBeLessThan(10);
    expect(Number.isInteger(r.created_at)).toBe(true);
    expect(r.output).toHaveLength(1);
    const item: any = r.output[0];
    expect(item).toMatchObject({ type: "message", status: "completed", role: "assistant" });
    expect(item.id).toMatch(/^msg_/);
    expect(item.content).toEqual([{ type: "output_text", text: r.output_text, annotations: [] }]);
    expect(r.output_text).toStartWith("Simulated reply from groq/llama-3.1-8b-instant: hello there");
    // "hello there" is 11 characters (3 tokens); the default reply is 20 tokens.
    expect(r.usage).toMatchObject({ input_tokens: 3, output_tokens: 20, total_tokens: 23 });
    expect((r as any).cost).toBeUndefined();
    expect(response.headers.get("x-request-id")).toBe(
      `${r.id.slice(5, 13)}-${r.id.slice(13, 17)}-${r.id.slice(17, 21)}-${r.id.slice(21, 25)}-${r.id.slice(25)}`,
    );
  });

  test("instructions arrive first as a system message; input items as chat messages", async () => {
    const { sdk } = await tenant(g);
    await sdk.responses.create({
      model: "llama-3.1-8b",
      instructions: "answer in one word",
      input: [
        { role: "user", content: "weather in Seoul?" },
        { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Seoul"}' },
        { type: "function_call_output", call_id: "call_1", output: "sunny" },
        { role: "user", content: [{ type: "input_text", text: "so?" }] },
      ],
      tools: [weather],
    });
    const sent = rec.last();
    expect(sent.messages).toEqual([
      { role: "system", content: "answer in one word" },
      { role: "user", content: "weather in Seoul?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Seoul"}' } },
        ],
      },
      { role: "tool", content: "sunny", tool_call_id: "call_1" },
      { role: "user", content: [{ type: "text", text: "so?" }] },
    ]);
    expect(sent.tools).toEqual([
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "Current weather",
          parameters: weather.parameters,
          strict: false,
        },
      },
    ]);
  });

  test("the same conversation costs the same tokens as on chat completions", async () => {
    const { sdk } = await tenant(g);
    const r = await sdk.responses.create({
      model: "claude-haiku-4-5",
      instructions: "be brief",
      input: [
        { role: "user", content: "weather in Seoul?" },
        { type: "function_call", call_id: "toolu_1", name: "get_weather", arguments: '{"city":"Seoul"}' },
        { type: "function_call_output", call_id: "toolu_1", output: "sunny" },
      ],
      tools: [weather],
    });
    const c: any = await sdk.chat.completions.create({
      model: "claude-haiku-4-5",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "weather in Seoul?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Seoul"}' } },
          ],
        },
        { role: "tool", tool_call_id: "toolu_1", content: "sunny" },
      ],
      tools: [
        {
          type: "function",
          function: {
            name: weather.name,
            description: weather.description,
            parameters: weather.parameters,
            strict: false,
          },
        },
      ],
    });
    expect(r.usage!.input_tokens).toBe(c.usage.prompt_tokens);
    expect(r.usage!.input_tokens).toBeGreaterThan(10);
  });

  test("non-function tools are dropped silently; a forced function call is a function_call item", async () => {
    const { sdk } = await tenant(g);
    const r = await sdk.responses.create({
      model: "llama-3.1-8b",
      input: "weather?",
      tools: [{ type: "web_search" } as any, weather, { type: "file_search", vector_store_ids: ["vs_1"] } as any],
      tool_choice: "required",
    });
    expect(rec.last().tools.map((t: any) => t.function.name)).toEqual(["get_weather"]);
    expect(rec.last().tool_choice).toBe("required");
    expect(r.output).toHaveLength(1);
    const call: any = r.output[0];
    expect(call).toMatchObject({
      type: "function_call",
      status: "completed",
      name: "get_weather",
      arguments: '{"city":"sample city"}',
    });
    expect(call.id).toMatch(/^fc_/);
    expect(call.call_id).toStartWith("call_");
    expect(r.output_text).toBe("");
    expect(r.tools).toEqual([
      {
        type: "function",
        name: "get_weather",
        description: "Current weather",
        parameters: weather.parameters,
        strict: false,
      },
    ] as any);
  });

  test("tool_choice {type: function, name} forces that function", async () => {
    const { sdk } = await tenant(g);
    const other = { ...weather, name: "get_time" };
    const r = await sdk.responses.create({
      model: "llama-3.1-8b",
      input: "x",
      tools: [weather, other],
      tool_choice: { type: "function", name: "get_time" },
    });
    expect(rec.last().tool_choice).toEqual({ type: "function", function: { name: "get_time" } });
    expect((r.output[0] as any).name).toBe("get_time");
  });

  test("accepted-but-ignored fields are accepted and never sent upstream; metadata is echoed", async () => {
    const { key } = await tenant(g);
    const res = await postResponses(g, key.key, {
      model: "llama-3.1-8b",
      input: "ignored fields",
      text: { format: { type: "text" }, verbosity: "low" },
      store: true,
      previous_response_id: "resp_0123",
      include: ["reasoning.encrypted_content"],
      prompt_cache_key: "pck",
      metadata: { team: "search" },
      truncation: "auto",
      user: "someone",
    });
    expect(res.status).toBe(200);
    const body: any = await res.json();
    expect(body.metadata).toEqual({ team: "search" });
    const sent = rec.last();
    for (const f of [
      "text",
      "store",
      "previous_response_id",
      "include",
      "prompt_cache_key",
      "metadata",
      "truncation",
      "user",
      "input",
      "instructions",
    ])
      expect(sent[f]).toBeUndefined();
  });

  test("optional fields sent as null count as absent", async () => {
    const { key } = await tenant(g);
    const res = await postResponses(g, key.key, {
      model: "llama-3.1-8b",
      input: "nulls",
      instructions: null,
      max_output_tokens: null,
      temperature: null,
      top_p: null,
      tools: null,
      tool_choice: null,
      metadata: null,
      reasoning: { effort: null, summary: null },
      service_tier: null,
      stream: null,
    });
    expect(res.status).toBe(200);
    const sent = rec.last();
    expect(sent.max_tokens ?? sent.max_completion_tokens).toBe(4096);
    // temperature falls back to the chat default (0.7); the rest stays absent.
    expect(sent.temperature).toBe(0.7);
    for (const f of ["top_p", "tools", "tool_choice", "reasoning_effort", "service_tier"])
      expect(sent[f]).toBeUndefined();
    expect(sent.messages).toEqual([{ role: "user", content: "nulls" }]);
  });

  test("max_output_tokens maps to max_tokens (default 4096); a cut answer says so but stays completed", async () => {
    const { sdk } = await tenant(g);
    await sdk.responses.create({ model: "llama-3.1-8b", input: "default cap" });
    expect(rec.last().max_tokens ?? rec.last().max_completion_tokens).toBe(4096);
    const r = await sdk.responses.create({
      model: "llama-3.1-8b",
      input: "long one [sim:tokens=50]",
      max_output_tokens: 10,
    });
    expect(rec.last().max_tokens ?? rec.last().max_completion_tokens).toBe(10);
    expect(r.usage!.output_tokens).toBe(10);
    expect(r.status).toBe("completed");
    expect(r.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(r.max_output_tokens).toBe(10);
  });

  test("reasoning.effort reaches the provider; the top-level reasoning_effort wins", async () => {
    const { sdk } = await tenant(g);
    const low = await sdk.responses.create({ model: "llama-3.1-8b", input: "think", reasoning: { effort: "low" } });
    expect(rec.last().reasoning_effort).toBe("low");
    expect(low.usage!.output_tokens_details.reasoning_tokens).toBe(16);
    const high = await sdk.responses.create({
      model: "llama-3.1-8b",
      input: "think",
      reasoning: { effort: "low" },
      reasoning_effort: "high",
    } as any);
    expect(rec.last().reasoning_effort).toBe("high");
    expect(high.usage!.output_tokens_details.reasoning_tokens).toBe(64);
    expect(high.reasoning).toEqual({ effort: "high", summary: null });
  });

  test("reasoning.mode pro goes through the chat rules (400 on a model without a pro mode)", async () => {
    const { key } = await tenant(g);
    const res = await postResponses(g, key.key, { model: "llama-3.1-8b", input: "x", reasoning: { mode: "pro" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).detail.error).toBe("reasoning_mode_unsupported");
  });
});

describe("PII masking (the key's default)", () => {
  test("nothing personal reaches the provider; the answer is restored, plain and streamed", async () => {
    const { key, sdk } = await tenant(g);
    expect(key.pii_masking_enabled).toBe(true);
    const value = "alice.kim@example.co.kr";
    const r = await sdk.responses.create({
      model: "llama-3.1-8b",
      instructions: `Reply to ${value}`,
      input: `mail ${value} now`,
    });
    expect(r.output_text).toContain(value);
    expect(JSON.stringify(rec.last())).not.toContain(value);
    expect(JSON.stringify(rec.last().messages)).toMatch(/\[EMAIL_1\]/);
    const stream = await sdk.responses.create({ model: "llama-3.1-8b", input: `mail ${value} now`, stream: true });
    let text = "";
    let done: any = null;
    for await (const ev of stream) {
      if (ev.type === "response.output_text.delta") text += ev.delta;
      if (ev.type === "response.completed") done = ev.response;
    }
    expect(text).toContain(value);
    expect(text).not.toMatch(/\[EMAIL_\d+\]/);
    expect(done.output[0].content[0].text).toBe(text);
    expect(JSON.stringify(rec.last())).not.toContain(value);
  });
});

describe("validation and errors", () => {
  test("POST /v1/responses/compact with a valid key is 501 not_implemented; nothing is called (docs/decisions.md #7)", async () => {
    const { key } = await tenant(g);
    const before = rec.calls.length;
    const res = await g.call("POST", "/v1/responses/compact", {
      token: key.key,
      body: { model: "llama-3.1-8b", input: "x" },
    });
    expect(res.status).toBe(501);
    expect(JSON.stringify(res.body)).toContain("not_implemented");
    expect(rec.calls.length).toBe(before);
    expect((await g.call("POST", "/v1/responses/compact", { body: {} })).status).toBe(401);
  });

  test("max_output_tokens outside 1–128,000 is 422 with its loc; nothing is called", async () => {
    const { key } = await tenant(g);
    const before = rec.calls.length;
    for (const v of [0, 128001, 1.5, "many"]) {
      const res = await postResponses(g, key.key, { model: "llama-3.1-8b", input: "x", max_output_tokens: v });
      expect(res.status).toBe(422);
      const body: any = await res.json();
      expect(body.detail.some((d: any) => JSON.stringify(d.loc) === '["body","max_output_tokens"]')).toBe(true);
    }
    expect(
      (await postResponses(g, key.key, { model: "llama-3.1-8b", input: "x", max_output_tokens: 128000 })).status,
    ).toBe(200);
    expect(rec.calls.length).toBe(before + 1);
  });

  test("other schema errors are 422 with their loc", async () => {
    const { key } = await tenant(g);
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{ model: "llama-3.1-8b" }, ["body", "input"]],
      [{ model: "llama-3.1-8b", input: "x", temperature: 3 }, ["body", "temperature"]],
      [{ model: "llama-3.1-8b", input: "x", reasoning_effort: "extreme" }, ["body", "reasoning_effort"]],
      [{ model: "llama-3.1-8b", input: [{ type: "function_call", name: "f" }] }, ["body", "input", 0, "call_id"]],
      [{ model: "llama-3.1-8b", input: "x", tools: [{ type: "function" }] }, ["body", "tools", 0, "name"]],
    ];
    for (const [body, loc] of cases) {
      const res = await postResponses(g, key.key, body);
      expect(res.status).toBe(422);
      const out: any = await res.json();
      expect(out.detail.map((d: any) => JSON.stringify(d.loc))).toContain(JSON.stringify(loc));
    }
  });

  test("authentication and chat errors are the chat service's", async () => {
    const bad = new OpenAI({ apiKey: "sk-gw-nope", baseURL: g.url + "/v1", maxRetries: 0 });
    const e1: any = await bad.responses.create({ model: "llama-3.1-8b", input: "x" }).catch((e) => e);
    expect(e1.status).toBe(401);
    const { sdk } = await tenant(g);
    const e2: any = await sdk.responses.create({ model: "llama-3.1-8bb", input: "x" }).catch((e) => e);
    expect(e2.status).toBe(400);
    expect(e2.code).toBe("model_not_found");
    const poor = await tenant(g, 0);
    const e3: any = await poor.sdk.responses.create({ model: "llama-3.1-8b", input: "x" }).catch((e) => e);
    expect(e3.status).toBe(402);
    const e4: any = await sdk.responses
      .create({ model: "llama-3.1-8b", input: "always failing [sim:fail=503]" })
      .catch((e) => e);
    expect(e4.status).toBe(502);
    expect(e4.code).toBe("upstream_unavailable");
  });
});

describe("cost and billing", () => {
  test("X-Cost-Krw and X-Cost-Usd carry the charge of the usage event", async () => {
    const { sdk, user } = await tenant(g);
    const { data: r, response } = await sdk.responses
      .create({ model: "gpt-4o", input: "a longer answer [sim:tokens=1000]" })
      .withResponse();
    const u = await usageOf(g, r.id);
    expect(u.status).toBe(200);
    expect(u.hold_status).toBe("settled");
    expect(u.cost_micro).toBeGreaterThan(0n);
    expect(u.charged_micro).toBe(u.cost_micro);
    expect(Number(response.headers.get("x-cost-krw"))).toBe(microToKrwRounded(u.cost_micro));
    expect(Number(response.headers.get("x-cost-krw"))).toBeGreaterThan(0);
    expect(Number(response.headers.get("x-cost-usd"))).toBe(microToUsd(u.cost_micro, 1_400_000n));
    expect([u.prompt_tokens, u.completion_tokens]).toEqual([r.usage!.input_tokens, r.usage!.output_tokens]);
    const me = await g.call("GET", "/v1/me", { token: user.jwt });
    expect(me.body.held_krw).toBe(0);
  });

  test("a response-cache hit answers without the provider, costs 0 and says cached", async () => {
    const { sdk } = await tenant(g, 1000, { response_cache_mode: "exact" });
    const first = await sdk.responses.create({
      model: "llama-3.1-8b",
      input: "cache me please",
      instructions: "short",
    });
    expect((first as any).cached).toBe(false);
    let hit: any = null;
    let headers: Headers | null = null;
    for (let i = 0; i < 50 && !hit?.cached; i++) {
      const before = rec.calls.length;
      const { data, response } = await sdk.responses
        .create({ model: "llama-3.1-8b", input: "cache me please", instructions: "short" })
        .withResponse();
      hit = data;
      headers = response.headers;
      if ((data as any).cached) expect(rec.calls.length).toBe(before);
      else await Bun.sleep(20);
    }
    expect(hit.cached).toBe(true);
    expect(hit.output_text).toBe(first.output_text);
    expect(hit.usage).toEqual(first.usage);
    expect(hit.id).not.toBe(first.id);
    expect(headers!.get("x-cost-krw")).toBe("0");
    expect(headers!.get("x-cost-usd")).toBe("0");
    const u = await usageOf(g, hit.id);
    expect(u.cached).toBe(true);
    expect(u.cost_micro).toBe(0n);
    // The cache keys the core chat request: the same conversation on chat hits the same entry.
    const before = rec.calls.length;
    const c: any = await sdk.chat.completions.create({
      model: "llama-3.1-8b",
      messages: [
        { role: "system", content: "short" },
        { role: "user", content: "cache me please" },
      ],
    });
    expect(c.cached).toBe(true);
    expect(c.choices[0].message.content).toBe(first.output_text);
    expect(rec.calls.length).toBe(before);
  });
});
