/**
 * PII masking on a Codex-like Responses turn (instructions holding an e-mail, a `reasoning`
 * item with `encrypted_content`, a `function_call` whose arguments name the address, its
 * `function_call_output` holding a phone number): the call never breaks, nothing personal
 * reaches the upstream (seen at a recording proxy), the tool-call id and name go as sent, and
 * the answer comes back restored, JSON and streamed; each call is charged once. There is no
 * Responses-protocol upstream: every Responses call is translated (docs/responses.md), and a
 * `reasoning` item, opaque to other protocols, is left out of the translation whether or not
 * anything was masked (docs/pii-masking.md).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { TestGateway } from "../harness";
import { proxiedGateway, type RecordingProxy } from "../support/chat";
import { books } from "../messages/helpers";
import { parseSse, tenant } from "./helpers";

setDefaultTimeout(30_000);

let g: TestGateway;
let proxy: RecordingProxy;
beforeAll(async () => {
  ({ g, proxy } = await proxiedGateway(["openai", "anthropic"]));
}, 60_000);
afterAll(async () => {
  await g?.stop();
  proxy?.stop();
});

const EMAIL = "park.hana@example.net";
const PHONE = "010-5555-0199";
const ENCRYPTED = "gAAAAABpQ7x-sim_encrypted_reasoning_0b1c2d3e4f==";

function turn(model: string, stream: boolean) {
  return {
    model,
    stream,
    store: false,
    include: ["reasoning.encrypted_content"],
    instructions: `You are a coding agent. The user is ${EMAIL}.`,
    input: [
      { type: "message", role: "user", content: [{ type: "input_text", text: "Find the owner." }] },
      { type: "reasoning", id: "rs_68a1", summary: [], encrypted_content: ENCRYPTED },
      {
        type: "function_call",
        call_id: "call_Q1",
        name: "shell",
        arguments: JSON.stringify({ command: ["grep", EMAIL, "owners.txt"] }),
      },
      { type: "function_call_output", call_id: "call_Q1", output: `Owner: ${PHONE}` },
      {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: `Reply ${EMAIL} ${PHONE} [sim:tokens=40]` }],
      },
    ],
    tools: [
      { type: "function", name: "shell", parameters: { type: "object", properties: { command: { type: "array" } } } },
    ],
  };
}

function post(key: string, body: unknown) {
  return fetch(g.url + "/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

function expectMasked() {
  expect(proxy.bodies).toHaveLength(1);
  const raw = proxy.bodies[0]!.raw;
  expect(raw).not.toContain(EMAIL);
  expect(raw).not.toContain(PHONE);
  expect(raw).toContain("[EMAIL_1]");
  expect(raw).toContain("[PHONE_1]");
  expect(raw).toContain("call_Q1");
  expect(raw).toContain('"shell"');
}

describe("a masked Responses turn", () => {
  for (const model of ["gpt-4o-mini", "claude-haiku-4-5"]) {
    test(`${model}: nothing personal leaves, the answer is restored (JSON and stream), charged once each`, async () => {
      const { user, key } = await tenant(g, 1000);
      proxy.clear();
      const res = await post(key.key, turn(model, false));
      expect(res.status).toBe(200);
      expectMasked();
      const body: any = await res.json();
      expect(body.output_text ?? JSON.stringify(body.output)).toContain(`Reply ${EMAIL} ${PHONE}`);

      proxy.clear();
      const s = await post(key.key, turn(model, true));
      expect(s.status).toBe(200);
      const frames = parseSse(await s.text());
      expectMasked();
      const text = frames
        .filter((f) => f.event === "response.output_text.delta")
        .map((f) => f.json.delta)
        .join("");
      expect(text).toContain(`Reply ${EMAIL} ${PHONE}`);
      expect(text).not.toMatch(/\[(EMAIL|PHONE)_\d\]/);
      expect(frames.some((f) => f.event === "response.completed")).toBe(true);

      const b = await books(g, user.id);
      expect(b.charges).toHaveLength(2);
      expect(b.events).toHaveLength(2);
      expect(new Set(b.charges.map((c: any) => c.request_id)).size).toBe(2);
      expect(b.held).toBe(0n);
    });
  }
});
