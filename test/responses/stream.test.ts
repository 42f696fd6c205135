/**
 * The Responses stream: exact event order against OpenAI's recorded streams, sequence
 * numbers, function-call argument events, the SDK as a streaming client, the mid-stream
 * failure rule with partial billing, failures before the first byte, cache replay. These are the
 * gateway's own (translated) streams; OpenAI's models are relayed (relay.test.ts).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startTestGateway, type TestGateway } from "../harness";
import { estimateTokens } from "../../src/core/chat/estimate";
import { microToKrwRounded, microToUsd } from "../../src/lib/money";
import { parseSse, postResponses, streamFrames, tenant, usageOf, type SseFrame } from "./helpers";

// Every test makes its own tenant (signup, login, key) and calls over real sockets.
setDefaultTimeout(30_000);

let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway();
}, 30_000);
afterAll(async () => {
  await g?.stop();
});

const fixture = (name: string) => parseSse(readFileSync(join(import.meta.dir, "../fixtures/responses", name), "utf8"));
/** Event types with runs of the same delta event collapsed (deltas vary in number). */
const shape = (frames: SseFrame[]) =>
  frames.map((f) => f.json?.type ?? f.data).filter((t, i, all) => !(t.endsWith(".delta") && all[i - 1] === t));
const weather = {
  type: "function",
  name: "get_weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

/** Frame invariants of docs/decisions.md #5: `event:` = type, contiguous sequence numbers, [DONE] last. */
function checkFraming(frames: SseFrame[]): SseFrame[] {
  expect(frames[frames.length - 1]!.data).toBe("[DONE]");
  expect(frames[frames.length - 1]!.event).toBeNull();
  const events = frames.slice(0, -1);
  events.forEach((f, i) => {
    expect(f.event).toBe(f.json.type);
    expect(f.json.sequence_number).toBe(i);
  });
  return events;
}

describe("text streams", () => {
  for (const model of ["llama-3.1-8b", "claude-haiku-4-5", "gemini-2.5-flash"]) {
    test(`${model}: OpenAI's event order, one message item, full text and usage at the end`, async () => {
      const { key } = await tenant(g);
      const { res, frames } = await streamFrames(g, key.key, {
        model,
        input: "stream this please",
        instructions: "be nice",
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toStartWith("text/event-stream");
      expect(res.headers.get("x-cost-krw")).toBeNull();
      const events = checkFraming(frames);
      // The recorded OpenAI stream, with [DONE] (docs/decisions.md #5) after it.
      expect(shape(events)).toEqual(shape(fixture("responses-stream.sse")));
      const [created, inProgress, added, partAdded] = events.map((f) => f.json);
      expect(created.response).toMatchObject({
        object: "response",
        status: "in_progress",
        model,
        output: [],
        usage: null,
        instructions: "be nice",
      });
      expect(created.response.id).toMatch(/^resp_[0-9a-f]{32}$/);
      expect(inProgress.response).toEqual(created.response);
      const itemId = added.item.id;
      expect(added).toMatchObject({
        output_index: 0,
        item: { type: "message", status: "in_progress", role: "assistant", content: [] },
      });
      expect(partAdded).toMatchObject({
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      });
      const deltas = events.filter((f) => f.json.type === "response.output_text.delta").map((f) => f.json);
      expect(deltas.length).toBeGreaterThan(1);
      for (const d of deltas) expect(d).toMatchObject({ item_id: itemId, output_index: 0, content_index: 0 });
      const text = deltas.map((d) => d.delta).join("");
      expect(text).toStartWith("Simulated reply from");
      const by = (t: string) => events.find((f) => f.json.type === t)!.json;
      expect(by("response.output_text.done")).toMatchObject({ item_id: itemId, text });
      expect(by("response.content_part.done").part).toEqual({ type: "output_text", text, annotations: [] });
      const item = {
        id: itemId,
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text, annotations: [] }],
      };
      expect(by("response.output_item.done")).toMatchObject({ output_index: 0, item });
      const done = by("response.completed").response;
      expect(done).toMatchObject({ id: created.response.id, status: "completed", model, output: [item] });
      expect(done.usage.total_tokens).toBe(done.usage.input_tokens + done.usage.output_tokens);
      expect(done.usage.output_tokens).toBe(20);
      // The cost lives in response.completed (headers went out before it was known).
      const u = await usageOf(g, done.id);
      expect(u.status).toBe(200);
      expect(done.cost).toEqual({
        usd: microToUsd(u.cost_micro, 1_400_000n),
        krw: microToKrwRounded(u.cost_micro),
        fx_rate: 1400,
        markup_rate: 0,
      });
      expect(u.cost_micro).toBeGreaterThan(0n);
      expect([u.prompt_tokens, u.completion_tokens]).toEqual([done.usage.input_tokens, done.usage.output_tokens]);
    });
  }

  test("the official SDK iterates the stream and sees the completed response", async () => {
    const { sdk } = await tenant(g);
    const stream = await sdk.responses.create({ model: "gpt-4o-mini", input: "sdk stream", stream: true });
    const types: string[] = [];
    let text = "";
    let completed: any = null;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === "response.output_text.delta") text += ev.delta;
      if (ev.type === "response.completed") completed = ev.response;
    }
    expect(types[0]).toBe("response.created");
    expect(types[1]).toBe("response.in_progress");
    expect(types[types.length - 1]).toBe("response.completed");
    expect(completed.status).toBe("completed");
    expect(completed.output[0].content[0].text).toBe(text);
    expect(completed.usage.output_tokens).toBe(20);
  });
});

describe("function-call streams", () => {
  for (const model of ["llama-3.1-8b", "claude-haiku-4-5", "gemini-2.5-flash"]) {
    test(`${model}: a function_call item with argument deltas, done and the finished item`, async () => {
      const { key } = await tenant(g);
      const { frames } = await streamFrames(g, key.key, {
        model,
        input: "weather?",
        tools: [{ type: "web_search" }, weather],
        tool_choice: "required",
      });
      const events = checkFraming(frames);
      // OpenAI's recorded function-call stream, without its reasoning item (ours has none).
      const recorded = fixture("responses-stream-function-call.sse").filter(
        (f) => !f.json?.type?.startsWith("response.reasoning") && f.json?.item?.type !== "reasoning",
      );
      expect(shape(events)).toEqual(shape(recorded));
      const added = events[2]!.json;
      expect(added.item).toMatchObject({
        type: "function_call",
        status: "in_progress",
        arguments: "",
        name: "get_weather",
      });
      expect(added.item.id).toMatch(/^fc_/);
      expect(added.item.call_id).toBeTruthy();
      const deltas = events.filter((f) => f.json.type === "response.function_call_arguments.delta").map((f) => f.json);
      for (const d of deltas) expect(d).toMatchObject({ item_id: added.item.id, output_index: 0 });
      const args = deltas.map((d) => d.delta).join("");
      expect(JSON.parse(args)).toEqual({ city: "sample city" });
      const by = (t: string) => events.find((f) => f.json.type === t)!.json;
      expect(by("response.function_call_arguments.done")).toMatchObject({
        item_id: added.item.id,
        output_index: 0,
        arguments: args,
      });
      const item = { ...added.item, status: "completed", arguments: args };
      expect(by("response.output_item.done").item).toEqual(item);
      expect(by("response.completed").response.output).toEqual([item]);
      expect(by("response.completed").response.tools.map((t: any) => t.name)).toEqual(["get_weather"]);
    });
  }
});

describe("stream failure", () => {
  test("an upstream drop mid-stream: error event with the partial text, [DONE], only the partial billed", async () => {
    const { key, user } = await tenant(g);
    const { res, frames } = await streamFrames(g, key.key, { model: "gpt-4o-mini", input: "drop me [sim:drop=2]" });
    expect(res.status).toBe(200);
    const events = checkFraming(frames);
    expect(events.map((f) => f.json.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "error",
    ]);
    const partial = events
      .filter((f) => f.json.type === "response.output_text.delta")
      .map((f) => f.json.delta)
      .join("");
    const err = events[events.length - 1]!.json.error;
    expect(err.code).toBe("upstream_error");
    expect(typeof err.message).toBe("string");
    expect(err.partial).toBe(partial);
    expect(partial.length).toBeGreaterThan(0);
    const u = await usageOf(g, events[0]!.json.response.id);
    expect(u.status).toBe(502);
    expect(u.completion_tokens).toBe(estimateTokens(partial.length));
    expect(u.hold_status).toBe("settled");
    expect(u.cost_micro).toBeGreaterThan(0n);
    expect(u.charged_micro).toBe(u.cost_micro);
    const me = await g.call("GET", "/v1/me", { token: user.jwt });
    expect(me.body.held_krw).toBe(0);
  });

  test("the SDK surfaces the failure as an APIError carrying upstream_error and the partial", async () => {
    const { sdk } = await tenant(g);
    const stream = await sdk.responses.create({
      model: "claude-haiku-4-5",
      input: "drop me too [sim:drop=2]",
      stream: true,
    });
    let text = "";
    const err: any = await (async () => {
      for await (const ev of stream) if (ev.type === "response.output_text.delta") text += ev.delta;
    })().catch((e) => e);
    expect(err?.constructor?.name).toBe("APIError");
    expect(err.error).toMatchObject({ code: "upstream_error", partial: text });
    expect(text.length).toBeGreaterThan(0);
  });

  test("a drop before any content: error with an empty partial, [DONE] right after, nothing charged", async () => {
    const { key } = await tenant(g);
    // An OpenAI-compatible upstream the gateway translates (OpenAI's own stream is relayed: relay.test.ts).
    const { frames } = await streamFrames(g, key.key, { model: "llama-3.1-8b", input: "drop at once [sim:drop=0]" });
    const events = checkFraming(frames);
    expect(events.map((f) => f.json.type)).toEqual(["response.created", "response.in_progress", "error"]);
    expect(events[2]!.json.error).toMatchObject({ code: "upstream_error", partial: "" });
    const u = await usageOf(g, events[0]!.json.response.id);
    expect(u.status).toBe(502);
    expect(u.cost_micro).toBe(0n);
    expect(u.hold_status).toBe("released");
  });

  test("a failure before the first byte is an ordinary JSON error, not a stream", async () => {
    const { key, user } = await tenant(g);
    const res = await postResponses(g, key.key, { model: "gpt-4o-mini", input: "never [sim:fail=503]", stream: true });
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toStartWith("application/json");
    expect(((await res.json()) as any).detail.error).toBe("upstream_unavailable");
    const me = await g.call("GET", "/v1/me", { token: user.jwt });
    expect([me.body.balance_krw, me.body.held_krw]).toEqual([1000, 0]);
  });

  test("a client that goes away mid-stream: the upstream is read on to its usage, which is billed; the hold closed", async () => {
    const { key } = await tenant(g);
    const res = await postResponses(g, key.key, {
      model: "gpt-4o-mini",
      input: "slow [sim:tokens=400] [sim:chunk_ms=150]",
      stream: true,
    });
    const reader = res.body!.getReader();
    let seen = "";
    const dec = new TextDecoder();
    while (!seen.includes("response.output_text.delta")) seen += dec.decode((await reader.read()).value!);
    const id = /"id":"(resp_[0-9a-f]{32})"/.exec(seen)![1]!;
    await reader.cancel();
    const u = await usageOf(g, id);
    // The rest (~1 s) came within STREAM_DRAIN_MS: the upstream's own count of the whole answer.
    expect(u.status).toBe(499);
    expect(u.hold_status).toBe("settled");
    expect(u.cost_micro).toBeGreaterThan(0n);
    expect(u.charged_micro).toBe(u.cost_micro);
    expect(u.completion_tokens).toBe(400);
  });
});

describe("cache replay", () => {
  test("a cached answer streams the same event sequence, cost 0, cached: true, without the provider", async () => {
    const { key } = await tenant(g, 1000, { response_cache_mode: "exact" });
    const body = {
      model: "llama-3.1-8b",
      input: "replay me from the cache",
      tools: [weather],
      tool_choice: "required",
    };
    const first = await streamFrames(g, key.key, body);
    const firstEvents = checkFraming(first.frames);
    let events: SseFrame[] = [];
    for (let i = 0; i < 50; i++) {
      g.gw.sim!.reset();
      events = checkFraming((await streamFrames(g, key.key, body)).frames);
      if (events[events.length - 1]!.json.response.cached) break;
      await Bun.sleep(20);
    }
    expect(g.gw.sim!.stats().total).toBe(0);
    expect(shape(events)).toEqual(shape(firstEvents));
    const was = firstEvents[firstEvents.length - 1]!.json.response;
    const now = events[events.length - 1]!.json.response;
    expect(now).toMatchObject({ status: "completed", cached: true, cost: { krw: 0, usd: 0 }, usage: was.usage });
    expect(now.output.map((o: any) => [o.type, o.name, o.arguments])).toEqual(
      was.output.map((o: any) => [o.type, o.name, o.arguments]),
    );
    // A non-streaming call of the same request is answered from the same entry.
    const plain = await postResponses(g, key.key, body);
    expect(plain.headers.get("x-cost-krw")).toBe("0");
    expect(((await plain.json()) as any).cached).toBe(true);
  });
});
