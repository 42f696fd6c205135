/**
 * Anthropic server tools on /v1/messages (issue 28, finding 1): the client's own body is
 * relayed to Claude, so its server tools and every block of it are held, priced and charged.
 * A web search is charged at the catalog's price per 1,000 from `usage.server_tool_use`, in a
 * JSON answer and in a relayed stream; history blocks the translation drops (a search's
 * results) are held; tools that cannot be priced (code execution, MCP servers) are refused
 * with 400 before any hold. The books are checked in SQL: each charge is the list price of
 * what the simulator reported, exactly, in micro-won.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { books, parseSse, postMessages, tenant } from "./helpers";

setDefaultTimeout(60_000);

// Claude Haiku 4.5 list prices (micro-USD per million tokens; per 1,000 searches), at 1,400 KRW/USD.
const HAIKU = { input: 1_000_000n, output: 5_000_000n, search1k: 10_000_000n };
const listMicro = (u: any) => {
  const tokens =
    BigInt(u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens) * HAIKU.input +
    BigInt(u.output_tokens) * HAIKU.output +
    BigInt(u.server_tool_use?.web_search_requests ?? 0) * HAIKU.search1k * 1000n;
  return (tokens * 1_400_000n + 999_999_999n) / 1_000_000_000n;
};

const SEARCH = { type: "web_search_20250305", name: "web_search", max_uses: 10 };
/** An earlier turn's search and its results, as Claude Code sends them back: ~100k tokens the translation drops. */
const history = [
  { role: "user", content: "What changed in the tax law?" },
  {
    role: "assistant",
    content: [
      { type: "server_tool_use", id: "srvtoolu_01", name: "web_search", input: { query: "tax law 2026" } },
      {
        type: "web_search_tool_result",
        tool_use_id: "srvtoolu_01",
        content: [
          {
            type: "web_search_result",
            url: "https://example.com/tax",
            title: "Tax law",
            encrypted_content: "Qk".repeat(200_000),
          },
        ],
      },
      { type: "text", text: "It changed." },
    ],
  },
];

describe("server tools on /v1/messages", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway();
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  test("searches and relayed history are charged at list price, JSON and stream", async () => {
    const { user, key } = await tenant(g, 100_000);
    const body = (stream: boolean) => ({
      model: "claude-haiku-4-5",
      max_tokens: 300,
      stream,
      tools: [SEARCH],
      messages: [...history, { role: "user", content: `Search ten times [sim:web_searches=10] [sim:tokens=120]` }],
    });
    const json = await postMessages(g, key.key, body(false));
    expect(json.status).toBe(200);
    const answer: any = await json.json();
    expect(answer.usage.server_tool_use.web_search_requests).toBe(10);
    expect(answer.usage.input_tokens).toBeGreaterThan(100_000);
    const stream = await postMessages(g, key.key, body(true));
    expect(stream.status).toBe(200);
    const frames = parseSse(await stream.text());
    const delta = frames.find((f) => f.event === "message_delta")!.json;
    const start = frames.find((f) => f.event === "message_start")!.json;
    const streamed = { ...start.message.usage, ...delta.usage };
    expect(streamed.server_tool_use.web_search_requests).toBe(10);

    const b = await books(g, user.id);
    expect(b.charges).toHaveLength(2);
    const charged = b.charges.map((c: any) => -BigInt(c.amount_micro)).sort();
    const list = [listMicro(answer.usage), listMicro(streamed)].sort();
    // 10 searches are 140 KRW of the charge: before, neither they nor the history were held or charged.
    expect(charged).toEqual(list);
    expect(list[0]! > 140_000_000n).toBe(true);
    expect(b.held).toBe(0n);
    expect(b.balance).toBe(100_000n * 1_000_000n - list[0]! - list[1]!);
  });

  test("what cannot be priced is refused with 400 before any hold", async () => {
    const { user, key } = await tenant(g, 1_000);
    const ask = (extra: Record<string, unknown>) =>
      postMessages(g, key.key, {
        model: "claude-haiku-4-5",
        max_tokens: 50,
        messages: [{ role: "user", content: "run it" }],
        ...extra,
      });
    for (const extra of [
      { tools: [{ type: "code_execution_20250825", name: "code_execution" }] },
      { tools: [{ type: "some_future_tool_20270101", name: "future" }] },
      { mcp_servers: [{ type: "url", url: "https://mcp.example.com/sse", name: "x" }] },
    ]) {
      const r = await ask(extra);
      expect(r.status).toBe(400);
      const e: any = await r.json();
      expect(e.type).toBe("error");
      expect(e.error.type).toBe("invalid_request_error");
      expect(e.error.code).toBe("unsupported_parameter");
    }
    // Anthropic's client-executed tools and web fetch are priced (tokens only): answered.
    const ok = await ask({
      tools: [
        { type: "bash_20250124", name: "bash" },
        { type: "web_fetch_20250910", name: "web_fetch", max_uses: 2, max_content_tokens: 5000 },
      ],
    });
    expect(ok.status).toBe(200);
    const b = await books(g, user.id);
    expect(b.holds).toHaveLength(1);
    expect(b.charges).toHaveLength(1);
  });
});

describe("a relayed stream the client leaves before its usage", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({ env: { STREAM_DRAIN_MS: "1000" } });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  test("is billed for the client's whole body, the history the translation drops included", async () => {
    const { user, key } = await tenant(g, 10_000);
    const body = (stream: boolean) => ({
      model: "claude-haiku-4-5",
      max_tokens: 300,
      stream,
      messages: [...history, { role: "user", content: `Go on ${stream} [sim:tokens=200] [sim:chunk_ms=700]` }],
    });
    const ref: any = await (await postMessages(g, key.key, body(false))).json();
    const ac = new AbortController();
    const res = await fetch(`${g.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": key.key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify(body(true)),
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes("text_delta")) {
      const { done, value } = await reader.read();
      if (done) throw new Error("the stream ended early");
      text += new TextDecoder().decode(value);
    }
    ac.abort();
    const db = g.gw.deps.db;
    let events: any[] = [];
    for (let i = 0; i < 200 && events.length < 2; i++) {
      await Bun.sleep(50);
      events = await db.query<any>("select status, prompt_tokens from usage_events where user_id = $1", [user.id]);
    }
    const left = events.find((e) => e.status === 499);
    // Before: the translation's few hundred tokens; the history alone is ~100k as Anthropic counts it.
    expect(Number(left.prompt_tokens)).toBeGreaterThanOrEqual(ref.usage.input_tokens);
    expect((await books(g, user.id)).held).toBe(0n);
  });
});
