/**
 * The relayed-stream restorers of a masked call (providers/<vendor>/relay-restore.ts): fed a
 * vendor's SSE events one by one, they give the events to relay. Checked: a placeholder split
 * anywhere across text deltas, tool-input fragments or OpenAI chunks comes out whole, in the
 * block or choice it belongs to; a tail that never completes goes out as written before the
 * block's stop / the choice's finish; Anthropic's thinking and signature deltas and every event
 * without a placeholder are relayed as their own bytes; the whole text equals unmask(text).
 */
import { describe, expect, test } from "bun:test";
import { AnthropicRawRestorer } from "../../src/providers/anthropic/relay-restore";
import { OpenAIRawRestorer } from "../../src/providers/openai/relay-restore";
import { unmask } from "../../src/lib/pii";

const enc = new TextEncoder();
const dec = new TextDecoder();
const MAPPING = new Map([
  ["[EMAIL_1]", "kim@test.kr"],
  ["[PHONE_12]", "010-1234-5678"],
]);

const anthropic = (name: string, data: unknown) => enc.encode(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
const openai = (data: unknown) => enc.encode(`data: ${JSON.stringify(data)}\n\n`);
const json = (ev: Uint8Array) => JSON.parse(/data: (.*)/.exec(dec.decode(ev))![1]!);

/** Cuts `text` at the given positions. */
const cut = (text: string, at: number[]) => {
  const out: string[] = [];
  let last = 0;
  for (const i of [...at, text.length]) {
    out.push(text.slice(last, i));
    last = i;
  }
  return out.filter(Boolean);
};

function relayAnthropic(events: Uint8Array[]): Uint8Array[] {
  const r = new AnthropicRawRestorer(MAPPING);
  return events.flatMap((e) => r.restore(e));
}

const TEXT = "Write [EMAIL_1] or call [PHONE_12], not [EMAIL_9] nor [x";

describe("Anthropic", () => {
  test("every cut of a text delta: the text whole, restored; thinking and signature as their bytes", () => {
    for (let a = 1; a < TEXT.length - 1; a++) {
      const b = Math.min(TEXT.length - 1, a + 3);
      const thinking = anthropic("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "thinking_delta", thinking: "about [EMAIL_1]" },
      });
      const signature = anthropic("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "signature_delta", signature: "c2ln" },
      });
      const events = [
        anthropic("content_block_start", {
          type: "content_block_start",
          index: 0,
          content_block: { type: "thinking", thinking: "" },
        }),
        thinking,
        signature,
        anthropic("content_block_stop", { type: "content_block_stop", index: 0 }),
        anthropic("content_block_start", {
          type: "content_block_start",
          index: 1,
          content_block: { type: "text", text: "" },
        }),
        ...cut(TEXT, [a, b]).map((t) =>
          anthropic("content_block_delta", {
            type: "content_block_delta",
            index: 1,
            delta: { type: "text_delta", text: t },
          }),
        ),
        anthropic("content_block_stop", { type: "content_block_stop", index: 1 }),
      ];
      const out = relayAnthropic(events);
      expect(out[1]).toBe(thinking);
      expect(out[2]).toBe(signature);
      const deltas = out.map(json).filter((e) => e.delta?.type === "text_delta");
      expect(deltas.every((e) => e.index === 1 && e.delta.text.length > 0)).toBe(true);
      expect(deltas.map((e) => e.delta.text).join("")).toBe(unmask(TEXT, MAPPING));
      expect(json(out.at(-1)!).type).toBe("content_block_stop");
    }
  });

  test("a tool's input fragments are one channel; an event without a placeholder is its own bytes", () => {
    const args = JSON.stringify({ to: "[EMAIL_1]", n: 1 });
    const start = anthropic("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "tool_use", id: "toolu_1", name: "send", input: {} },
    });
    const pieces = ["", ...cut(args, [8, 12])].map((p) =>
      anthropic("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: p },
      }),
    );
    const stop = anthropic("content_block_stop", { type: "content_block_stop", index: 0 });
    const out = relayAnthropic([start, ...pieces, stop]);
    expect(out[0]).toBe(start);
    expect(out[1]).toBe(pieces[0]!);
    expect(out.at(-1)).toBe(stop);
    const joined = out
      .map(json)
      .filter((e) => e.delta?.type === "input_json_delta")
      .map((e) => e.delta.partial_json)
      .join("");
    expect(JSON.parse(joined)).toEqual({ to: "kim@test.kr", n: 1 });
  });

  test("a tail that never completes goes out as written before the block's stop", () => {
    const out = relayAnthropic([
      anthropic("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: "see [EMAI" },
      }),
      anthropic("content_block_stop", { type: "content_block_stop", index: 0 }),
    ]);
    expect(out.map(json).map((e) => e.delta?.text ?? e.type)).toEqual(["see ", "[EMAI", "content_block_stop"]);
  });
});

describe("OpenAI", () => {
  const frame = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m" };
  const chunk = (delta: unknown, finish: string | null = null) =>
    openai({ ...frame, choices: [{ index: 0, delta, finish_reason: finish }], usage: null });

  test("every cut of the content and of a tool call's arguments: whole, restored, before the finish", () => {
    const args = JSON.stringify({ to: "[PHONE_12]" });
    for (let a = 1; a < TEXT.length - 1; a++) {
      const r = new OpenAIRawRestorer(MAPPING);
      const role = chunk({ role: "assistant", content: "" });
      const events = [
        role,
        ...cut(TEXT, [a]).map((t) => chunk({ content: t })),
        chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }] }),
        ...cut(args, [Math.min(a, args.length - 1)]).map((t) =>
          chunk({ tool_calls: [{ index: 0, function: { arguments: t } }] }),
        ),
        chunk({}, "tool_calls"),
        openai({ ...frame, choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }),
        enc.encode("data: [DONE]\n\n"),
      ];
      const out = events.flatMap((e) => r.restore(e));
      expect(out[0]).toBe(role);
      expect(dec.decode(out.at(-1)!)).toBe("data: [DONE]\n\n");
      const parsed = out.slice(0, -1).map(json);
      const deltas = parsed.flatMap((p) => p.choices.map((c: any) => c.delta));
      expect(deltas.map((d) => d.content ?? "").join("")).toBe(unmask(TEXT, MAPPING));
      const joined = deltas
        .flatMap((d) => d.tool_calls ?? [])
        .map((t: any) => t.function?.arguments ?? "")
        .join("");
      expect(JSON.parse(joined)).toEqual({ to: "010-1234-5678" });
      // Nothing comes after the finish but the usage chunk.
      const finish = parsed.findIndex((p) => p.choices[0]?.finish_reason);
      expect(finish).toBe(parsed.length - 2);
      expect(parsed.every((p) => p.id === "chatcmpl-1")).toBe(true);
    }
  });
});
