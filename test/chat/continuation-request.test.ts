/** The continuation request (src/core/chat/continuation-request.ts): prefill or instruction, and the budget. */
import { describe, expect, test } from "bun:test";
import { CONTINUE_INSTRUCTION, continuationRequest } from "../../src/core/chat/continuation-request";

const base = { messages: [{ role: "user" as const, content: "Tell me a story" }], max_tokens: 300 };

describe("continuationRequest", () => {
  test("Anthropic: the text sent as a prefill, trailing whitespace cut (Anthropic refuses it) and noted", () => {
    const r = continuationRequest(base, "Once upon a ", "anthropic", 290);
    expect(r.via).toBe("prefill");
    expect(r.request.messages).toEqual([...base.messages, { role: "assistant", content: "Once upon a" }]);
    expect(r.request.max_tokens).toBe(290);
    expect(r.trimmedSpace).toBe(true);
    expect(continuationRequest(base, "Once upon a", "anthropic", 290).trimmedSpace).toBe(false);
  });

  test("a thinking Anthropic call and every other protocol: the text sent, then the instruction", () => {
    for (const [protocol, req] of [
      ["openai", base],
      ["gemini", base],
      ["anthropic", { ...base, reasoning_effort: "low" as const }],
    ] as const) {
      const r = continuationRequest(req, "Once upon a ", protocol, 10);
      expect(r.via).toBe("instruction");
      expect(r.request.messages.slice(-2)).toEqual([
        { role: "assistant", content: "Once upon a " },
        { role: "user", content: CONTINUE_INSTRUCTION },
      ]);
      expect(r.trimmedSpace).toBe(false);
    }
  });

  test("nothing sent yet: the request itself, with the budget; a client's own Anthropic body is dropped once messages change", () => {
    expect(continuationRequest(base, "", "openai", 300).request).toEqual(base);
    const native = { ...base, anthropic: { body: { messages: [] } } };
    expect("anthropic" in continuationRequest(native, "Once", "anthropic", 200).request).toBe(false);
  });
});
