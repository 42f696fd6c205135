/**
 * A masked OpenAI chat call to an OpenAI-protocol model keeps the client's request and is
 * relayed (docs/pii-masking.md): what reaches the upstream (seen at a recording proxy) is the
 * client's request with only its texts masked — system, user text, the `tool` message's
 * result, string values inside `tool_calls[].function.arguments` — tool-call ids, names and
 * every extra field as sent; the stream is the upstream's own chunks (its ids) with the values
 * restored, even when the proxy splits the content deltas in the middle of a placeholder and
 * the bytes into small network writes. Each call is charged once.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { TestGateway } from "../harness";
import { chatFetch, parseSse, proxiedGateway, type RecordingProxy } from "../support/chat";
import { books, tenant } from "../messages/helpers";

setDefaultTimeout(30_000);

let g: TestGateway;
let proxy: RecordingProxy;
beforeAll(async () => {
  ({ g, proxy } = await proxiedGateway(["openai"]));
}, 60_000);
afterAll(async () => {
  await g?.stop();
  proxy?.stop();
});

const EMAIL = "lee.jiwoo@example.org";
const PHONE = "010-9876-5432";
const ARGS = JSON.stringify({ query: `owner of ${EMAIL}`, limit: 3 });

function turn(stream: boolean) {
  return {
    model: "gpt-4o-mini",
    stream,
    max_tokens: 300,
    prompt_cache_key: "agent-7",
    messages: [
      { role: "system", content: `Assist ${EMAIL}.` },
      { role: "user", content: "Who owns the account?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_Xq81mZ", type: "function", function: { name: "lookup", arguments: ARGS } }],
      },
      { role: "tool", tool_call_id: "call_Xq81mZ", content: `Owner phone: ${PHONE}` },
      { role: "user", content: [{ type: "text", text: `Reply ${EMAIL} and ${PHONE} now [sim:tokens=40]` }] },
    ],
    tools: [
      {
        type: "function",
        function: { name: "lookup", parameters: { type: "object", properties: { query: { type: "string" } } } },
      },
    ],
  };
}

const restore = (s: string) => s.replaceAll("[EMAIL_1]", EMAIL).replaceAll("[PHONE_1]", PHONE);

/** What reached the upstream: the request's texts masked, ids, names and extras as sent. */
function expectMasked() {
  expect(proxy.bodies).toHaveLength(1);
  const up = proxy.bodies[0]!.body;
  expect(proxy.bodies[0]!.raw).not.toContain(EMAIL);
  expect(proxy.bodies[0]!.raw).not.toContain(PHONE);
  expect(up.prompt_cache_key).toBe("agent-7");
  expect(up.messages).toEqual([
    { role: "system", content: "Assist [EMAIL_1]." },
    { role: "user", content: "Who owns the account?" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "call_Xq81mZ",
          type: "function",
          function: { name: "lookup", arguments: JSON.stringify({ query: "owner of [EMAIL_1]", limit: 3 }) },
        },
      ],
    },
    { role: "tool", tool_call_id: "call_Xq81mZ", content: "Owner phone: [PHONE_1]" },
    { role: "user", content: [{ type: "text", text: "Reply [EMAIL_1] and [PHONE_1] now [sim:tokens=40]" }] },
  ]);
}

/** Splits every content delta into pieces of 3 characters, so a placeholder spans several chunks. */
function splitContent(event: string): string[] {
  const json = parseSse(event)[0]?.json;
  const content = json?.choices?.[0]?.delta?.content;
  if (typeof content !== "string" || content.length <= 3) return [event];
  const out: string[] = [];
  for (let i = 0; i < content.length; i += 3) {
    const choice = { ...json.choices[0], delta: { ...json.choices[0].delta, content: content.slice(i, i + 3) } };
    out.push(`data: ${JSON.stringify({ ...json, choices: [choice] })}\n\n`);
  }
  return out;
}

describe("a masked chat call to an OpenAI-protocol model", () => {
  test("JSON: only the client's texts are masked; the answer is restored; charged once", async () => {
    const { user, key } = await tenant(g, 1000);
    proxy.clear();
    const res = await chatFetch(g, key.key, turn(false));
    expect(res.status).toBe(200);
    expectMasked();
    const answer: any = await res.json();
    expect(answer.choices[0].message.content).toContain(`Reply ${EMAIL} and ${PHONE}`);
    const b = await books(g, user.id);
    expect(b.charges).toHaveLength(1);
    expect(-BigInt(b.charges[0].amount_micro)).toBe(BigInt(b.events[0].cost_micro));
    expect(b.held).toBe(0n);
  });

  test("stream: the upstream's own chunks, relayed, a placeholder split across chunks restored", async () => {
    const { user, key } = await tenant(g, 1000);
    proxy.clear();
    proxy.reshape = splitContent;
    proxy.pieceBytes = 16;
    try {
      const res = await chatFetch(g, key.key, turn(true));
      expect(res.status).toBe(200);
      const got = parseSse(await res.text());
      await proxy.bodies[0]!.ended;
      expectMasked();
      const sent = parseSse(proxy.bodies[0]!.response);
      const content = (evs: typeof sent) => evs.map((e) => e.json?.choices?.[0]?.delta?.content ?? "").join("");
      expect(sent.some((e) => /\[[A-Z_0-9]*$/.test(e.json?.choices?.[0]?.delta?.content ?? ""))).toBe(true);
      expect(content(got)).toBe(restore(content(sent)));
      expect(content(got)).toContain(`Reply ${EMAIL} and ${PHONE}`);
      // Relayed: the chunks are the upstream's (its id), not the gateway's own encoding.
      const upstreamId = sent[0]!.json.id;
      const relayed = got.filter((e) => e.json?.choices?.length);
      expect(relayed.length).toBeGreaterThan(3);
      expect(relayed.every((e) => e.json.id === upstreamId)).toBe(true);
      expect(got.at(-1)!.data).toBe("[DONE]");
      const b = await books(g, user.id);
      expect(b.charges).toHaveLength(1);
      const usage = got.findLast((e) => e.json?.usage)!.json.usage;
      expect(b.events[0]).toMatchObject({ status: 200, completion_tokens: usage.completion_tokens });
      expect(-BigInt(b.charges[0].amount_micro)).toBe(BigInt(b.events[0].cost_micro));
      expect(b.held).toBe(0n);
    } finally {
      proxy.reshape = null;
      proxy.pieceBytes = 0;
    }
  });
});
