/**
 * What reaches an upstream and what comes back, seen through a recording proxy: an Anthropic
 * upstream gets the client's own body and its stream back byte for byte (only the last
 * `message_delta` gains the cost), its JSON answer as it came; an OpenAI upstream gets the
 * translation. Then the rest of the chat pipeline on this dialect: the response cache, routing
 * policies, PII masking, and count_tokens.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { proxiedGateway, type RecordingProxy } from "../support/chat";
import type { TestGateway } from "../harness";
import { microToKrwRounded } from "../../src/lib/money";
import { books, parseSse, postMessages, tenant } from "./helpers";

setDefaultTimeout(30_000);

let g: TestGateway;
let proxy: RecordingProxy;
beforeAll(async () => {
  ({ g, proxy } = await proxiedGateway(["anthropic", "openai"]));
}, 60_000);
afterAll(async () => {
  await g?.stop();
  proxy?.stop();
});

const events = (text: string) => text.split(/(?<=\n\n)/).filter((e) => e.trim() && !e.startsWith(":"));
const tool = {
  name: "lookup",
  description: "d",
  input_schema: { type: "object", properties: { q: { type: "string" } } },
  cache_control: { type: "ephemeral" },
};

describe("an Anthropic upstream", () => {
  test("gets the client's own body: top_k, metadata, cache_control on a tool, thinking as sent", async () => {
    const { key } = await tenant(g);
    proxy.clear();
    const body = {
      model: "claude-haiku-4-5",
      max_tokens: 3000,
      top_k: 5,
      metadata: { user_id: "u-1" },
      tools: [tool],
      thinking: { type: "enabled", budget_tokens: 1500 },
      system: [{ type: "text", text: "sys", cache_control: { type: "ephemeral" } }],
      messages: [{ role: "user", content: "hello" }],
      provider: { allow_fallbacks: true },
      trace_id: "t",
    };
    const res = await postMessages(g, key.key, body);
    expect(res.status).toBe(200);
    const { provider: _p, trace_id: _t, ...sent } = body;
    expect(proxy.chatBodies()).toEqual([sent]);
    // The answer is the upstream's own JSON, thinking block included.
    expect(await res.json()).toEqual(JSON.parse(proxy.bodies[0]!.response));
  });

  test("its stream is relayed byte for byte; the last message_delta gains cost_krw / cost_usd", async () => {
    const { user, key } = await tenant(g);
    proxy.clear();
    const res = await postMessages(g, key.key, {
      model: "claude-haiku-4-5",
      max_tokens: 3000,
      stream: true,
      thinking: { type: "enabled", budget_tokens: 1024 },
      tools: [tool],
      tool_choice: { type: "auto" },
      messages: [{ role: "user", content: "relay me [sim:tokens=40]" }],
    });
    const got = events(await res.text());
    await proxy.bodies[0]!.ended;
    const sent = events(proxy.bodies[0]!.response);
    expect(got).toHaveLength(sent.length);
    const at = sent.findIndex((e) => e.startsWith("event: message_delta"));
    expect(at).toBe(sent.length - 2);
    expect(got.filter((_, i) => i !== at)).toEqual(sent.filter((_, i) => i !== at));
    const upstream = parseSse(sent[at]!)[0]!.json;
    const mine = parseSse(got[at]!)[0]!.json;
    const b = await books(g, user.id);
    expect(b.charges).toHaveLength(1);
    expect(mine).toEqual({
      ...upstream,
      usage: {
        ...upstream.usage,
        cost_krw: microToKrwRounded(BigInt(b.events[0].cost_micro)),
        cost_usd: expect.any(Number),
      },
    });
    expect(b.events[0]).toMatchObject({
      status: 200,
      api: "messages",
      prompt_tokens:
        upstream.usage.input_tokens +
        upstream.usage.cache_creation_input_tokens +
        upstream.usage.cache_read_input_tokens,
      completion_tokens: upstream.usage.output_tokens,
    });
  });

  test("a PII-masked call goes as the client's body, masked; its stream is relayed with the values restored", async () => {
    const { key } = await tenant(g);
    proxy.clear();
    const res = await postMessages(g, key.key, {
      model: "claude-haiku-4-5",
      max_tokens: 200,
      stream: true,
      messages: [{ role: "user", content: "mail me at kim.minsu@example.com" }],
    });
    const frames = parseSse(await res.text());
    const up = proxy.chatBodies()[0];
    expect(JSON.stringify(up)).not.toContain("kim.minsu@example.com");
    // The client's own body (a string content stays a string), not the translation's text blocks.
    expect(up.messages).toEqual([{ role: "user", content: "mail me at [EMAIL_1]" }]);
    // Relayed: the answer carries the upstream's own message id.
    await proxy.bodies[0]!.ended;
    const upstreamId = JSON.parse(/data: (.*)/.exec(proxy.bodies[0]!.response)![1]!).message.id;
    const text = frames
      .filter((f) => f.json?.delta?.type === "text_delta")
      .map((f) => f.json.delta.text)
      .join("");
    expect(text).toContain("kim.minsu@example.com");
    expect(frames[0]!.json.message.id).toBe(upstreamId);
    expect(frames.at(-1)!.event).toBe("message_stop");
  });
});

describe("a client hanging up mid-stream", () => {
  for (const [model, provider] of [
    ["claude-haiku-4-5", "anthropic"],
    ["gpt-4o-mini", "openai"],
  ] as const) {
    test(`${model} (${provider === "anthropic" ? "relayed" : "translated"}): the upstream is read on to its usage, charged once as 499`, async () => {
      const { user, key } = await tenant(g, 100);
      proxy.clear();
      const ac = new AbortController();
      const res = await fetch(g.url + "/v1/messages", {
        method: "POST",
        signal: ac.signal,
        headers: { "x-api-key": key.key, "content-type": "application/json" },
        body: JSON.stringify({
          model,
          max_tokens: 400,
          stream: true,
          messages: [{ role: "user", content: "slow [sim:tokens=300] [sim:chunk_ms=300]" }],
        }),
      });
      const reader = res.body!.getReader();
      const dec = new TextDecoder();
      let got = "";
      while (!got.includes("text_delta")) got += dec.decode((await reader.read()).value!, { stream: true });
      ac.abort();
      await reader.cancel().catch(() => {});
      await proxy.bodies[0]!.ended; // the rest comes within STREAM_DRAIN_MS: read to the end
      let b = await books(g, user.id);
      for (let i = 0; i < 100 && !b.events.length; i++) await Bun.sleep(30), (b = await books(g, user.id));
      expect(b.events).toHaveLength(1);
      expect(b.events[0]).toMatchObject({ status: 499, provider, completion_tokens: 300, api: "messages" });
      expect(b.charges).toHaveLength(1);
      expect(-BigInt(b.charges[0].amount_micro)).toBe(BigInt(b.events[0].cost_micro));
      expect(b.held).toBe(0n);
    });
  }
});

describe("an OpenAI upstream", () => {
  test("gets the translation: system first, tool results as tool messages, user from metadata, no top_k", async () => {
    const { key } = await tenant(g);
    proxy.clear();
    const res = await postMessages(g, key.key, {
      model: "gpt-4o-mini",
      max_tokens: 100,
      top_k: 3,
      stop_sequences: ["END"],
      metadata: { user_id: "u-7" },
      system: "sys",
      tools: [tool, { type: "web_search_20250305", name: "web_search" }],
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
      messages: [
        { role: "user", content: "q" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "t", signature: "s" },
            { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "x" } },
            { type: "text", text: "calling" },
            { type: "tool_use", id: "toolu_1", name: "lookup", input: { q: "x" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "found" }], is_error: true },
            { type: "text", text: "and?" },
          ],
        },
      ],
    });
    expect(res.status).toBe(200);
    const up = proxy.chatBodies()[0];
    expect(up.messages).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "q" },
      {
        role: "assistant",
        content: "calling",
        tool_calls: [{ id: "toolu_1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } }],
      },
      { role: "tool", tool_call_id: "toolu_1", content: "Error: found" },
      { role: "user", content: "and?" },
    ]);
    expect(up.tools.map((t: any) => t.function.name)).toEqual(["lookup"]);
    expect(up).toMatchObject({ user: "u-7", stop: ["END"], parallel_tool_calls: false, tool_choice: "auto" });
    expect(up.top_k).toBeUndefined();
  });

  test("thinking is a hint: left out for a model that does not reason, sent to one that does", async () => {
    const { key } = await tenant(g);
    proxy.clear();
    const body = {
      max_tokens: 3000,
      thinking: { type: "enabled", budget_tokens: 2048 },
      messages: [{ role: "user", content: "think" }],
    };
    expect((await postMessages(g, key.key, { ...body, model: "gpt-4o-mini" })).status).toBe(200);
    expect((await postMessages(g, key.key, { ...body, model: "claude-haiku-4-5" })).status).toBe(200);
    const [plain, reasoning] = proxy.chatBodies();
    expect(plain.reasoning_effort).toBeUndefined();
    expect(reasoning.thinking).toEqual(body.thinking);
  });
});

describe("the rest of the pipeline", () => {
  test("response cache: the second identical call is free (cached), JSON and stream", async () => {
    const { user, key } = await tenant(g, 1000, { response_cache_mode: "exact" });
    const body = { model: "gpt-4o-mini", max_tokens: 100, messages: [{ role: "user", content: "cache me" }] };
    const first: any = await (await postMessages(g, key.key, body)).json();
    const again = await postMessages(g, key.key, body);
    expect(again.headers.get("x-cost-krw")).toBe("0");
    expect(again.headers.get("x-cost-usd")).toBe("0");
    const hit: any = await again.json();
    expect(hit.cached).toBe(true);
    expect(hit.content).toEqual(first.content);
    const frames = parseSse(await (await postMessages(g, key.key, { ...body, stream: true })).text());
    expect(frames.at(-2)!.json.usage).toMatchObject({ cost_krw: 0, cost_usd: 0 });
    expect(
      frames
        .filter((f) => f.event === "content_block_delta")
        .map((f) => f.json.delta.text)
        .join(""),
    ).toBe(first.content[0].text);
    const b = await books(g, user.id);
    expect(b.charges).toHaveLength(1);
  });

  test("an orch/<slug> routing policy answers and says its decision", async () => {
    const { user, key } = await tenant(g);
    const slug = `msg-${crypto.randomUUID().slice(0, 8)}`;
    const p = await g.call("POST", "/v1/routing-policies", {
      token: user.jwt,
      body: { slug, display_name: "m", policy_type: "fallback", entries: [{ model: "gemini-2.5-flash" }] },
    });
    expect(p.status).toBe(201);
    const res = await postMessages(g, key.key, {
      model: `orch/${slug}`,
      max_tokens: 100,
      messages: [{ role: "user", content: "route me" }],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-policy-decision")).toBeTruthy();
    expect(((await res.json()) as any).content[0].text).toContain("google/gemini-2.5-flash");
  });

  test("count_tokens: Anthropic's own count for Claude (what the call then reports), else the estimate; never a hold", async () => {
    const { user, key, sdk } = await tenant(g);
    const body: any = {
      system: "be brief",
      tools: [tool],
      messages: [{ role: "user", content: "count these words please" }],
    };
    proxy.clear();
    const { data, response } = await sdk.messages.countTokens({ ...body, model: "claude-haiku-4-5" }).withResponse();
    expect(response.headers.get("x-token-count-source")).toBe("anthropic");
    const call = proxy.bodies.find((b) => b.path.endsWith("/count_tokens"))!;
    expect(Object.keys(call.body).sort()).toEqual(["messages", "model", "system", "tools"]);
    const used = await sdk.messages.create({ ...body, model: "claude-haiku-4-5", max_tokens: 50 });
    expect(data.input_tokens).toBe(
      used.usage.input_tokens + used.usage.cache_creation_input_tokens! + used.usage.cache_read_input_tokens!,
    );

    const est = await postMessages(g, key.key, { ...body, model: "gpt-4o-mini" }, "/v1/messages/count_tokens");
    expect(est.headers.get("x-token-count-source")).toBe("estimate");
    const n = ((await est.json()) as any).input_tokens;
    expect(n).toBeGreaterThan(0);
    const img = {
      ...body,
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
            { type: "text", text: "count these words please" },
          ],
        },
      ],
    };
    const withImage = (
      (await (
        await postMessages(g, key.key, { ...img, model: "gpt-4o-mini" }, "/v1/messages/count_tokens")
      ).json()) as any
    ).input_tokens;
    expect(withImage).toBeGreaterThan(n + 1000);

    // Personal data the key masks is counted masked, as the call sends it: the count is the call's input.
    proxy.clear();
    const personal = { model: "claude-haiku-4-5", messages: [{ role: "user", content: "mail kim.minsu@example.com" }] };
    const pii = await postMessages(g, key.key, personal, "/v1/messages/count_tokens");
    expect(pii.headers.get("x-token-count-source")).toBe("anthropic");
    expect(proxy.bodies.map((c) => c.path)).toEqual(["/anthropic/v1/messages/count_tokens"]);
    expect(proxy.bodies[0]!.body.messages).toEqual([{ role: "user", content: "mail [EMAIL_1]" }]);
    const masked = await sdk.messages.create({ ...(personal as any), max_tokens: 50 });
    expect(((await pii.json()) as any).input_tokens).toBe(masked.usage.input_tokens);

    const bad = await postMessages(g, key.key, { ...body, model: "nope" }, "/v1/messages/count_tokens");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.type).toBe("not_found_error");
    const b = await books(g, user.id);
    expect(b.holds).toHaveLength(2); // the two messages.create
    expect(b.charges).toHaveLength(2);
  });
});
