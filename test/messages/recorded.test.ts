/**
 * Anthropic's recorded streams (test/fixtures/anthropic, from the vendor's documentation and
 * captures) served over a real socket as the Anthropic upstream: the relay passes them through
 * byte for byte but for the last `message_delta`, and a recorded mid-stream `error` event ends
 * the client's stream with our own `error` event of the same type, the received part billed
 * once. A translated stream (an OpenAI model) has the recorded stream's event order.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { startTestGateway, type TestGateway } from "../harness";
import { books, parseSse, postMessages, tenant, type Frame } from "./helpers";

setDefaultTimeout(30_000);

const fixture = (name: string) => readFileSync(join(import.meta.dir, "../fixtures/anthropic", name), "utf8");
/** What the fake upstream answers next. */
let serving = "messages-stream.sse";
const upstream = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: () => new Response(fixture(serving), { headers: { "content-type": "text/event-stream" } }),
});

let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway({
    env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${upstream.port}`, ANTHROPIC_API_KEY: "test-key" },
  });
}, 60_000);
afterAll(async () => {
  await g?.stop();
  upstream.stop(true);
});

const events = (text: string) => text.split(/(?<=\n\n)/).filter((e) => e.trim() && !e.startsWith(":"));
/** Event types with runs of the same delta type collapsed (delta counts vary). */
const shape = (frames: Frame[]) =>
  frames
    .map((f) => (f.event === "content_block_delta" ? `delta:${f.json.delta.type}` : f.event))
    .filter((t, i, all) => !(t?.startsWith("delta:") && all[i - 1] === t));

describe("recorded Anthropic streams, relayed", () => {
  for (const name of [
    "messages-stream.sse",
    "messages-stream-thinking.sse",
    "messages-stream-tool-use.sse",
    "messages-stream-cache-usage.sse",
  ]) {
    test(`${name}: every byte but the last message_delta, which adds the cost`, async () => {
      serving = name;
      const { user, key } = await tenant(g);
      const res = await postMessages(g, key.key, {
        model: "claude-haiku-4-5",
        max_tokens: 2048,
        stream: true,
        messages: [{ role: "user", content: "hi" }],
      });
      const got = events(await res.text());
      const sent = events(fixture(name));
      const at = sent.findIndex((e) => e.startsWith("event: message_delta"));
      expect(got.filter((_, i) => i !== at)).toEqual(sent.filter((_, i) => i !== at));
      const mine = parseSse(got[at]!)[0]!.json;
      const theirs = parseSse(sent[at]!)[0]!.json;
      expect(mine.usage).toMatchObject({ ...theirs.usage, cost_krw: expect.any(Number), cost_usd: expect.any(Number) });
      const b = await books(g, user.id);
      expect(b.charges).toHaveLength(1);
      const u = theirs.usage;
      expect(b.events[0]).toMatchObject({
        status: 200,
        prompt_tokens: u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0),
        completion_tokens: u.output_tokens,
      });
    });
  }

  test("a recorded mid-stream overloaded_error: our error event, same type, received part billed once", async () => {
    serving = "messages-stream-error-midstream.sse";
    const { user, key, sdk } = await tenant(g);
    const res = await postMessages(g, key.key, {
      model: "claude-haiku-4-5",
      max_tokens: 200,
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    const frames = parseSse(await res.text());
    const last = frames.at(-1)!;
    expect(last.event).toBe("error");
    expect(last.json).toMatchObject({ type: "error", error: { type: "overloaded_error", code: "upstream_error" } });
    expect(last.json.error.message).not.toBe("Overloaded"); // our words, never the vendor's
    expect(
      frames
        .filter((f) => f.event === "content_block_delta")
        .map((f) => f.json.delta.text)
        .join(""),
    ).toBe("Hello");
    const e = await sdk.messages
      .stream({ model: "claude-haiku-4-5", max_tokens: 200, messages: [{ role: "user", content: "hi" }] })
      .finalMessage()
      .catch((x) => x);
    expect(e).toBeInstanceOf(Anthropic.APIError);
    const b = await books(g, user.id);
    expect(b.charges).toHaveLength(2);
    expect(b.events.map((x: any) => x.status)).toEqual([502, 502]);
    expect(b.held).toBe(0n);
  });
});

describe("a translated stream", () => {
  test("has the recorded stream's event order (an OpenAI model)", async () => {
    const { key } = await tenant(g);
    const res = await postMessages(g, key.key, {
      model: "gpt-4o-mini",
      max_tokens: 100,
      stream: true,
      messages: [{ role: "user", content: "order" }],
    });
    const frames = parseSse(await res.text());
    expect(shape(frames)).toEqual(shape(parseSse(fixture("messages-stream.sse"))));
  });
});
