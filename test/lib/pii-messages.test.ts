import { describe, expect, test } from "bun:test";
import { maskMessages, piiMasking } from "../../src/core/chat/pii-mask";
import type { ChatMessage } from "../../src/core/model/types";

describe("maskMessages", () => {
  test("nothing found: the same array back and a null mapping", () => {
    const messages: ChatMessage[] = [
      { role: "system", content: "You are helpful. Today is 2024-01-15." },
      {
        role: "user",
        content: [
          { type: "text", text: "version 1.2.3.4?" },
          { type: "image_url", image_url: { url: "https://x.kr/a.png" } },
        ],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"n":1}' } }],
      },
    ];
    const r = maskMessages(messages);
    expect(r.messages).toBe(messages);
    expect(r.mapping).toBeNull();
  });

  test("string contents and text parts share one mapping; images and untouched messages are not copied", () => {
    const image = { type: "image_url" as const, image_url: { url: "https://x.kr/u/kim@test.kr/010-1234-5678.png" } };
    const plain: ChatMessage = { role: "system", content: "Be brief." };
    const messages: ChatMessage[] = [
      plain,
      { role: "user", content: "I am kim@test.kr, phone 010-1234-5678.", name: "kim" },
      {
        role: "user",
        content: [
          { type: "text", text: "Again: kim@test.kr / lee@test.kr", cache_control: { type: "ephemeral" } },
          image,
          { type: "text", text: "no pii" },
        ],
      },
    ];
    const before = structuredClone(messages);
    const r = maskMessages(messages);
    expect(r.messages).not.toBe(messages);
    expect(messages).toEqual(before); // the input is not mutated
    expect(r.messages[0]).toBe(plain);
    expect(r.messages[1]).toEqual({ role: "user", content: "I am [EMAIL_1], phone [PHONE_1].", name: "kim" });
    const parts = r.messages[2]!.content as Exclude<ChatMessage["content"], string | null>;
    expect(parts[0]).toEqual({
      type: "text",
      text: "Again: [EMAIL_1] / [EMAIL_2]",
      cache_control: { type: "ephemeral" },
    });
    expect(parts[1]).toBe(image);
    expect(parts[2]).toBe((messages[2]!.content as typeof parts)[2]!);
    expect([...r.mapping!]).toEqual([
      ["[EMAIL_1]", "kim@test.kr"],
      ["[PHONE_1]", "010-1234-5678"],
      ["[EMAIL_2]", "lee@test.kr"],
    ]);
  });

  test("tool-call arguments: string values masked, keys and numbers kept", () => {
    const args = JSON.stringify({
      to: "kim@test.kr",
      "lee@test.kr": "key stays",
      cc: ["x", "lee@test.kr"],
      card: 4111111111111111,
      nested: { phone: "+1 415 555 0100" },
    });
    const messages: ChatMessage[] = [
      { role: "user", content: "mail kim@test.kr" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c1", type: "function", function: { name: "send", arguments: args } },
          { id: "c2", type: "function", function: { name: "noop", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "sent to kim@test.kr" },
    ];
    const r = maskMessages(messages);
    const calls = r.messages[1]!.tool_calls!;
    expect(JSON.parse(calls[0]!.function.arguments)).toEqual({
      to: "[EMAIL_1]",
      "lee@test.kr": "key stays",
      cc: ["x", "[EMAIL_2]"],
      card: 4111111111111111,
      nested: { phone: "[PHONE_1]" },
    });
    expect(calls[0]!.id).toBe("c1");
    expect(calls[1]).toBe(messages[1]!.tool_calls![1]!);
    expect(r.messages[2]).toEqual({ role: "tool", tool_call_id: "c1", content: "sent to [EMAIL_1]" });
    // Restoring the arguments text gives back the original values.
    expect(JSON.parse(piiMasking.unmask(calls[0]!.function.arguments, r.mapping!))).toEqual(JSON.parse(args));
  });

  test("arguments PII only in keys or numbers: the message is left as it is", () => {
    const messages: ChatMessage[] = [
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c", type: "function", function: { name: "f", arguments: '{"kim@test.kr": 4111111111111111}' } },
        ],
      },
    ];
    const r = maskMessages(messages);
    expect(r.messages).toBe(messages);
    expect(r.mapping).toBeNull();
  });

  test("values after a JSON escape are found", () => {
    const args = JSON.stringify({ note: "call\n010-1234-5678\t(home)" }); // raw text: `call\n010-…`
    const messages: ChatMessage[] = [
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: args } }],
      },
    ];
    const r = maskMessages(messages);
    expect(JSON.parse(r.messages[0]!.tool_calls![0]!.function.arguments)).toEqual({ note: "call\n[PHONE_1]\t(home)" });
  });

  test("arguments that are not JSON are masked as text", () => {
    const messages: ChatMessage[] = [
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: '{"to": "kim@test.kr"' } }],
      },
    ];
    const r = maskMessages(messages);
    expect(r.messages[0]!.tool_calls![0]!.function.arguments).toBe('{"to": "[EMAIL_1]"');
  });

  test("the port's stream unmasker restores a masked answer split anywhere", () => {
    const { mapping } = maskMessages([{ role: "user", content: "I am kim@test.kr" }]);
    const answer = "Hello [EMAIL_1], noted [EMAIL_1].";
    for (let cut = 0; cut <= answer.length; cut++) {
      const u = piiMasking.streamUnmasker(mapping!);
      expect(u.push(answer.slice(0, cut)) + u.push(answer.slice(cut)) + u.flush()).toBe(
        "Hello kim@test.kr, noted kim@test.kr.",
      );
    }
  });
});
