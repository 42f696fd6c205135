/**
 * The Responses relay (docs/responses.md, "Relayed or translated"), seen through a recording
 * proxy in front of the simulator: a Responses call on an OpenAI model goes to OpenAI's
 * `/v1/responses` as the client's own body (reasoning items and `encrypted_content` byte for
 * byte, PII masked in the client's texts, `store: false`), and its answer and stream come back
 * as OpenAI sent them, values restored, with the gateway's cost (headers; the stream's closing
 * event); the books hold
 * one charge each. Another provider's model keeps the translation.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { proxiedGateway, type RecordingProxy } from "../support/chat";
import type { TestGateway } from "../harness";
import { microToKrwRounded } from "../../src/lib/money";
import { books } from "../messages/helpers";
import { parseSse, postResponses, tenant } from "./helpers";

setDefaultTimeout(30_000);

let g: TestGateway;
let proxy: RecordingProxy;
beforeAll(async () => {
  ({ g, proxy } = await proxiedGateway(["openai", "anthropic"]));
}, 60_000);
afterAll(async () => {
  await g?.stop();
  proxy?.stop();
});

const EMAIL = "kim.minsu@example.com";
const REASONING = {
  type: "reasoning",
  id: "rs_68a1f0c2d9e4",
  summary: [{ type: "summary_text", text: `Looking up ${EMAIL} in the files.` }],
  encrypted_content: "gAAAAABo8xQ1sim-opaque-reasoning+/==",
};
const tools = [
  {
    type: "function",
    name: "shell",
    description: "Runs a command",
    parameters: { type: "object", properties: { command: { type: "array", items: { type: "string" } } } },
    strict: false,
  },
];

/** A Codex-like second turn: its shell call has run, the result and a new user line come back. */
function secondTurn(stream: boolean) {
  return {
    model: "gpt-5.2",
    instructions: `You are Codex. The user's e-mail address is ${EMAIL}.`,
    input: [
      { type: "message", role: "user", content: [{ type: "input_text", text: "find my address in the notes" }] },
      REASONING,
      { type: "function_call", call_id: "call_1", name: "shell", arguments: '{"command":["grep","-r","notes"]}' },
      { type: "function_call_output", call_id: "call_1", output: "notes.txt: contact me" },
      { type: "message", role: "user", content: [{ type: "input_text", text: `Write ${EMAIL} back [sim:tokens=40]` }] },
    ],
    tools,
    tool_choice: "auto",
    parallel_tool_calls: false,
    reasoning: { effort: "low", summary: "auto" },
    text: { verbosity: "low" },
    include: ["reasoning.encrypted_content"],
    store: false,
    prompt_cache_key: "codex-session-1",
    stream,
    provider: { allow_fallbacks: true },
    trace_id: "t-1",
  };
}

/** What OpenAI must get: the client's body, gateway fields gone, the e-mail masked, the cap set. */
function sentTurn(stream: boolean) {
  const { provider: _p, trace_id: _t, stream: _s, ...b }: any = structuredClone(secondTurn(stream));
  b.instructions = "You are Codex. The user's e-mail address is [EMAIL_1].";
  b.input[4].content[0].text = "Write [EMAIL_1] back [sim:tokens=40]";
  b.max_output_tokens = 4096;
  return stream ? { ...b, stream: true } : b;
}

function expectSent(stream: boolean) {
  expect(proxy.bodies).toHaveLength(1);
  const call = proxy.bodies[0]!;
  expect(call.path).toBe("/openai/v1/responses");
  expect(call.body).toEqual(sentTurn(stream));
  // The reasoning item, its summary included, byte for byte: OpenAI decrypts it as it was.
  expect(call.raw).toContain(JSON.stringify(REASONING));
  expect(call.raw.split(EMAIL)).toHaveLength(2); // only inside the reasoning summary
}

const restore = (s: string) => s.replaceAll("[EMAIL_1]", EMAIL);

/** Splits every output-text delta into pieces of 3 characters, so a placeholder spans several deltas. */
function splitTextDeltas(event: string): string[] {
  const frame = parseSse(event)[0];
  if (frame?.event !== "response.output_text.delta") return [event];
  const text: string = frame.json.delta;
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 3)
    out.push(
      `event: response.output_text.delta\ndata: ${JSON.stringify({ ...frame.json, delta: text.slice(i, i + 3) })}\n\n`,
    );
  return out;
}
const events = (text: string) => text.split(/(?<=\n\n)/).filter((e) => e.trim() && !e.startsWith(":"));

describe("a Responses call on an OpenAI model", () => {
  test("JSON: the client's body relayed, masked in place; OpenAI's answer restored, the cost in headers", async () => {
    const { user, key } = await tenant(g);
    proxy.clear();
    const res = await postResponses(g, key.key, secondTurn(false));
    expect(res.status).toBe(200);
    expectSent(false);
    const upstream = JSON.parse(proxy.bodies[0]!.response);
    expect(upstream.output[0].encrypted_content).toMatch(/^gAAAA/);
    const text = upstream.output[1].content[0].text;
    expect(text).toContain("[EMAIL_1]");
    const got: any = await res.json();
    const b = await books(g, user.id);
    expect(b.charges).toHaveLength(1);
    expect(b.events).toHaveLength(1);
    // OpenAI's answer with its placeholders restored (the instructions' echo and the text).
    const restored = JSON.parse(restore(proxy.bodies[0]!.response));
    expect(restored.output[0]).toEqual(upstream.output[0]);
    expect(got.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(got).toEqual({
      ...restored,
      id: got.id,
      provider: "openai",
      cached: false,
    });
    // The cost rides in the headers, as on a translated JSON answer.
    expect(Number(res.headers.get("x-cost-krw"))).toBe(microToKrwRounded(BigInt(b.events[0].cost_micro)));
    expect(got.output[1].content[0].text).toContain(EMAIL);
    expect(b.events[0]).toMatchObject({
      status: 200,
      api: "responses",
      provider: "openai",
      prompt_tokens: upstream.usage.input_tokens,
      completion_tokens: upstream.usage.output_tokens,
    });
    expect(BigInt(b.charges[0].amount_micro)).toBe(-BigInt(b.events[0].cost_micro));
    expect(b.held).toBe(0n);
  });

  test("stream: OpenAI's own events, values restored, the closing event with the cost, then [DONE]", async () => {
    const { user, key } = await tenant(g);
    proxy.clear();
    const res = await postResponses(g, key.key, secondTurn(true));
    expect(res.status).toBe(200);
    const got = events(await res.text());
    await proxy.bodies[0]!.ended;
    expectSent(true);
    const sent = events(proxy.bodies[0]!.response);
    // OpenAI's stream has no [DONE]; the gateway's Responses streams end with one (decisions #5).
    expect(got).toHaveLength(sent.length + 1);
    expect(got.pop()).toBe("data: [DONE]\n\n");
    // Every event but the last is OpenAI's, its placeholders restored, the response id the gateway's.
    const ourId = parseSse(got[0]!)[0]!.json.response.id;
    expect(ourId).toMatch(/^resp_[0-9a-f]{32}$/);
    const theirId = parseSse(sent[0]!)[0]!.json.response.id;
    expect(got.slice(0, -1)).toEqual(sent.slice(0, -1).map((e) => restore(e).replace(theirId, ourId)));
    const upstream = parseSse(sent.at(-1)!)[0]!.json;
    const mine = parseSse(got.at(-1)!)[0]!.json;
    const b = await books(g, user.id);
    expect(b.charges).toHaveLength(1);
    expect(mine.type).toBe("response.completed");
    expect(mine.response.output[0]).toEqual(upstream.response.output[0]); // the reasoning item as it came
    expect(mine).toEqual({
      ...upstream,
      response: {
        ...JSON.parse(restore(JSON.stringify(upstream.response))),
        id: ourId,
        provider: "openai",
        cached: false,
        cost: expect.objectContaining({ krw: microToKrwRounded(BigInt(b.events[0].cost_micro)) }),
      },
    });
    const text = parseSse(got.join(""))
      .filter((f) => f.event === "response.output_text.delta")
      .map((f) => f.json.delta)
      .join("");
    expect(text).toContain(EMAIL);
    expect(b.events[0]).toMatchObject({ status: 200, prompt_tokens: upstream.response.usage.input_tokens });
    expect(b.held).toBe(0n);
  });

  test("stream: a placeholder split across deltas and network writes reaches the client whole", async () => {
    const { key } = await tenant(g, 10_000);
    proxy.clear();
    proxy.reshape = splitTextDeltas;
    proxy.pieceBytes = 16;
    try {
      const res = await postResponses(g, key.key, secondTurn(true));
      expect(res.status).toBe(200);
      const got = events(await res.text());
      await proxy.bodies[0]!.ended;
      const sent = events(proxy.bodies[0]!.response);
      const deltas = (evs: string[]) =>
        parseSse(evs.join(""))
          .filter((f) => f.event === "response.output_text.delta")
          .map((f) => f.json.delta as string);
      // The split really cut the placeholder, and the client reads the value whole.
      expect(deltas(sent).some((d) => /\[[A-Z_0-9]*$/.test(d))).toBe(true);
      expect(deltas(got).join("")).toBe(restore(deltas(sent).join("")));
      expect(deltas(got).join("")).toContain(`Write ${EMAIL} back`);
      expect(deltas(got).some((d) => d.includes("[EMAIL"))).toBe(false);
      const done = parseSse(got.join("")).find((f) => f.event === "response.output_text.done")!;
      expect(done.json.text).toBe(deltas(got).join(""));
    } finally {
      proxy.reshape = null;
      proxy.pieceBytes = 0;
    }
  });

  test("without PII the stream is OpenAI's bytes, but the closing event", async () => {
    const { key } = await tenant(g);
    proxy.clear();
    const res = await postResponses(g, key.key, {
      model: "gpt-5.2",
      input: "hello relay [sim:tokens=30]",
      stream: true,
    });
    const got = events(await res.text());
    await proxy.bodies[0]!.ended;
    const sent = events(proxy.bodies[0]!.response);
    expect(got.slice(2, -2)).toEqual(sent.slice(2, -1));
    expect(parseSse(got.at(-2)!)[0]!.json.response.cost.krw).toBeGreaterThanOrEqual(0);
  });

  test("a stream the upstream drops is billed once and ends with the gateway's error", async () => {
    const { user, key } = await tenant(g);
    proxy.clear();
    const res = await postResponses(g, key.key, {
      model: "gpt-5.2",
      input: "[sim:drop=2] [sim:tokens=40] hi",
      stream: true,
    });
    const frames = parseSse(await res.text());
    const last = frames.at(-1)!;
    expect(last.data).toBe("[DONE]");
    expect(frames.at(-2)!.json.error.code).toBe("upstream_error");
    const b = await books(g, user.id);
    expect(b.charges.length).toBeLessThanOrEqual(1);
    expect(b.held).toBe(0n);
  });
});

describe("a Responses call on another provider's model", () => {
  test("keeps the translation", async () => {
    const { key } = await tenant(g);
    proxy.clear();
    const res = await postResponses(g, key.key, {
      model: "claude-haiku-4-5",
      input: "hi",
      include: ["reasoning.encrypted_content"],
    });
    expect(res.status).toBe(200);
    expect(proxy.bodies[0]!.path).toBe("/anthropic/v1/messages");
    expect(((await res.json()) as any).object).toBe("response");
  });
});

describe("a Responses-only model (gpt-5.3-codex)", () => {
  test("answers a Responses call, relayed to OpenAI's /v1/responses", async () => {
    const { user, key } = await tenant(g);
    proxy.clear();
    const res = await postResponses(g, key.key, { model: "gpt-5.3-codex", input: "hi codex" });
    expect(res.status).toBe(200);
    expect(proxy.bodies.map((c) => c.path)).toEqual(["/openai/v1/responses"]);
    const got: any = await res.json();
    expect(got.model).toBe("gpt-5.3-codex");
    expect(got.output.at(-1).content[0].text).toContain("hi codex");
    expect((await books(g, user.id)).charges).toHaveLength(1);
  });

  test("is refused on chat completions and Messages with a 400 naming the Responses API, before any hold", async () => {
    const { user, key } = await tenant(g);
    proxy.clear();
    const chat = await fetch(g.url + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-5.3-codex", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(chat.status).toBe(400);
    const body: any = await chat.json();
    expect(JSON.stringify(body)).toContain("/v1/responses");
    const messages = await fetch(g.url + "/v1/messages", {
      method: "POST",
      headers: { "x-api-key": key.key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "gpt-5.3-codex", max_tokens: 100, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(messages.status).toBe(400);
    expect(JSON.stringify(await messages.json())).toContain("Responses API");
    expect(proxy.bodies).toHaveLength(0);
    const b = await books(g, user.id);
    expect(b.holds).toHaveLength(0);
    expect(b.charges).toHaveLength(0);
  });
});
