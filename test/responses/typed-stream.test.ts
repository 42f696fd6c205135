/**
 * The shared typed-stream reader (chat and Responses): PII placeholders restored per channel,
 * content and each tool call's arguments, even when split across fragments; failures keep
 * what was received. The upstream here is a plain list of the core's stream events.
 */
import { describe, expect, test } from "bun:test";
import { piiMasking } from "../../src/core/chat/pii-mask";
import type { StreamEvent } from "../../src/core/model/types";
import { drainTyped, drainedResult } from "../../src/core/chat/drain";
import { UpstreamError } from "../../src/core/upstream/error";
import { failureWords } from "../../src/core/upstream/words";

async function* upstream(events: StreamEvent[], failAfter?: number): AsyncGenerator<StreamEvent> {
  let i = 0;
  for (const ev of events) {
    if (failAfter !== undefined && i++ === failAfter)
      throw new UpstreamError("truncated", "upstream stream broke off: ECONNRESET");
    yield ev;
  }
}

function recorder() {
  const seen: string[] = [];
  const args = new Map<number, string>();
  return {
    seen,
    args,
    sink: {
      text: (t: string) => seen.push(`text:${t}`),
      toolCall: (ev: any) => args.set(ev.index, (args.get(ev.index) ?? "") + (ev.arguments ?? "")),
    },
  };
}

const mapping = new Map([
  ["[EMAIL_1]", "a@b.io"],
  ["[PHONE_1]", "010-1234-5678"],
]);
const restorer = () => piiMasking.streamUnmasker(mapping);

describe("drainTyped", () => {
  test("placeholders split across fragments are restored in text and in every call's arguments", async () => {
    const r = recorder();
    const d = await drainTyped(
      upstream([
        { type: "text", text: "write to [EMA" },
        { type: "text", text: "IL_1] soon" },
        { type: "tool_call", index: 0, id: "c0", name: "send", arguments: "" },
        { type: "tool_call", index: 0, arguments: '{"to":"[EMAIL' },
        { type: "tool_call", index: 1, id: "c1", name: "call", arguments: '{"n":"[PH' },
        { type: "tool_call", index: 0, arguments: '_1]"}' },
        { type: "tool_call", index: 1, arguments: 'ONE_1]"}' },
        { type: "finish", reason: "tool_calls" },
      ]),
      restorer,
      () => false,
      r.sink,
      {},
    );
    expect(d.failure).toBeNull();
    expect(d.text).toBe("write to a@b.io soon");
    expect(r.seen.join("")).toBe("text:write to text:a@b.io soon");
    expect(d.calls.map((c) => [c.id, c.function.name, c.function.arguments])).toEqual([
      ["c0", "send", '{"to":"a@b.io"}'],
      ["c1", "call", '{"n":"010-1234-5678"}'],
    ]);
    expect([...r.args.entries()]).toEqual([
      [0, '{"to":"a@b.io"}'],
      [1, '{"n":"010-1234-5678"}'],
    ]);
    expect(drainedResult(d)).toMatchObject({ content: "write to a@b.io soon", finishReason: "tool_calls" });
  });

  test("a held-back tail that never became a placeholder is flushed at the end", async () => {
    const r = recorder();
    const d = await drainTyped(
      upstream([
        { type: "text", text: "ends with [EMAIL" },
        { type: "tool_call", index: 0, id: "c", name: "f", arguments: '{"a":"[PHO' },
      ]),
      restorer,
      () => false,
      r.sink,
      {},
    );
    expect(d.text).toBe("ends with [EMAIL");
    expect(r.seen.join("")).toBe("text:ends with text:[EMAIL");
    expect(d.calls[0]!.function.arguments).toBe('{"a":"[PHO');
    expect(r.args.get(0)).toBe('{"a":"[PHO');
  });

  test("without masking, events pass as they come; a failure keeps the received text", async () => {
    const r = recorder();
    const d = await drainTyped(
      upstream(
        [
          { type: "text", text: "[EMAIL_1] stays" },
          { type: "text", text: " more" },
          { type: "text", text: " never" },
        ],
        2,
      ),
      null,
      () => false,
      r.sink,
      {},
    );
    // The client's words, not the transport's message (that one is for the log).
    expect(d.failure).toBe(failureWords(new UpstreamError("truncated", "")));
    expect(d.failure).not.toContain("ECONNRESET");
    expect(d.text).toBe("[EMAIL_1] stays more");
  });

  test("a client that went away gets nothing more, but the read goes on to the usage (the bill's basis)", async () => {
    const r = recorder();
    let gone = false;
    const usage = { promptTokens: 3, completionTokens: 2, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
    const d = await drainTyped(
      upstream([
        { type: "text", text: "one" },
        { type: "text", text: "two" },
        { type: "finish", reason: "stop" },
        { type: "usage", usage },
      ]),
      null,
      () => gone,
      {
        ...r.sink,
        text: (t) => ((gone = true), r.sink.text(t)),
      },
      {},
    );
    expect(r.seen).toEqual(["text:one"]);
    expect(d.failure).toBeNull();
    expect(d.text).toBe("onetwo");
    expect(d.usage).toEqual(usage);
  });
});
