/**
 * One conformance suite for every chat adapter, run against the upstream simulator over real
 * sockets: the same assertions for the OpenAI-compatible, Anthropic and Gemini protocols.
 * Directives (see the simulator contract) go in the last user message.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type CallContext, type Protocol } from "../../src/core/model/provider";
import { UpstreamError } from "../../src/core/upstream/error";
import type { ChatRequest, FunctionTool, StreamEvent, ToolCall } from "../../src/core/model/types";
import { chatProviderFor, embeddingProviderFor } from "../../src/providers";
import { startSimulator } from "../../src/sim";

type Sim = Awaited<ReturnType<typeof startSimulator>>;
type SimProvider = "openai" | "anthropic" | "google" | "deepseek" | "together" | "groq";

interface Case {
  protocol: Protocol;
  provider: SimProvider;
  model: string;
  /** How the provider caches prompts. */
  caching: "automatic" | "explicit";
}

const CASES: Case[] = [
  { protocol: "openai", provider: "openai", model: "gpt-4o-mini", caching: "automatic" },
  { protocol: "anthropic", provider: "anthropic", model: "claude-sonnet-4-5", caching: "explicit" },
  { protocol: "gemini", provider: "google", model: "gemini-2.5-flash", caching: "automatic" },
];

let sim: Sim;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  await sim?.stop();
});

const weather: FunctionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather for a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

function ctxOf(c: Case, over: Partial<CallContext> = {}): CallContext {
  return {
    providerId: c.provider,
    baseUrl: sim.baseUrl(c.provider),
    apiKey: "sim-key",
    firstByteTimeoutMs: 5000,
    idleTimeoutMs: 5000,
    ...over,
  };
}

function ask(c: Case, text: string, over: Partial<ChatRequest> = {}): ChatRequest {
  return { model: c.model, messages: [{ role: "user", content: text }], max_tokens: 256, ...over };
}

async function drain(stream: AsyncIterable<StreamEvent>): Promise<{ events: StreamEvent[]; error?: any }> {
  const events: StreamEvent[] = [];
  try {
    for await (const ev of stream) events.push(ev);
    return { events };
  } catch (error) {
    return { events, error };
  }
}

const textOf = (events: StreamEvent[]) => events.map((e) => (e.type === "text" ? e.text : "")).join("");

/** Reassembles streamed tool-call deltas into tool calls (by index). */
function toolCallsOf(events: StreamEvent[]): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const e of events) {
    if (e.type !== "tool_call") continue;
    const call = (calls[e.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
    if (e.id) call.id = e.id;
    if (e.name) call.function.name = e.name;
    if (e.arguments) call.function.arguments += e.arguments;
  }
  return calls;
}

async function expectUpstreamError(p: Promise<unknown>): Promise<UpstreamError> {
  const err = await p.then(
    () => undefined,
    (e) => e,
  );
  expect(err).toBeInstanceOf(UpstreamError);
  return err as UpstreamError;
}

function callsTo(provider: SimProvider): number {
  const calls = (sim.stats() as { calls?: Record<string, Record<string, number>> }).calls?.[provider] ?? {};
  return Object.values(calls).reduce((a, b) => a + b, 0);
}

/** About 1,500 tokens of stable text (the simulator counts ~4 characters a token). */
function longPrefix(tag: string): string {
  return Array.from({ length: 150 }, (_, i) => `Rule ${i} of ${tag}: answer briefly, politely and precisely.`).join(
    " ",
  );
}

for (const c of CASES) {
  describe(`${c.protocol} adapter (${c.provider}) against the simulator`, () => {
    const provider = chatProviderFor(c.protocol);

    test("simple chat: text, stop, usage, id", async () => {
      const r = await provider.chat(ask(c, "Hello conformance"), ctxOf(c));
      expect(r.content).toContain("Hello conformance");
      expect(r.finishReason).toBe("stop");
      expect(r.toolCalls).toBeUndefined();
      expect(r.id).toBeTruthy();
      expect(r.usage.promptTokens).toBeGreaterThan(0);
      expect(r.usage.completionTokens).toBeGreaterThan(0);
      expect(r.usage.cachedTokens).toBe(0);
    });

    test("stream: the same reply as text deltas, then finish, then usage", async () => {
      const req = ask(c, "Stream conformance [sim:tokens=40]");
      const whole = await provider.chat(req, ctxOf(c));
      const { events, error } = await drain(await provider.chatStream(req, ctxOf(c)));
      expect(error).toBeUndefined();
      expect(events.filter((e) => e.type === "text").length).toBeGreaterThan(1);
      expect(textOf(events)).toBe(whole.content!);
      expect(events.at(-2)).toEqual({ type: "finish", reason: "stop" });
      const usage = events.at(-1)!;
      expect(usage.type).toBe("usage");
      if (usage.type === "usage") expect(usage.usage).toEqual(whole.usage);
    });

    test("tools: a forced tool call (named and required), chat and stream", async () => {
      for (const tool_choice of [
        { type: "function", function: { name: "get_weather" } } as const,
        "required" as const,
      ]) {
        const req = ask(c, "What is the weather in Seoul?", { tools: [weather], tool_choice });
        const r = await provider.chat(req, ctxOf(c));
        expect(r.finishReason).toBe("tool_calls");
        expect(r.toolCalls?.length).toBe(1);
        const call = r.toolCalls![0]!;
        expect(call.function.name).toBe("get_weather");
        expect(call.id).toBeTruthy();
        expect(typeof JSON.parse(call.function.arguments)).toBe("object");

        const { events, error } = await drain(await provider.chatStream(req, ctxOf(c)));
        expect(error).toBeUndefined();
        const streamed = toolCallsOf(events);
        expect(streamed.length).toBe(1);
        expect(streamed[0]!.function.name).toBe("get_weather");
        expect(streamed[0]!.id).toBeTruthy();
        expect(JSON.parse(streamed[0]!.function.arguments)).toEqual(JSON.parse(call.function.arguments));
        expect(events.at(-2)).toEqual({ type: "finish", reason: "tool_calls" });
      }
    });

    test("tool round trip: the assistant call and the tool result are accepted", async () => {
      const r = await provider.chat(
        {
          model: c.model,
          max_tokens: 128,
          tools: [weather],
          messages: [
            { role: "system", content: "You are terse." },
            { role: "user", content: "Weather in Seoul?" },
            {
              role: "assistant",
              content: null,
              tool_calls: [
                { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Seoul"}' } },
              ],
            },
            { role: "tool", tool_call_id: "call_1", content: '{"temp_c":21}' },
            { role: "user", content: "Thanks, summarise round trip" },
          ],
        },
        ctxOf(c),
      );
      expect(r.finishReason).toBe("stop");
      expect(r.content).toContain("summarise round trip");
    });

    test("reasoning_effort: thinking is billed as completion tokens, never shown as text", async () => {
      const plain = await provider.chat(ask(c, "Think about it [sim:tokens=20]", { max_tokens: 16000 }), ctxOf(c));
      const none = await provider.chat(
        ask(c, "Think about it [sim:tokens=20]", { max_tokens: 16000, reasoning_effort: "none" }),
        ctxOf(c),
      );
      expect(none.usage.reasoningTokens).toBe(0);
      const req = ask(c, "Think about it [sim:tokens=20]", { max_tokens: 16000, reasoning_effort: "medium" });
      const r = await provider.chat(req, ctxOf(c));
      expect(r.content).toBe(plain.content);
      expect(r.usage.completionTokens).toBeGreaterThan(plain.usage.completionTokens);
      // Anthropic folds thinking into output_tokens without a separate count (unless the
      // upstream sends output_tokens_details): only OpenAI and Gemini report it apart.
      if (c.protocol !== "anthropic") {
        expect(r.usage.reasoningTokens).toBeGreaterThan(0);
        expect(r.usage.completionTokens).toBe(plain.usage.completionTokens + r.usage.reasoningTokens);
      }
      const { events, error } = await drain(await provider.chatStream(req, ctxOf(c)));
      expect(error).toBeUndefined();
      expect(textOf(events)).toBe(r.content!);
      const usage = events.at(-1);
      if (usage?.type === "usage") expect(usage.usage).toEqual(r.usage);
      else throw new Error("no usage event");
    });

    test("stop reason length: max_tokens below the reply length, chat and stream", async () => {
      const req = ask(c, "Long one [sim:tokens=300]", { max_tokens: 12 });
      const r = await provider.chat(req, ctxOf(c));
      expect(r.finishReason).toBe("length");
      expect(r.usage.completionTokens).toBeLessThanOrEqual(12);
      const { events, error } = await drain(await provider.chatStream(req, ctxOf(c)));
      expect(error).toBeUndefined();
      expect(events.at(-2)).toEqual({ type: "finish", reason: "length" });
    });

    test("usage: cached prompt tokens on a repeated prefix", async () => {
      const tag = `${c.provider}-${crypto.randomUUID()}`;
      const system: ChatRequest["messages"][number] =
        c.caching === "explicit"
          ? { role: "system", content: [{ type: "text", text: longPrefix(tag), cache_control: { type: "ephemeral" } }] }
          : { role: "system", content: longPrefix(tag) };
      const first = await provider.chat(
        { model: c.model, max_tokens: 64, messages: [system, { role: "user", content: "first question" }] },
        ctxOf(c),
      );
      expect(first.usage.cachedTokens).toBe(0);
      if (c.caching === "explicit") {
        expect(first.usage.cacheWriteTokens).toBeGreaterThan(1000);
        expect(first.usage.promptTokens).toBeGreaterThanOrEqual(first.usage.cacheWriteTokens);
      }
      const req2: ChatRequest = {
        model: c.model,
        max_tokens: 64,
        messages: [system, { role: "user", content: "second question" }],
      };
      const second = await provider.chat(req2, ctxOf(c));
      expect(second.usage.cachedTokens).toBeGreaterThan(1000);
      expect(second.usage.promptTokens).toBeGreaterThanOrEqual(
        second.usage.cachedTokens + second.usage.cacheWriteTokens,
      );
      if (c.caching === "explicit") expect(second.usage.cacheWriteTokens).toBe(0);

      // The streamed usage reports the same cache split.
      const { events } = await drain(await provider.chatStream(req2, ctxOf(c)));
      const usage = events.at(-1);
      expect(usage?.type).toBe("usage");
      if (usage?.type === "usage") expect(usage.usage.cachedTokens).toBe(second.usage.cachedTokens);
    });

    test("[sim:fail=503] → transient, one upstream call, no retry inside the adapter", async () => {
      const before = callsTo(c.provider);
      const err = await expectUpstreamError(provider.chat(ask(c, "x [sim:fail=503]"), ctxOf(c)));
      expect(err.kind).toBe("transient");
      expect(err.status).toBe(503);
      expect(err.retryable).toBe(true);
      expect(callsTo(c.provider) - before).toBe(1);
      const streamErr = await expectUpstreamError(provider.chatStream(ask(c, "y [sim:fail=503]"), ctxOf(c)));
      expect(streamErr.kind).toBe("transient");
    });

    test("[sim:fail=429] → rate_limited with retryAfter", async () => {
      const err = await expectUpstreamError(provider.chat(ask(c, "x [sim:fail=429]"), ctxOf(c)));
      expect(err.kind).toBe("rate_limited");
      expect(err.status).toBe(429);
      expect(err.retryAfterMs).toBe(1000);
      const streamErr = await expectUpstreamError(provider.chatStream(ask(c, "y [sim:fail=429]"), ctxOf(c)));
      expect(streamErr.kind).toBe("rate_limited");
      expect(streamErr.retryAfterMs).toBe(1000);
    });

    test("[sim:fail=400] → rejected with the vendor body as detail", async () => {
      const err = await expectUpstreamError(provider.chat(ask(c, "x [sim:fail=400]"), ctxOf(c)));
      expect(err.kind).toBe("rejected");
      expect(err.status).toBe(400);
      expect(err.retryable).toBe(false);
      expect(typeof err.detail).toBe("object");
      expect(err.detail).toHaveProperty("error");
    });

    test("[sim:fail=503x1] fails once, then the identical call succeeds", async () => {
      const req = ask(c, `once ${crypto.randomUUID()} [sim:fail=503x1]`);
      expect((await expectUpstreamError(provider.chat(req, ctxOf(c)))).kind).toBe("transient");
      expect((await provider.chat(req, ctxOf(c))).finishReason).toBe("stop");
    });

    test("[sim:drop=2] → two content chunks, then truncated (never a finish)", async () => {
      const { events, error } = await drain(
        await provider.chatStream(ask(c, "drop me [sim:tokens=80] [sim:drop=2]"), ctxOf(c)),
      );
      expect(events.filter((e) => e.type === "text").length).toBe(2);
      expect(events.some((e) => e.type === "finish" || e.type === "usage")).toBe(false);
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error.kind).toBe("truncated");
    });

    test("[sim:hang] → timeout at the first-byte deadline (chat and stream)", async () => {
      const t0 = Date.now();
      const err = await expectUpstreamError(
        provider.chat(ask(c, "x [sim:hang]"), ctxOf(c, { firstByteTimeoutMs: 200 })),
      );
      expect(err.kind).toBe("timeout");
      expect(Date.now() - t0).toBeLessThan(2000);
      const streamErr = await expectUpstreamError(
        (async () =>
          drain(await provider.chatStream(ask(c, "y [sim:hang]"), ctxOf(c, { firstByteTimeoutMs: 200 }))).then((r) =>
            Promise.reject(r.error),
          ))(),
      );
      expect(streamErr.kind).toBe("timeout");
    });

    test("idle deadline: a stream that pauses longer than idleTimeoutMs → timeout", async () => {
      const { events, error } = await drain(
        await provider.chatStream(
          ask(c, "slow [sim:tokens=60] [sim:chunk_ms=600]"),
          ctxOf(c, { idleTimeoutMs: 200, firstByteTimeoutMs: 2000 }),
        ),
      );
      expect(events.some((e) => e.type === "finish")).toBe(false);
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error.kind).toBe("timeout");
    });

    test("abort before the answer: rejects with the caller's reason, quickly", async () => {
      const ac = new AbortController();
      const reason = new Error("client gone");
      setTimeout(() => ac.abort(reason), 100);
      const t0 = Date.now();
      const err = await provider.chat(ask(c, "x [sim:latency=3000]"), ctxOf(c, { signal: ac.signal })).catch((e) => e);
      expect(err).toBe(reason);
      expect(Date.now() - t0).toBeLessThan(1500);
    });

    test("abort mid-stream: the iteration ends with the caller's reason", async () => {
      const ac = new AbortController();
      const reason = new Error("client gone mid-stream");
      const stream = await provider.chatStream(
        ask(c, "x [sim:tokens=80] [sim:chunk_ms=150]"),
        ctxOf(c, { signal: ac.signal }),
      );
      const seen: StreamEvent[] = [];
      const err = await (async () => {
        for await (const ev of stream) {
          seen.push(ev);
          if (seen.length === 1) ac.abort(reason);
        }
      })().catch((e) => e);
      expect(err).toBe(reason);
      expect(seen.some((e) => e.type === "finish")).toBe(false);
    });
  });
}

describe("openai-compatible extras against the simulator", () => {
  const c = CASES[0]!;

  test("openRawStream: raw SSE bytes with the usage chunk and [DONE]", async () => {
    const raw = await chatProviderFor("openai").openRawStream!(ask(c, "raw relay"), ctxOf(c));
    const text = await new Response(raw).text();
    expect(text).toContain('"choices":[]');
    expect(text).toContain('"usage":{');
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
  });

  test("openRawStream: a failing upstream throws before any byte", async () => {
    const err = await expectUpstreamError(
      chatProviderFor("openai").openRawStream!(ask(c, "raw [sim:fail=429]"), ctxOf(c)),
    );
    expect(err.kind).toBe("rate_limited");
  });

  test("embeddings: deterministic vectors and prompt tokens", async () => {
    const embed = embeddingProviderFor("openai")!;
    const a = await embed.embed(["hello world", "goodbye"], "text-embedding-3-small", ctxOf(c));
    const b = await embed.embed(["hello world"], "text-embedding-3-small", ctxOf(c));
    expect(a.vectors.length).toBe(2);
    expect(a.vectors[0]!.length).toBeGreaterThan(0);
    expect(b.vectors[0]).toEqual(a.vectors[0]!);
    expect(a.promptTokens).toBeGreaterThan(0);
  });

  test("embeddings over both protocols: the same text gives the same vector, dimensions honoured", async () => {
    const gemini: Case = {
      protocol: "gemini",
      provider: "google",
      model: "gemini-embedding-001",
      caching: "automatic",
    };
    const viaOpenAI = await embeddingProviderFor("openai")!.embed(
      ["hello world", "goodbye"],
      "text-embedding-3-small",
      ctxOf(c),
      { dimensions: 32 },
    );
    const viaGemini = await embeddingProviderFor("gemini")!.embed(
      ["hello world", "goodbye"],
      "gemini-embedding-001",
      ctxOf(gemini),
      { dimensions: 32 },
    );
    expect(viaGemini.vectors).toEqual(viaOpenAI.vectors);
    expect(viaGemini.vectors[0]).toHaveLength(32);
    expect(viaGemini.promptTokens).toBeNull();
    const one = await embeddingProviderFor("gemini")!.embed(["goodbye"], "gemini-embedding-001", ctxOf(gemini), {
      dimensions: 32,
    });
    expect(one.vectors).toEqual([viaOpenAI.vectors[1]!]);
  });

  for (const provider of ["deepseek", "together", "groq"] as const) {
    test(`the same adapter serves ${provider}: chat and stream`, async () => {
      const cc: Case = {
        protocol: "openai",
        provider,
        model: provider === "groq" ? "llama-3.3-70b" : "deepseek-v3",
        caching: "automatic",
      };
      const r = await chatProviderFor("openai").chat(ask(cc, "compat check"), ctxOf(cc));
      expect(r.content).toContain("compat check");
      const { events, error } = await drain(
        await chatProviderFor("openai").chatStream(ask(cc, "compat check"), ctxOf(cc)),
      );
      expect(error).toBeUndefined();
      expect(textOf(events)).toBe(r.content!);
    });
  }
});
