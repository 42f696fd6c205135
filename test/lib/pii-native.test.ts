/**
 * maskRequest on a request carrying the client's own Anthropic body (core/chat/pii-native.ts):
 * one mapping for the translation and the body; in the body only the client's texts change,
 * and the rest serialises to the same bytes; nothing found, nothing is copied.
 */
import { describe, expect, test } from "bun:test";
import { maskRequest } from "../../src/core/chat/pii-mask";
import { unmaskAnthropicAnswer } from "../../src/core/chat/pii-native";
import type { ChatMessage } from "../../src/core/model/types";

const THINKING = { type: "thinking", thinking: "mail kim@test.kr later", signature: "c2ln+/==" };
const body = () => ({
  model: "claude-sonnet-4-5",
  max_tokens: 32000,
  thinking: { type: "enabled", budget_tokens: 31999 },
  metadata: { user_id: "u" },
  context_management: { edits: [{ type: "clear_thinking_20251015" }] },
  system: "Owner: kim@test.kr",
  messages: [
    { role: "user", content: "Hi [EMAIL_1]" },
    {
      role: "assistant",
      content: [
        THINKING,
        { type: "redacted_thinking", data: "abc" },
        { type: "tool_use", id: "toolu_1", name: "mail", input: { to: "kim@test.kr", n: 4111111111111111 } },
      ],
    },
    {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: [
            { type: "text", text: "sent to 010-1234-5678" },
            { type: "image", source: { type: "url", url: "https://x/kim@test.kr.png" } },
          ],
          cache_control: { type: "ephemeral" },
        },
      ],
    },
  ],
});
const translation = (): ChatMessage[] => [
  { role: "system", content: "Owner: kim@test.kr" },
  { role: "user", content: "Hi [EMAIL_1]" },
  {
    role: "assistant",
    content: null,
    tool_calls: [
      {
        id: "toolu_1",
        type: "function",
        function: { name: "mail", arguments: '{"to":"kim@test.kr","n":4111111111111111}' },
      },
    ],
  },
  { role: "tool", tool_call_id: "toolu_1", content: "sent to 010-1234-5678" },
];

describe("maskRequest with a native Anthropic body", () => {
  test("one mapping; only the client's texts change; thinking, ids, images and fields as sent", () => {
    const b = body();
    const r = maskRequest({ messages: translation(), max_tokens: 32000, anthropic: { body: b, beta: "x" } });
    // The client's literal "[EMAIL_1]" is reserved: the address becomes [EMAIL_2] in both.
    expect(r.mapping).toEqual(
      new Map([
        ["[EMAIL_2]", "kim@test.kr"],
        ["[PHONE_1]", "010-1234-5678"],
      ]),
    );
    expect(r.request.messages[0]!.content).toBe("Owner: [EMAIL_2]");
    const masked = r.request.anthropic!.body as any;
    expect(r.request.anthropic!.beta).toBe("x");
    const expected = JSON.stringify(body())
      .replace('"system":"Owner: kim@test.kr"', '"system":"Owner: [EMAIL_2]"')
      .replace('"to":"kim@test.kr"', '"to":"[EMAIL_2]"')
      .replace("sent to 010-1234-5678", "sent to [PHONE_1]");
    expect(JSON.stringify(masked)).toBe(expected);
    expect(masked.messages[1].content[0]).toBe(b.messages[1]!.content[0]); // the very thinking object
    expect(masked.messages[2].content[0].content[1]).toBe((b.messages[2]!.content[0] as any).content[1]);
    expect(masked.metadata).toBe(b.metadata);
    expect(b.system).toBe("Owner: kim@test.kr"); // the client's body itself is not written to
  });

  test("a placeholder-shaped text only the body holds is reserved in both", () => {
    const r = maskRequest({
      messages: [{ role: "user", content: "to kim@test.kr" }] as ChatMessage[],
      max_tokens: 10,
      anthropic: {
        body: {
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "to kim@test.kr" },
                { type: "x_block", text: "" },
              ],
            },
            { role: "user", content: [{ type: "tool_result", content: "[EMAIL_1] is mine" }] },
          ],
        },
      },
    });
    expect(r.mapping).toEqual(new Map([["[EMAIL_2]", "kim@test.kr"]]));
    expect(r.request.messages[0]!.content).toBe("to [EMAIL_2]");
    expect((r.request.anthropic!.body as any).messages[0].content[0].text).toBe("to [EMAIL_2]");
  });

  test("a value the translation's glued assistant text hides is masked in both", () => {
    const r = maskRequest({
      messages: [
        { role: "user", content: "count" },
        { role: "assistant", content: "call 010-1234-56789 items" },
      ] as ChatMessage[],
      max_tokens: 10,
      anthropic: {
        body: {
          messages: [
            { role: "user", content: "count" },
            {
              role: "assistant",
              content: [
                { type: "text", text: "call 010-1234-5678" },
                { type: "text", text: "9 items" },
              ],
            },
          ],
        },
      },
    });
    expect(r.mapping).toEqual(new Map([["[PHONE_1]", "010-1234-5678"]]));
    expect((r.request.anthropic!.body as any).messages[1].content[0].text).toBe("call [PHONE_1]");
    expect(r.request.messages[1]!.content).toBe("call [PHONE_1]9 items");
  });

  test("nothing found: the same request, the body never copied", () => {
    const req = {
      messages: [{ role: "user", content: "hello" }] as ChatMessage[],
      max_tokens: 10,
      anthropic: { body: { messages: [{ role: "user", content: "hello" }] } },
    };
    const r = maskRequest(req);
    expect(r.request).toBe(req);
    expect(r.mapping).toBeNull();
  });

  test("an answer is restored in its text and tool input, never in its thinking", () => {
    const m = new Map([["[EMAIL_1]", "kim@test.kr"]]);
    const answer = {
      id: "msg_1",
      content: [
        { type: "thinking", thinking: "about [EMAIL_1]", signature: "s" },
        { type: "text", text: "to [EMAIL_1]" },
        { type: "tool_use", id: "t", name: "mail", input: { to: ["[EMAIL_1]"] } },
      ],
    };
    const out: any = unmaskAnthropicAnswer(answer, m);
    expect(out.content[0]).toBe(answer.content[0]);
    expect(out.content[1].text).toBe("to kim@test.kr");
    expect(out.content[2].input).toEqual({ to: ["kim@test.kr"] });
    expect(answer.content[1]!.text).toBe("to [EMAIL_1]");
  });
});
