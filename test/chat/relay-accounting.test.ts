/**
 * One OpenAI-compatible answer, accounted the same whether it was asked as JSON or relayed as a
 * stream: the usage event (prompt, completion, cached and cache-write tokens) and the charge
 * are equal, and the finish reason is mapped alike (a legacy `function_call` is `tool_calls`;
 * the relayed stream's answer, replayed from the response cache, says so). The upstream is a
 * fixed answer served over a real socket, as a compatible upstream that reports cache writes
 * sends it.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { chargeOf, chat, chatFetch, eventually, fastUser, usageOf, user } from "../support/chat";

setDefaultTimeout(30_000);

const USAGE = {
  prompt_tokens: 1500,
  completion_tokens: 42,
  total_tokens: 1542,
  prompt_tokens_details: { cached_tokens: 1024 },
  completion_tokens_details: { reasoning_tokens: 0 },
  cache_creation_input_tokens: 200,
};
const head = { id: "chatcmpl-fixed", created: 1_700_000_000, model: "gpt-4o-mini" };
const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ ...head, object: "chat.completion.chunk", choices, ...extra })}\n\n`;
const STREAM = [
  chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]),
  chunk([{ index: 0, delta: { content: "Looking it up." }, finish_reason: null }]),
  chunk([{ index: 0, delta: {}, finish_reason: "function_call" }]),
  chunk([], { usage: USAGE }),
  "data: [DONE]\n\n",
].join("");
const JSON_ANSWER = {
  ...head,
  object: "chat.completion",
  choices: [{ index: 0, message: { role: "assistant", content: "Looking it up." }, finish_reason: "function_call" }],
  usage: USAGE,
};

const upstream = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const body = (await req.json()) as { stream?: boolean };
    return body.stream
      ? new Response(STREAM, { headers: { "content-type": "text/event-stream" } })
      : Response.json(JSON_ANSWER);
  },
});

let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway({
    env: { OPENAI_BASE_URL: `http://127.0.0.1:${upstream.port}`, OPENAI_API_KEY: "test-key" },
  });
}, 60_000);
afterAll(async () => {
  await g?.stop();
  upstream.stop(true);
});

const body = (stream: boolean, q = "look it up") => ({
  model: "gpt-4o-mini",
  stream,
  provider: { only: ["openai"] },
  messages: user(q),
});
const tokens = (e: any) => ({
  provider: e.provider,
  prompt: e.prompt_tokens,
  completion: e.completion_tokens,
  cached: e.cached_tokens,
  written: e.cache_write_tokens,
  status: e.status,
});

describe("the same upstream answer, JSON and relayed", () => {
  test("one usage event and one charge each, equal", async () => {
    const u = await fastUser(g, { creditKrw: 100 });
    const k = await g.newKey(u);
    const json = await chat(g, k.key, body(false));
    expect(json.status).toBe(200);
    const streamed = await chatFetch(g, k.key, body(true));
    expect(streamed.status).toBe(200);
    const text = await streamed.text();
    expect(text).toContain('"finish_reason":"function_call"'); // the relayed bytes, as they came
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    const [a, b] = [json.headers.get("x-request-id")!, streamed.headers.get("x-request-id")!];
    const [ea, eb] = [await usageOf(g, a), await usageOf(g, b)];
    expect(tokens(ea)).toEqual({
      provider: "openai",
      prompt: 1500,
      completion: 42,
      cached: 1024,
      written: 200,
      status: 200,
    });
    expect(tokens(eb)).toEqual(tokens(ea));
    expect([ea.streamed, eb.streamed]).toEqual([false, true]);
    const charge = await chargeOf(g, a);
    expect(charge).not.toBeNull();
    expect(await chargeOf(g, b)).toBe(charge);
    expect(json.body.usage.cache_creation_input_tokens).toBe(200);
  });

  test("the finish reason: function_call is tool_calls, asked as JSON or relayed (replayed from the cache)", async () => {
    const u = await fastUser(g, { creditKrw: 100 });
    const plain = await g.newKey(u);
    const direct = await chat(g, plain.key, body(false, "which finish"));
    expect(direct.body.choices[0].finish_reason).toBe("tool_calls");

    const caching = await g.newKey(u, { response_cache_mode: "exact" });
    const streamed = await chatFetch(g, caching.key, body(true, "which finish"));
    await streamed.text();
    const stored = async () =>
      Number(
        (
          await g.gw.deps.db.query<{ n: string }>("select count(*)::text as n from response_cache where key_id = $1", [
            caching.id,
          ])
        )[0]!.n,
      ) > 0;
    expect(await eventually(stored)).toBe(true);
    const replayed = await chat(g, caching.key, body(false, "which finish"));
    expect(replayed.body.cached).toBe(true);
    expect(replayed.body.choices[0].finish_reason).toBe(direct.body.choices[0].finish_reason);
    expect(replayed.body.choices[0].message.content).toBe("Looking it up.");
  });
});
