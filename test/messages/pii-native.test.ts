/**
 * PII masking keeps the client's own Anthropic body (docs/pii-masking.md, "What is masked"):
 * a Claude-Code-like second turn (thinking on with budget 31999, `metadata`,
 * `context_management`, an e-mail in the system prompt, an assistant turn of
 * `[thinking with signature, redacted_thinking, tool_use]`, then a `tool_result` holding a
 * phone number) reaches Claude, seen at a recording proxy, as the client's body with only the
 * client's texts masked: every thinking block and signature byte for byte, every other field as
 * sent. The answer comes back as Claude wrote it with the values restored: the JSON in place,
 * the stream relayed event by event even when the proxy splits Claude's text deltas in the
 * middle of a placeholder and the bytes into small network writes. Each call is charged once.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { proxiedGateway, type RecordingProxy } from "../support/chat";
import type { TestGateway } from "../harness";
import { books, parseSse, postMessages, tenant } from "./helpers";

setDefaultTimeout(30_000);

let g: TestGateway;
let proxy: RecordingProxy;
beforeAll(async () => {
  ({ g, proxy } = await proxiedGateway(["anthropic"]));
}, 60_000);
afterAll(async () => {
  await g?.stop();
  proxy?.stop();
});

const EMAIL = "kim.minsu@example.com";
const PHONE = "010-1234-5678";
// The model's own thinking mentions the address: it is Claude's text, signed, and stays as written.
const THINKING = {
  type: "thinking",
  thinking: `The user ${EMAIL} wants the contact card; I will grep for it.`,
  signature: "EqQBCkgIBxABGAIqQJ7Yv5n3+/sim==",
};
const REDACTED = { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw==" };

/** A second turn of Claude Code: the tool it asked for has run, its result comes back. */
function secondTurn(stream: boolean) {
  return {
    model: "claude-sonnet-4-5",
    max_tokens: 32000,
    stream,
    thinking: { type: "enabled", budget_tokens: 31999 },
    metadata: { user_id: "user_3f1c_account_9a2b_session_77e0" },
    context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
    system: [
      {
        type: "text",
        text: "You are Claude Code, Anthropic's official CLI for Claude.",
        cache_control: { type: "ephemeral" },
      },
      { type: "text", text: `The user's e-mail address is ${EMAIL}.` },
    ],
    tools: [
      {
        name: "Bash",
        description: "Run a command",
        input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
      },
    ],
    messages: [
      { role: "user", content: [{ type: "text", text: "Find my contact card." }] },
      {
        role: "assistant",
        content: [
          THINKING,
          REDACTED,
          {
            type: "tool_use",
            id: "toolu_01A09q90qw90lq917835lq9",
            name: "Bash",
            input: { command: `grep ${EMAIL} c.txt`, n: 1 },
          },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_01A09q90qw90lq917835lq9",
            content: [{ type: "text", text: `Kim Minsu, ${PHONE}` }],
          },
          {
            type: "text",
            text: `Write ${EMAIL} and ${PHONE} back [sim:tokens=60]`,
            cache_control: { type: "ephemeral" },
          },
        ],
      },
    ],
  };
}

/** The body Claude must get: the client's, its own texts masked, nothing else changed. */
function maskedTurn(stream: boolean) {
  const b: any = structuredClone(secondTurn(stream));
  b.system[1].text = "The user's e-mail address is [EMAIL_1].";
  b.messages[1].content[2].input.command = "grep [EMAIL_1] c.txt";
  b.messages[2].content[0].content[0].text = "Kim Minsu, [PHONE_1]";
  b.messages[2].content[1].text = "Write [EMAIL_1] and [PHONE_1] back [sim:tokens=60]";
  if (!stream) delete b.stream;
  return b;
}

const restore = (s: string) => s.replaceAll("[EMAIL_1]", EMAIL).replaceAll("[PHONE_1]", PHONE);
const events = (text: string) => text.split(/(?<=\n\n)/).filter((e) => e.trim() && !e.startsWith(":"));

/** What reached Claude: the client's body, masked in place, thinking and signatures byte for byte. */
function expectMaskedNative(stream: boolean) {
  expect(proxy.bodies).toHaveLength(1);
  const call = proxy.bodies[0]!;
  expect(call.body).toEqual(maskedTurn(stream));
  for (const block of [THINKING, REDACTED]) expect(call.raw).toContain(JSON.stringify(block));
  expect(call.body.thinking).toEqual({ type: "enabled", budget_tokens: 31999 });
  expect(call.raw).not.toContain(PHONE);
  // The address is left only where Claude wrote it itself, in its signed thinking.
  expect(call.raw.split(EMAIL)).toHaveLength(2);
}

/** Splits every text delta into pieces of 3 characters, so a placeholder spans several deltas. */
function splitTextDeltas(event: string): string[] {
  const frame = parseSse(event)[0];
  if (frame?.json?.delta?.type !== "text_delta") return [event];
  const text: string = frame.json.delta.text;
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 3)
    out.push(
      `event: content_block_delta\ndata: ${JSON.stringify({ ...frame.json, delta: { type: "text_delta", text: text.slice(i, i + 3) } })}\n\n`,
    );
  return out;
}

describe("a masked Claude Code turn to Claude", () => {
  test("JSON: the client's body masked in place; the answer is Claude's own, restored", async () => {
    const { user, key } = await tenant(g, 10_000);
    proxy.clear();
    const res = await postMessages(g, key.key, secondTurn(false));
    expect(res.status).toBe(200);
    expectMaskedNative(false);
    const answer: any = await res.json();
    const upstream = proxy.bodies[0]!.response;
    expect(upstream).toContain("[EMAIL_1]");
    // Claude's own answer (its id, its thinking block and signature), the values put back.
    expect(answer).toEqual(JSON.parse(restore(upstream)));
    expect(answer.content.find((b: any) => b.type === "text").text).toContain(`Write ${EMAIL} and ${PHONE}`);
    expect(answer.content[0].type).toBe("thinking");
    const b = await books(g, user.id);
    expect(b.charges).toHaveLength(1);
    expect(b.events).toHaveLength(1);
    expect(-BigInt(b.charges[0].amount_micro)).toBe(BigInt(b.events[0].cost_micro));
    expect(b.events[0]).toMatchObject({
      status: 200,
      api: "messages",
      prompt_tokens:
        JSON.parse(upstream).usage.input_tokens +
        JSON.parse(upstream).usage.cache_creation_input_tokens +
        JSON.parse(upstream).usage.cache_read_input_tokens,
      completion_tokens: JSON.parse(upstream).usage.output_tokens,
    });
    expect(b.held).toBe(0n);
  });

  test("stream: relayed as Claude sent it, a placeholder split across deltas and network writes restored", async () => {
    const { user, key } = await tenant(g, 10_000);
    proxy.clear();
    proxy.reshape = splitTextDeltas;
    proxy.pieceBytes = 16;
    try {
      const res = await postMessages(g, key.key, secondTurn(true));
      expect(res.status).toBe(200);
      const got = events(await res.text());
      await proxy.bodies[0]!.ended;
      expectMaskedNative(true);
      const sent = events(proxy.bodies[0]!.response);
      const text = (evs: string[]) =>
        evs
          .map((e) => parseSse(e)[0]?.json)
          .filter((j) => j?.delta?.type === "text_delta")
          .map((j) => j.delta.text)
          .join("");
      // The split really cut the placeholders, and the client reads the values whole.
      expect(text(sent)).toContain("[EMAIL_1]");
      const pieces = sent.map((e) => parseSse(e)[0]?.json?.delta).filter((d) => d?.type === "text_delta");
      expect(pieces.some((d) => /\[[A-Z_0-9]*$/.test(d.text))).toBe(true);
      expect(text(got)).toBe(restore(text(sent)));
      expect(text(got)).toContain(`Write ${EMAIL} and ${PHONE}`);
      // Every event but the text deltas and the cost-bearing message_delta is Claude's own bytes, in order:
      // message_start (its id), the thinking block with its signature_delta, block starts and stops.
      const other = (evs: string[]) =>
        evs.filter((e) => !e.includes('"type":"text_delta"') && !e.startsWith("event: message_delta"));
      expect(other(got)).toEqual(other(sent));
      expect(got.some((e) => e.includes('"type":"signature_delta"'))).toBe(true);
      // A text delta the gateway relays is Claude's own bytes unless it restored or held back part of it.
      const deltas = got.filter((e) => e.includes('"type":"text_delta"'));
      expect(deltas.filter((e) => sent.includes(e)).length).toBeGreaterThan(deltas.length / 2);
      const frames = parseSse(got.join(""));
      expect(frames.at(-1)!.event).toBe("message_stop");
      const b = await books(g, user.id);
      expect(b.charges).toHaveLength(1);
      expect(b.events).toHaveLength(1);
      const usage = frames.at(-2)!.json.usage;
      expect(b.events[0]).toMatchObject({ status: 200, completion_tokens: usage.output_tokens });
      expect(-BigInt(b.charges[0].amount_micro)).toBe(BigInt(b.events[0].cost_micro));
      expect(b.held).toBe(0n);
    } finally {
      proxy.reshape = null;
      proxy.pieceBytes = 0;
    }
  });

  test("nothing personal: the body goes as sent and the stream byte for byte", async () => {
    const { key } = await tenant(g, 10_000);
    proxy.clear();
    const plain = JSON.parse(JSON.stringify(secondTurn(true)).replaceAll(EMAIL, "the user").replaceAll(PHONE, "n/a"));
    const res = await postMessages(g, key.key, plain);
    const got = events(await res.text());
    await proxy.bodies[0]!.ended;
    expect(proxy.bodies[0]!.body).toEqual(plain);
    const sent = events(proxy.bodies[0]!.response);
    const noDelta = (evs: string[]) => evs.filter((e) => !e.startsWith("event: message_delta"));
    expect(noDelta(got)).toEqual(noDelta(sent));
  });
});
