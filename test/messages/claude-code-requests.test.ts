/**
 * Claude Code's own requests (test/fixtures/claude-code/, captured from Claude Code 2.1.332)
 * replayed against a gateway whose upstreams sit behind a recording proxy: a Claude model gets
 * the client's body and `anthropic-beta` as sent (mid-conversation `system` messages,
 * adaptive thinking, `output_config`, `context_management`, `metadata`, `?beta=true`); an
 * OpenAI or Gemini model gets a faithful translation and the answer names what it could not
 * carry in `x-gateway-warnings`. Then the new fields one by one, and count_tokens.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { proxiedGateway, type RecordingProxy } from "../support/chat";
import type { TestGateway } from "../harness";
import { books, parseSse, postMessages, tenant } from "./helpers";

setDefaultTimeout(30_000);

interface Captured {
  path: string;
  headers: Record<string, string>;
  body: Record<string, any>;
}
const CAPTURE: Captured[] = JSON.parse(
  readFileSync(join(import.meta.dir, "../fixtures/claude-code/default-model-tool-turn.json"), "utf8"),
);
const [FIRST, SECOND] = CAPTURE as [Captured, Captured];
const BETA = FIRST.headers["anthropic-beta"]!;

let g: TestGateway;
let proxy: RecordingProxy;
beforeAll(async () => {
  ({ g, proxy } = await proxiedGateway(["anthropic", "openai", "google"]));
}, 60_000);
afterAll(async () => {
  await g?.stop();
  proxy?.stop();
});

/** Sends a captured request as Claude Code did (path with `?beta=true`, its beta header), on `model`. */
function replay(key: string, c: Captured, model: string, extra: Record<string, unknown> = {}) {
  return fetch(g.url + c.path, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "anthropic-version": "2023-06-01",
      "anthropic-beta": c.headers["anthropic-beta"]!,
      "content-type": "application/json",
    },
    body: JSON.stringify({ ...c.body, model, ...extra }),
  });
}

const warned = (res: Response) => (res.headers.get("x-gateway-warnings") ?? "").split(", ").filter(Boolean);

describe("Claude Code's capture", () => {
  test("has what the gateway must take: system messages inside messages, adaptive thinking, output_config", () => {
    expect(FIRST.path).toBe("/v1/messages?beta=true");
    expect(FIRST.body.messages.map((m: any) => m.role)).toEqual(["user", "system"]);
    expect(SECOND.body.messages.map((m: any) => m.role)).toEqual(["user", "system", "assistant", "user"]);
    expect(FIRST.body.thinking).toEqual({ type: "adaptive", display: "omitted" });
    expect(FIRST.body.output_config).toEqual({ effort: "medium" });
    expect(FIRST.body.context_management.edits[0].type).toBe("clear_thinking_20251015");
    expect(BETA).toContain("context-management-2025-06-27");
  });

  test("on a Claude model: both turns relayed as sent, beta header included, charged once each", async () => {
    const { user, key } = await tenant(g, 5000, { pii_masking_enabled: false });
    proxy.clear();
    for (const c of CAPTURE) {
      const res = await replay(key.key, c, "claude-opus-5-5");
      expect(res.status).toBe(200);
      const frames = parseSse(await res.text());
      expect(frames.at(-1)!.event).toBe("message_stop");
      expect(warned(res)).toEqual([]);
    }
    expect(proxy.bodies.map((b) => b.path)).toEqual(["/anthropic/v1/messages", "/anthropic/v1/messages"]);
    proxy.bodies.forEach((b, i) => {
      const { max_tokens: _m, model: _mo, ...sent } = CAPTURE[i]!.body;
      const { max_tokens, model, ...got } = b.body;
      expect(got).toEqual(sent);
      expect(model).toBe("claude-opus-5-5");
      expect(max_tokens).toBeLessThanOrEqual(CAPTURE[i]!.body.max_tokens);
      expect(b.anthropicBeta).toBe(BETA);
    });
    const bk = await books(g, user.id);
    expect(bk.events).toHaveLength(2);
    expect(bk.charges).toHaveLength(2);
    expect(bk.held).toBe(0n);
  });

  test("on an OpenAI model: the system message stays at its position; what OpenAI cannot take is named", async () => {
    const { key } = await tenant(g, 5000);
    proxy.clear();
    const res = await replay(key.key, SECOND, "gpt-4o-mini");
    expect(res.status).toBe(200);
    await res.text();
    const up = proxy.chatBodies()[0];
    expect(up.messages.map((m: any) => m.role)).toEqual(["system", "user", "system", "assistant", "tool"]);
    expect(up.messages[2].content).toStartWith("# Environment");
    expect(up.messages[4].tool_call_id).toBe(SECOND.body.messages[3].content[0].tool_use_id);
    expect(up.user).toBe(SECOND.body.metadata.user_id);
    for (const k of ["context_management", "output_config", "thinking", "anthropic"]) expect(up).not.toHaveProperty(k);
    expect(warned(res)).toEqual([
      "unsupported-setting=context_management; provider=openai",
      "unsupported-setting=anthropic-beta; provider=openai",
    ]);
  });

  test("on a Gemini model: system messages join systemInstruction; effort becomes the thinking budget", async () => {
    const { key } = await tenant(g, 5000);
    proxy.clear();
    const res = await replay(key.key, FIRST, "gemini-2.5-flash", { output_config: { effort: "low" } });
    expect(res.status).toBe(200);
    await res.text();
    const up = proxy.chatBodies()[0];
    const system = up.systemInstruction.parts.map((p: any) => p.text).join("\n");
    expect(system).toContain("You are a Claude agent");
    expect(system).toContain("# Environment");
    expect(up.contents.map((c: any) => c.role)).toEqual(["user"]);
    // The system message of the turn says `medium`, which wins over the request's `low`.
    expect(up.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 8192 });
    expect(warned(res)).toEqual([
      "unsupported-setting=user; provider=google",
      "unsupported-setting=context_management; provider=google",
      "unsupported-setting=anthropic-beta; provider=google",
    ]);
  });

  test("count_tokens takes Claude Code's body (system messages, ?beta=true): Anthropic counts for a Claude model", async () => {
    const { key } = await tenant(g, 1000, { pii_masking_enabled: false });
    const { max_tokens: _m, stream: _s, metadata: _md, ...count } = SECOND.body;
    proxy.clear();
    for (const [model, source] of [
      ["claude-haiku-4-5", "anthropic"],
      ["gpt-4o-mini", "estimate"],
    ] as const) {
      const res = await fetch(`${g.url}/v1/messages/count_tokens?beta=true`, {
        method: "POST",
        headers: { "x-api-key": key.key, "anthropic-beta": BETA, "content-type": "application/json" },
        body: JSON.stringify({ ...count, model }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-token-count-source")).toBe(source);
      expect(((await res.json()) as any).input_tokens).toBeGreaterThan(100);
    }
    const upstream = proxy.bodies.find((b) => b.path === "/anthropic/v1/messages/count_tokens")!;
    expect(upstream.body.context_management).toEqual(count.context_management);
    expect(upstream.body.messages).toEqual(count.messages);
  });
});

describe("the new fields in translation", () => {
  const ask = { max_tokens: 400, messages: [{ role: "user", content: "hello" }] };

  test("output_config.format becomes response_format json_schema; effort a reasoning effort", async () => {
    const { key } = await tenant(g);
    const schema = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
    proxy.clear();
    const res = await postMessages(g, key.key, {
      ...ask,
      model: "gemini-2.5-flash",
      output_config: { effort: "high", format: { type: "json_schema", schema } },
    });
    expect(res.status).toBe(200);
    const up = proxy.chatBodies()[0];
    expect(up.generationConfig.responseMimeType).toBe("application/json");
    expect(up.generationConfig.responseJsonSchema).toEqual(schema);
    expect(up.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 16384 });
    proxy.clear();
    await postMessages(g, key.key, {
      ...ask,
      model: "gpt-4o-mini",
      output_config: { format: { type: "json_schema", schema } },
    });
    expect(proxy.chatBodies()[0].response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "output", schema },
    });
  });

  test("a system message marked clear_at next_user_message is left out once a user turn follows it", async () => {
    const { key } = await tenant(g);
    proxy.clear();
    const res = await postMessages(g, key.key, {
      model: "gpt-4o-mini",
      max_tokens: 100,
      messages: [
        { role: "user", content: "one" },
        { role: "system", content: "gone", clear_at: "next_user_message" },
        { role: "assistant", content: "ok" },
        { role: "user", content: "two" },
        { role: "system", content: [{ type: "text", text: "kept" }], clear_at: "next_user_message" },
      ],
    });
    expect(res.status).toBe(200);
    const up = proxy.chatBodies()[0];
    expect(up.messages).toEqual([
      { role: "user", content: "one" },
      { role: "assistant", content: "ok" },
      { role: "user", content: "two" },
      { role: "system", content: "kept" },
    ]);
  });

  test("top_k, server tools, a system message's tool_removal and other output_config members are named", async () => {
    const { key } = await tenant(g);
    const res = await postMessages(g, key.key, {
      ...ask,
      model: "gpt-4o-mini",
      top_k: 5,
      output_config: { task_budget: { type: "tokens", total: 1000 } },
      tools: [{ type: "web_search_20250305", name: "web_search" }],
      messages: [
        { role: "user", content: "hello" },
        { role: "system", content: [{ type: "tool_removal", tool: { type: "tool_reference", name: "x" } }] },
      ],
    });
    expect(res.status).toBe(200);
    expect(warned(res)).toEqual([
      "unsupported-setting=top_k; provider=openai",
      "unsupported-setting=output_config.task_budget; provider=openai",
      "unsupported-setting=web_search_20250305; provider=openai",
      "unsupported-setting=tool_removal; provider=openai",
    ]);
  });

  test("Claude Code's tool search: a tool_addition adds its tool, a tool_reference result is text", async () => {
    const { key } = await tenant(g);
    const search = { name: "ToolSearch", input_schema: { type: "object", properties: { q: { type: "string" } } } };
    const added = { name: "mcp__notes__read", description: "r", input_schema: { type: "object", properties: {} } };
    proxy.clear();
    const res = await postMessages(g, key.key, {
      model: "gpt-4o-mini",
      max_tokens: 100,
      tools: [search],
      messages: [
        { role: "user", content: "find the notes tool" },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "toolu_1", name: "ToolSearch", input: { q: "notes" } }],
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: [{ type: "tool_reference", tool_name: "mcp__notes__read" }],
            },
          ],
        },
        { role: "system", content: [{ type: "tool_addition", tool: { type: "tool_definition", definition: added } }] },
      ],
    });
    expect(res.status).toBe(200);
    expect(warned(res)).toEqual([]);
    const up = proxy.chatBodies()[0];
    expect(up.tools.map((t: any) => t.function.name)).toEqual(["ToolSearch", "mcp__notes__read"]);
    expect(up.messages[2]).toEqual({
      role: "tool",
      tool_call_id: "toolu_1",
      content: "Tool 'mcp__notes__read' is available.",
    });
  });

  test("thinking between_tools is taken; a user turn without content is a 422 at its content", async () => {
    const { key } = await tenant(g);
    const ok = await postMessages(g, key.key, { ...ask, model: "gpt-4o-mini", thinking: { type: "between_tools" } });
    expect(ok.status).toBe(200);
    const bad = await postMessages(g, key.key, { ...ask, model: "gpt-4o-mini", messages: [{ role: "user" }] });
    expect(bad.status).toBe(422);
    const err = (await bad.json()) as any;
    expect(err.type).toBe("error");
    expect(err.error.message).toContain("body.messages.0.content");
    const effort = await postMessages(g, key.key, { ...ask, model: "gpt-4o-mini", output_config: { effort: "huge" } });
    expect(effort.status).toBe(422);
  });
});
