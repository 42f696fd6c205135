/**
 * A client that hangs up on a stream must not dodge the bill. Real
 * sockets, real databases (PostgreSQL and PGlite), the simulator paced by its directives so the
 * hang-up lands where the test wants it. The request carries what an estimate is apt to miss: a
 * tool definition, an image, tool-call history and reasoning.
 *
 * - When the upstream's usage still arrives within STREAM_DRAIN_MS (here 3 s), the call is
 *   charged exactly that usage: the same as the same request answered in full.
 * - Otherwise it is charged the input as the hold estimates it (never less than the provider
 *   counts) plus the output received, never ~0.
 * Every case checks the books in SQL: one charge, its hold settled with it, nothing held.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { money, tenant } from "../support/chat";
import { checkBooks } from "../support/books";

setDefaultTimeout(30_000);

const DRAIN_MS = 3000;

const tool = {
  type: "function",
  function: {
    name: "lookup_weather",
    description: "Looks up the current weather of a city and returns temperature, humidity and a short forecast.",
    parameters: {
      type: "object",
      properties: { city: { type: "string", description: "City name" }, unit: { type: "string", enum: ["c", "f"] } },
      required: ["city"],
    },
  },
};
const image =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const forecast = JSON.stringify({
  city: "Seoul",
  temp_c: 21,
  humidity: 0.4,
  forecast: "Clear skies in the morning, light clouds in the afternoon, a mild breeze from the west. ".repeat(4),
});

/** Chat messages: a system prompt, an image, a tool call and its result, then the question. */
function chatMessages(directives: string) {
  return [
    {
      role: "system",
      content: "You are a careful travel assistant. Answer briefly and cite the tool results you used. ".repeat(3),
    },
    {
      role: "user",
      content: [
        { type: "text", text: "Where was this photo taken, and what is the weather there?" },
        { type: "image_url", image_url: { url: image } },
      ],
    },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "call_weather_1",
          type: "function",
          function: { name: "lookup_weather", arguments: JSON.stringify({ city: "Seoul", unit: "c" }) },
        },
      ],
    },
    { role: "tool", tool_call_id: "call_weather_1", content: forecast },
    { role: "user", content: `Now answer in one paragraph. ${directives}` },
  ];
}

const chatBody = (model: string, directives: string, stream: boolean) => ({
  model,
  stream,
  messages: chatMessages(directives),
  tools: [tool],
  reasoning_effort: "high",
});

const responsesBody = (model: string, directives: string, stream: boolean) => ({
  model,
  stream,
  instructions: "You are a careful travel assistant. Answer briefly and cite the tool results you used. ".repeat(3),
  tools: [
    {
      type: "function",
      name: tool.function.name,
      description: tool.function.description,
      parameters: tool.function.parameters,
    },
  ],
  reasoning: { effort: "high" },
  input: [
    {
      role: "user",
      content: [
        { type: "input_text", text: "Where was this photo taken, and what is the weather there?" },
        { type: "input_image", image_url: image },
      ],
    },
    {
      type: "function_call",
      call_id: "call_weather_1",
      name: "lookup_weather",
      arguments: JSON.stringify({ city: "Seoul", unit: "c" }),
    },
    { type: "function_call_output", call_id: "call_weather_1", output: forecast },
    { role: "user", content: `Now answer in one paragraph. ${directives}` },
  ],
});

type Surface = "chat" | "responses";
const path = (s: Surface) => (s === "chat" ? "/v1/chat/completions" : "/v1/responses");
const bodyFor = (s: Surface, model: string, directives: string, stream: boolean) =>
  s === "chat" ? chatBody(model, directives, stream) : responsesBody(model, directives, stream);

/** Opens a stream, reads until `until(text so far)` holds, hangs up; returns the request id and what was read. */
async function hangUp(
  g: TestGateway,
  key: string,
  s: Surface,
  body: unknown,
  until: (text: string) => boolean,
): Promise<{ rid: string; text: string }> {
  const ac = new AbortController();
  const res = await fetch(g.url + path(s), {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: ac.signal,
  });
  expect(res.status).toBe(200);
  const rid = res.headers.get("x-request-id")!;
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = "";
  while (!until(text)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended before the hang-up point: ${text}`);
    text += dec.decode(value, { stream: true });
  }
  ac.abort();
  await reader.cancel().catch(() => {});
  return { rid, text };
}

interface Booked {
  charge: bigint;
  hold: bigint;
  status: number;
  prompt: number;
  completion: number;
}

/** The call's books once its charge landed: exactly one charge, its hold settled with it, nothing held. */
async function booked(g: TestGateway, userId: string, rid: string): Promise<Booked> {
  const db = g.gw.deps.db;
  const deadline = performance.now() + DRAIN_MS + 8000;
  for (;;) {
    const [h] = await db.query<{ status: string }>("select status from holds where id = $1", [rid]);
    if (h && h.status !== "open") break;
    if (performance.now() > deadline) throw new Error(`hold ${rid} still ${h?.status ?? "missing"}`);
    await Bun.sleep(50);
  }
  expect((await money(g, userId)).held).toBe(0n);
  const charges = await db.query<{ a: string }>(
    "select (-amount_micro)::text as a from ledger_entries where request_id = $1 and kind = 'charge'",
    [rid],
  );
  expect(charges).toHaveLength(1);
  const [h] = await db.query<{ status: string; charged: string; amount: string }>(
    "select status, charged_micro::text as charged, amount_micro::text as amount from holds where id = $1",
    [rid],
  );
  expect(h!.status).toBe("settled");
  expect(h!.charged).toBe(charges[0]!.a);
  const [e] = await db.query<{ status: number; p: number; c: number; cost: string }>(
    "select status, prompt_tokens as p, completion_tokens as c, cost_micro::text as cost from usage_events where request_id = $1",
    [rid],
  );
  expect(e!.cost).toBe(charges[0]!.a);
  expect((await checkBooks(db, [userId])).violations).toEqual([]);
  return {
    charge: BigInt(charges[0]!.a),
    hold: BigInt(h!.amount),
    status: Number(e!.status),
    prompt: Number(e!.p),
    completion: Number(e!.c),
  };
}

/** The same request answered in full, as JSON (the simulator's usage is deterministic). */
async function reference(
  g: TestGateway,
  s: Surface,
  model: string,
  directives: string,
): Promise<{ prompt: number; completion: number; charge: bigint }> {
  const { user: u, key } = await tenant(g, 1000);
  const r = await g.call("POST", path(s), { token: key.key, body: bodyFor(s, model, directives, false) });
  expect(r.status).toBe(200);
  const b = await booked(g, u.id, r.headers.get("x-request-id")!);
  return { prompt: b.prompt, completion: b.completion, charge: b.charge };
}

const sawFinish = (t: string) => t.includes('"finish_reason":"stop"');
const sawContent = (s: Surface) => (t: string) =>
  s === "chat" ? /"content":"[^"]/.test(t) : t.includes("response.output_text.delta");
const sawStart = (s: Surface) => (t: string) =>
  s === "chat" ? t.includes('"role":"assistant"') : t.includes("response.in_progress");

for (const kind of await dbKinds()) {
  describe(`a client that hangs up on a stream (${kind})`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind, env: { STREAM_DRAIN_MS: String(DRAIN_MS) } });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("relayed chat stream: hanging up after finish_reason, before the usage chunk, is charged the upstream's usage", async () => {
      const directives = "[sim:tokens=40] [sim:chunk_ms=300]";
      const ref = await reference(g, "chat", "gpt-4o", directives);
      const { user: u, key } = await tenant(g, 1000);
      const { rid, text } = await hangUp(g, key.key, "chat", chatBody("gpt-4o", directives, true), sawFinish);
      expect(text).not.toContain('"usage":{');
      const b = await booked(g, u.id, rid);
      expect({ prompt: b.prompt, completion: b.completion, charge: b.charge }).toEqual(ref);
      expect(b.status).toBe(499);
    });

    // Frames far enough apart that the hang-up lands before the first content, close enough that
    // the rest (8 frames for OpenAI chat, some 15 for its Responses API; some 20 for Anthropic, whose
    // reasoning streams) fits the drain time.
    const quick: [Surface, string, number][] = [
      ["chat", "gpt-4o", 250], // relayed byte for byte
      ["chat", "claude-haiku-4-5", 100], // translated
      // OpenAI's own Responses stream, relayed: some 15 events, so closer together.
      ["responses", "gpt-4o", 150],
    ];
    for (const [s, model, gapMs] of quick) {
      test(`${s} ${model}: hanging up before any content is charged the upstream's usage when it arrives within the drain time`, async () => {
        const directives = `[sim:tokens=20] [sim:chunk_ms=${gapMs}]`;
        const ref = await reference(g, s, model, directives);
        const { user: u, key } = await tenant(g, 1000);
        const { rid, text } = await hangUp(g, key.key, s, bodyFor(s, model, directives, true), sawStart(s));
        expect(sawContent(s)(text)).toBe(false);
        const b = await booked(g, u.id, rid);
        expect({ prompt: b.prompt, completion: b.completion, charge: b.charge }).toEqual(ref);
      });
    }

    const slow: [Surface, string, "before content" | "mid-content"][] = [
      ["chat", "gpt-4o", "before content"],
      ["chat", "gpt-4o", "mid-content"],
      ["chat", "claude-haiku-4-5", "mid-content"],
      ["responses", "gpt-4o", "mid-content"],
    ];
    for (const [s, model, when] of slow) {
      test(`${s} ${model}: hanging up ${when} of a long stream is charged the whole input plus the output received, after at most the drain time`, async () => {
        // Frames 0.7 s apart: the usage would come seconds after the drain time.
        const directives = "[sim:tokens=200] [sim:chunk_ms=700]";
        const ref = await reference(g, s, model, directives);
        const { user: u, key } = await tenant(g, 1000);
        const { rid } = await hangUp(
          g,
          key.key,
          s,
          bodyFor(s, model, directives, true),
          when === "mid-content" ? sawContent(s) : sawStart(s),
        );
        const t0 = performance.now();
        const b = await booked(g, u.id, rid);
        expect(performance.now() - t0).toBeLessThan(DRAIN_MS + 3000);
        // Everything sent counts (tools, the image, the tool-call history): at least what the provider counts.
        expect(b.prompt).toBeGreaterThanOrEqual(ref.prompt);
        expect(b.status).toBe(499);
        if (when === "mid-content") expect(b.completion).toBeGreaterThan(0);
        expect(b.completion).toBeLessThan(ref.completion);
        // Never ~0 (the charge is priced on those tokens), never above the hold.
        expect(b.charge).toBeGreaterThan(0n);
        expect(b.charge).toBeLessThanOrEqual(b.hold);
      });
    }
  });
}
