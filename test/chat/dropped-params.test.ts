/**
 * A request setting the answering vendor does not take is reported, not dropped silently: the
 * `x-gateway-warnings` header names it and the provider on JSON and streamed answers (the
 * dialects' bodies are unchanged), and /metrics counts it in `gateway_dropped_params_total`.
 * A setting the vendor takes produces no warning. Real HTTP against the simulator.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { suiteGateway, type TestGateway } from "../harness";
import { chat, chatFetch, parseSse, tenant, user } from "../support/chat";

setDefaultTimeout(60_000);

const HEADER = "x-gateway-warnings";

/** One sample of a labelled counter in a Prometheus scrape (0 when absent). */
async function dropped(g: TestGateway, provider: string, param: string): Promise<number> {
  const text = await g.metrics();
  const line = text
    .split("\n")
    .find(
      (l) =>
        l.startsWith("gateway_dropped_params_total{") &&
        l.includes(`provider="${provider}"`) &&
        l.includes(`param="${param}"`),
    );
  return line ? Number(line.split(" ").pop()) : 0;
}

describe("dropped request settings", () => {
  const gw = suiteGateway();

  test("Anthropic takes no logit_bias or seed: the JSON answer says so in a header, and /metrics counts it", async () => {
    const g = gw();
    const { key } = await tenant(g);
    const before = await dropped(g, "anthropic", "logit_bias");
    const r = await chat(g, key.key, {
      model: "claude-haiku-4-5",
      messages: user("warn"),
      logit_bias: { "50256": -100 },
      seed: 7,
    });
    expect(r.status).toBe(200);
    expect(r.headers.get(HEADER)).toBe(
      "unsupported-setting=seed; provider=anthropic, unsupported-setting=logit_bias; provider=anthropic",
    );
    // The OpenAI body is as OpenAI's SDK validates it: nothing added.
    expect(r.body.warnings).toBeUndefined();
    expect(Object.keys(r.body).sort()).toEqual(
      Object.keys((await chat(g, key.key, { model: "claude-haiku-4-5", messages: user("plain") })).body).sort(),
    );
    expect(await dropped(g, "anthropic", "logit_bias")).toBe(before + 1);
  });

  test("the same settings reach an OpenAI-compatible vendor: no header, nothing counted", async () => {
    const g = gw();
    const { key } = await tenant(g);
    const before = await dropped(g, "openai", "logit_bias");
    const r = await chat(g, key.key, {
      model: "gpt-4o-mini",
      messages: user("no warn"),
      logit_bias: { "50256": -100 },
      seed: 7,
    });
    expect(r.status).toBe(200);
    expect(r.headers.get(HEADER)).toBeNull();
    expect(await dropped(g, "openai", "logit_bias")).toBe(before);
  });

  test("a streamed answer carries the header before its first event", async () => {
    const g = gw();
    const { key } = await tenant(g);
    const res = await chatFetch(g, key.key, {
      model: "gemini-2.5-flash",
      messages: user("stream warn"),
      stream: true,
      parallel_tool_calls: false,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get(HEADER)).toBe("unsupported-setting=parallel_tool_calls; provider=google");
    const events = parseSse(await res.text());
    expect(events.at(-1)?.data).toBe("[DONE]");
    // An Anthropic stream relayed to a Messages client, when the setting is Anthropic's own: nothing dropped.
    const relayed = await fetch(g.url + "/v1/messages", {
      method: "POST",
      headers: { "x-api-key": key.key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({
        model: "claude-haiku-4-5",
        max_tokens: 64,
        stream: true,
        top_k: 5,
        messages: user("relay"),
      }),
    });
    expect(relayed.status).toBe(200);
    expect(relayed.headers.get(HEADER)).toBeNull();
    await relayed.text();
  });

  test("Anthropic's extended thinking leaves temperature out, and says so", async () => {
    const g = gw();
    const { key } = await tenant(g);
    const r = await chat(g, key.key, {
      model: "claude-sonnet-4-5",
      messages: user("think"),
      reasoning_effort: "low",
      max_tokens: 4096,
      temperature: 0.2,
    });
    expect(r.status).toBe(200);
    expect(r.headers.get(HEADER)).toBe("unsupported-setting=temperature; provider=anthropic");
  });

  test("Responses, JSON and streamed: the same header, the body as the Responses format has it", async () => {
    const g = gw();
    const { key } = await tenant(g);
    const body = { model: "gemini-2.5-flash", input: "responses warn", parallel_tool_calls: false };
    const json = await g.call("POST", "/v1/responses", { token: key.key, body });
    expect(json.status).toBe(200);
    expect(json.headers.get(HEADER)).toBe("unsupported-setting=parallel_tool_calls; provider=google");
    expect(json.body.object).toBe("response");
    expect(json.body.warnings).toBeUndefined();
    const stream = await fetch(g.url + "/v1/responses", {
      method: "POST",
      headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
      body: JSON.stringify({ ...body, stream: true }),
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get(HEADER)).toBe("unsupported-setting=parallel_tool_calls; provider=google");
    await stream.text();
    const plain = await g.call("POST", "/v1/responses", {
      token: key.key,
      body: { model: "gemini-2.5-flash", input: "no warn" },
    });
    expect(plain.headers.get(HEADER)).toBeNull();
  });

  test("embeddings: Gemini takes no end-user id; OpenAI does", async () => {
    const g = gw();
    const { key } = await tenant(g);
    const before = await dropped(g, "google", "user");
    const gemini = await g.call("POST", "/v1/embeddings", {
      token: key.key,
      body: { model: "gemini-embedding-001", input: "hello", user: "u-1" },
    });
    expect(gemini.status).toBe(200);
    expect(gemini.headers.get(HEADER)).toBe("unsupported-setting=user; provider=google");
    expect(await dropped(g, "google", "user")).toBe(before + 1);
    const openai = await g.call("POST", "/v1/embeddings", {
      token: key.key,
      body: { model: "text-embedding-3-small", input: "hello", user: "u-1" },
    });
    expect(openai.status).toBe(200);
    expect(openai.headers.get(HEADER)).toBeNull();
  });
});
