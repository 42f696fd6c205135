/**
 * `stream: true` end to end: the specification's event sequence (read raw and through the
 * SDK) for a byte-relayed OpenAI-compatible upstream and for translated Anthropic and Gemini
 * ones; fallback before the first byte; JSON errors when nothing streamed; the mid-stream
 * failure event with partial billing; client disconnects; keepalive comments.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { createApp } from "../../src/http/app";
import { chatRoutes } from "../../src/http/routes/chat";
import { startTestGateway, type TestGateway } from "../harness";
import {
  chargeOf,
  chat,
  chatFetch,
  eventually,
  money,
  parseSse,
  proxiedGateway,
  type RecordingProxy,
  simChatCalls,
  tenant,
  usageOf,
  user,
} from "../support/chat";

// Real servers and databases on a shared machine: generous per-test deadlines.
setDefaultTimeout(20_000);

// `g` talks to the simulator directly (a proxy could not reproduce a connection reset
// faithfully); `gp` goes through a recording proxy, to compare bytes and to see aborts.
let g: TestGateway;
let gp: TestGateway;
let proxy: RecordingProxy;
beforeAll(async () => {
  [g, { g: gp, proxy }] = await Promise.all([startTestGateway(), proxiedGateway(["openai", "anthropic", "google"])]);
}, 60_000);
afterAll(async () => {
  await g?.stop();
  await gp?.stop();
  proxy?.stop();
});

const MODELS = [
  ["gpt-4o-mini", "openai", "relayed"],
  ["claude-haiku-4-5", "anthropic", "translated"],
  ["gemini-2.5-flash", "google", "translated"],
] as const;

/** Asserts the specification's chat stream shape; returns the text, usage and cost. */
function checkSequence(text: string, model: string) {
  expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
  const events = parseSse(text).filter((e) => e.data !== null);
  const last = events.at(-1)!;
  expect(last.data).toBe("[DONE]");
  const final = events.at(-2)!.json;
  const chunks = events.slice(0, -2).map((e) => e.json);
  expect(chunks.length).toBeGreaterThanOrEqual(3);
  for (const c of chunks) {
    expect(c.object).toBe("chat.completion.chunk");
    expect(c.choices).toHaveLength(1);
    expect(c.choices[0].index).toBe(0);
  }
  // 1. First delta: role assistant (content may be empty, docs/decisions.md #15).
  expect(chunks[0].choices[0].delta.role).toBe("assistant");
  // Content deltas, then the finish chunk with an empty delta.
  const finish = chunks.at(-1);
  expect(finish.choices[0].finish_reason).toBe("stop");
  expect(finish.choices[0].delta).toEqual({});
  for (const c of chunks.slice(0, -1)) expect(c.choices[0].finish_reason).toBeNull();
  const content = chunks.map((c) => c.choices[0].delta.content ?? "").join("");
  expect(content.length).toBeGreaterThan(0);
  expect(chunks.slice(1, -1).every((c) => typeof c.choices[0].delta.content === "string")).toBe(true);
  // 2. The final event: no choices, usage and cost.
  expect(final.choices).toEqual([]);
  expect(final.usage.prompt_tokens).toBeGreaterThan(0);
  expect(final.usage.completion_tokens).toBeGreaterThan(0);
  expect(final.usage.total_tokens).toBe(final.usage.prompt_tokens + final.usage.completion_tokens);
  expect(Object.keys(final.cost).sort()).toEqual(["fx_rate", "krw", "markup_rate", "usd"]);
  expect(final.cost.markup_rate).toBe(0);
  expect(Number.isInteger(final.cost.krw)).toBe(true);
  expect(final.provider).toBeString();
  expect(final.model).toBe(model);
  return { content, usage: final.usage, cost: final.cost, chunks, final };
}

describe("the event sequence", () => {
  for (const [model, provider, how] of MODELS) {
    test(`${model} (${how}): raw SSE matches the specification and the non-streamed answer`, async () => {
      const { key, user: u } = await tenant(gp, 100);
      const body = { model, messages: user(`stream sequence for ${model}`) };
      const plain = await chat(gp, key.key, body);
      expect(plain.status).toBe(200);
      proxy.clear();
      const before = await money(gp, u.id);
      const res = await chatFetch(gp, key.key, { ...body, stream: true });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toStartWith("text/event-stream");
      const text = await res.text();
      const s = checkSequence(text, model);
      expect(s.content).toBe(plain.body.choices[0].message.content);
      expect(s.usage.prompt_tokens).toBe(plain.body.usage.prompt_tokens);
      expect(s.usage.completion_tokens).toBe(plain.body.usage.completion_tokens);
      expect(s.cost).toEqual(plain.body.cost);
      expect(s.final.provider).toBe(provider);
      // Every line is an SSE `data:` line (or a comment): nothing else leaks to the client.
      for (const line of text.split("\n"))
        expect(line === "" || line.startsWith("data: ") || line.startsWith(":")).toBe(true);
      const after = await money(gp, u.id);
      expect(after.held).toBe(0n);
      expect(before.balance - after.balance).toBeGreaterThan(0n);
      if (how === "relayed") {
        // Byte for byte: every chunk event before the usage event is the upstream's own bytes.
        const upstream = proxy.bodies.find((b) => b.path.endsWith("/chat/completions"))!;
        await upstream.ended;
        const up = parseSse(upstream.response).map((e) => e.raw);
        const mine = parseSse(text).map((e) => e.raw);
        const relayed = mine.slice(0, -2);
        expect(relayed).toEqual(up.slice(0, relayed.length));
        expect(up.at(-1)).toBe("data: [DONE]");
      }
    });
  }

  for (const [model, provider] of MODELS) {
    test(`${model}: the SDK reads the stream, with usage and cost on the last chunk`, async () => {
      const { sdk: c } = await tenant(g, 100);
      const s = await c.chat.completions.create({
        model,
        messages: user("sdk stream"),
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks: any[] = [];
      for await (const ch of s) chunks.push(ch);
      expect(chunks[0].choices[0].delta.role).toBe("assistant");
      const last = chunks.at(-1);
      expect(last.choices).toEqual([]);
      expect(last.usage.total_tokens).toBeGreaterThan(0);
      expect(last.cost.fx_rate).toBe(1400);
      expect(last.provider).toBe(provider);
      const text = chunks.map((ch) => ch.choices[0]?.delta?.content ?? "").join("");
      expect(text).toContain(`Simulated reply from ${provider}/`);
      // The SDK's stream helper assembles the same message.
      const helper = c.chat.completions.stream({ model, messages: user("sdk stream") });
      const done = await helper.finalChatCompletion();
      expect(done.choices[0]!.message.content).toBe(text);
    });
  }

  test("a forced tool call streams as tool_call deltas (relayed and translated)", async () => {
    const { sdk: c } = await tenant(g, 100);
    const tools = [
      {
        type: "function" as const,
        function: {
          name: "get_weather",
          parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        },
      },
    ];
    for (const [model] of MODELS) {
      const r = await c.chat.completions
        .stream({
          model,
          messages: user("weather?"),
          tools,
          tool_choice: { type: "function", function: { name: "get_weather" } },
        })
        .finalChatCompletion();
      const call = r.choices[0]!.message.tool_calls?.[0] as any;
      expect([model, call?.function?.name]).toEqual([model, "get_weather"]);
      expect(JSON.parse(call.function.arguments)).toEqual({ city: "sample city" });
      expect(r.choices[0]!.finish_reason).toBe("tool_calls");
    }
  });
});

describe("failures before the first byte", () => {
  for (const [model, provider] of MODELS) {
    test(`${model}: a 503 then success is still an ordinary stream (2 upstream calls)`, async () => {
      const { key } = await tenant(g, 100);
      g.gw.sim!.reset();
      const res = await chatFetch(g, key.key, { model, stream: true, messages: user("retry me [sim:fail=503x1]") });
      expect(res.status).toBe(200);
      checkSequence(await res.text(), model);
      expect(simChatCalls(g)).toEqual({ [provider]: 2 });
    });
  }

  test("falling back to another provider before the first byte streams from it", async () => {
    const { key, user: u } = await tenant(g, 100);
    await g.admin("PATCH", `/v1/admin/users/${u.id}`, { xborder_training_consent: true });
    g.gw.sim!.reset();
    const res = await chatFetch(g, key.key, {
      model: "deepseek-v3",
      stream: true,
      messages: user("fallback stream [sim:fail@deepseek=503]"),
    });
    expect(res.status).toBe(200);
    const s = checkSequence(await res.text(), "deepseek-v3");
    expect(s.final.provider).toBe("together");
    expect(s.content).toContain("Simulated reply from together/");
    expect(simChatCalls(g)).toEqual({ deepseek: 3, together: 1 });
  });

  test("when every attempt fails before the first byte, the answer is a JSON 502, not a stream", async () => {
    const { key, user: u } = await tenant(g, 100);
    for (const [model] of MODELS) {
      g.gw.sim!.reset();
      const res = await chatFetch(g, key.key, { model, stream: true, messages: user("all down [sim:fail=503]") });
      expect([model, res.status]).toEqual([model, 502]);
      expect(res.headers.get("content-type")).toStartWith("application/json");
      const body: any = await res.json();
      expect(body.detail.error).toBe("upstream_unavailable");
      expect(body.detail.retryable).toBe(true);
      expect(g.gw.sim!.stats().total).toBe(3);
    }
    const rejected = await chatFetch(g, key.key, {
      model: "gpt-4o-mini",
      stream: true,
      messages: user("bad [sim:fail=400]"),
    });
    expect(rejected.status).toBe(502);
    expect(((await rejected.json()) as any).detail.error).toBe("upstream_request_rejected");
    expect(await money(g, u.id)).toEqual({ balance: 100_000_000n, held: 0n });
  });
});

describe("mid-stream failure", () => {
  for (const [model, provider, how] of [...MODELS, ["deepseek-v3", "deepseek", "relayed"] as const]) {
    test(`${model} (${how}): a dropped stream ends with the upstream_error event and bills only the partial`, async () => {
      const { key, user: u } = await tenant(g, 200);
      // A long, pricey reply so the partial and the whole differ clearly.
      const full = await chat(g, key.key, { model, messages: user("long answer [sim:tokens=400]") });
      expect(full.status).toBe(200);
      const fullCharge = await chargeOf(g, full.headers.get("x-request-id")!);
      const before = await money(g, u.id);
      const res = await chatFetch(g, key.key, {
        model,
        stream: true,
        messages: user("long answer [sim:tokens=400] [sim:drop=2]"),
      });
      expect(res.status).toBe(200);
      const rid = res.headers.get("x-request-id")!;
      const text = await res.text();
      const events = parseSse(text).filter((e) => e.data !== null);
      expect(events.at(-1)!.data).toBe("[DONE]");
      const err = events.at(-2)!.json;
      expect(Object.keys(err)).toEqual(["error"]);
      expect(err.error.code).toBe("upstream_error");
      expect(typeof err.error.message).toBe("string");
      const streamed = events
        .slice(0, -2)
        .map((e) => e.json?.choices?.[0]?.delta?.content ?? "")
        .join("");
      expect(err.error.partial).toBe(streamed);
      expect(err.error.partial.length).toBeGreaterThan(0);
      expect(full.body.choices[0].message.content.startsWith(err.error.partial)).toBe(true);
      expect(err.error.partial.length).toBeLessThan(full.body.choices[0].message.content.length);
      // No finish chunk and no usage event before the failure.
      expect(events.some((e) => e.json?.choices?.[0]?.finish_reason)).toBe(false);
      expect(events.some((e) => e.json?.cost)).toBe(false);
      // Billing: the partial only, hold closed.
      const after = await money(g, u.id);
      expect(after.held).toBe(0n);
      const charged = before.balance - after.balance;
      expect(await chargeOf(g, rid)).toBe(charged);
      expect(charged).toBeGreaterThan(0n);
      expect(charged).toBeLessThan(fullCharge!);
      const ev = await usageOf(g, rid);
      expect(ev.provider).toBe(provider);
      expect(BigInt(ev.cost_micro)).toBe(charged);
      // Output billed covers what the client received (~4 characters a token).
      expect(Number(ev.completion_tokens)).toBeGreaterThanOrEqual(Math.ceil(err.error.partial.length / 4));
      expect(Number(ev.completion_tokens)).toBeLessThan(Number(full.body.usage.completion_tokens));
    });
  }

  test("a drop before any content: the error event with an empty partial, nothing billed", async () => {
    const { key, user: u } = await tenant(g, 100);
    for (const [model] of MODELS.slice(0, 2)) {
      // OpenAI and Anthropic send opening frames (role chunk, message_start) before the reset.
      const res = await chatFetch(g, key.key, { model, stream: true, messages: user("drop at once [sim:drop=0]") });
      expect(res.status).toBe(200);
      const events = parseSse(await res.text()).filter((e) => e.data !== null);
      expect(events.at(-1)!.data).toBe("[DONE]");
      expect(events.at(-2)!.json.error).toMatchObject({ code: "upstream_error", partial: "" });
    }
    // Gemini's first frame is content: the reset comes before any byte, so it is retried and
    // ends as an ordinary JSON 502 (docs/decisions.md #6).
    g.gw.sim!.reset();
    const res = await chatFetch(g, key.key, {
      model: "gemini-2.5-flash",
      stream: true,
      messages: user("drop at once [sim:drop=0]"),
    });
    expect(res.status).toBe(502);
    expect(((await res.json()) as any).detail.error).toBe("upstream_unavailable");
    expect(simChatCalls(g)).toEqual({ google: 3 });
    expect(await money(g, u.id)).toEqual({ balance: 100_000_000n, held: 0n });
  });

  test("the SDK sees the mid-stream failure as an error after the partial chunks", async () => {
    const { sdk: c } = await tenant(g, 100);
    const s = await c.chat.completions.create({
      model: "gpt-4o-mini",
      stream: true,
      messages: user("sdk drop [sim:tokens=200] [sim:drop=2]"),
    });
    let text = "";
    const err: any = await (async () => {
      for await (const ch of s) text += ch.choices[0]?.delta?.content ?? "";
    })().catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(text.length).toBeGreaterThan(0);
  });
});

describe("client disconnect", () => {
  for (const [model, provider] of MODELS) {
    test(`${model}: aborting mid-stream ends the client's stream; the upstream is read on to its usage, which is charged`, async () => {
      const { key, user: u } = await tenant(gp, 100);
      proxy.clear();
      const ac = new AbortController();
      const res = await chatFetch(
        gp,
        key.key,
        { model, stream: true, messages: user("slow stream [sim:tokens=300] [sim:chunk_ms=400]") },
        { signal: ac.signal },
      );
      expect(res.status).toBe(200);
      const rid = res.headers.get("x-request-id")!;
      const reader = res.body!.getReader();
      const dec = new TextDecoder();
      let got = "";
      while (!got.includes('"content":"Sim')) got += dec.decode((await reader.read()).value!, { stream: true });
      ac.abort();
      await reader.cancel().catch(() => {});
      const call = proxy.bodies.find((b) => b.path.startsWith(`/${provider}/`))!;
      // The rest (~8 frames × 400 ms) comes within STREAM_DRAIN_MS (5 s): the gateway reads it to the end.
      await call.ended;
      expect(call.response).toContain(
        provider === "google" ? '"finishReason"' : provider === "anthropic" ? "message_stop" : "[DONE]",
      );
      expect(await eventually(async () => (await money(gp, u.id)).held === 0n, 3000)).toBe(true);
      const charged = await chargeOf(gp, rid);
      expect(charged).not.toBeNull();
      expect((await money(gp, u.id)).balance).toBe(100_000_000n - charged!);
      const ev = await usageOf(gp, rid);
      expect(ev.provider).toBe(provider);
      expect(Number(ev.status)).toBe(499);
      // The upstream's own count of the whole answer, not an estimate of what the client saw.
      expect(Number(ev.completion_tokens)).toBe(300);
      expect(BigInt(ev.cost_micro)).toBe(charged!);
    });
  }
});

describe("client disconnect before the answer", () => {
  for (const stream of [true, false]) {
    test(`${stream ? "stream" : "JSON"}: aborting while the upstream thinks releases the hold at once, nothing charged`, async () => {
      const { key, user: u } = await tenant(gp, 100);
      proxy.clear();
      const ac = new AbortController();
      const pending = chatFetch(
        gp,
        key.key,
        { model: "gpt-4o-mini", stream, messages: user("think long [sim:latency=3000]") },
        { signal: ac.signal },
      ).catch((e) => e);
      expect(await eventually(async () => (await money(gp, u.id)).held > 0n, 2000)).toBe(true);
      const t0 = performance.now();
      ac.abort();
      expect(await pending).toBeInstanceOf(Error);
      // Well before the simulated 3 s are over: the gateway stopped waiting and gave the hold back.
      expect(await eventually(async () => (await money(gp, u.id)).held === 0n, 2000)).toBe(true);
      expect(performance.now() - t0).toBeLessThan(2000);
      expect(await eventually(() => proxy.bodies[0]?.aborted === true, 2000)).toBe(true);
      expect(await money(gp, u.id)).toEqual({ balance: 100_000_000n, held: 0n });
      const charges = await gp.gw.deps.db.query("select 1 from ledger_entries where user_id = $1 and kind = 'charge'", [
        u.id,
      ]);
      expect(charges).toHaveLength(0);
    });
  }
});

describe("keepalive", () => {
  test("a quiet stream gets SSE comments and still parses", async () => {
    // The production wiring uses 15 s; the same route with a 100 ms keepalive shows them.
    const app = createApp(g.gw.deps, [chatRoutes(g.gw.deps, { chat: g.gw.chat, keepaliveMs: 100 })]);
    app.listen({ port: 0, hostname: "127.0.0.1" });
    try {
      const { key } = await tenant(g, 100);
      for (const [model] of MODELS) {
        const res = await fetch(`http://127.0.0.1:${app.server!.port}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
          body: JSON.stringify({ model, stream: true, messages: user("quiet [sim:tokens=8] [sim:chunk_ms=250]") }),
        });
        const text = await res.text();
        expect([model, text.includes(": keepalive\n\n")]).toEqual([model, true]);
        checkSequence(text.replace(/: keepalive\n\n/g, ""), model);
      }
    } finally {
      await app.stop(true);
    }
  }, 15_000);
});
