/**
 * The simulator's Anthropic server tools: with a `web_search_…` / `web_fetch_…` tool offered,
 * `[sim:web_searches=N]` / `[sim:web_fetches=N]` are reported in `usage.server_tool_use` (at
 * most the tool's `max_uses`), in the JSON answer and in the stream's `message_delta`; without
 * such a tool, no `server_tool_use`. History blocks other than text count by their JSON text.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { ANTHROPIC_AUTH, parseSse, postJson } from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.stop());
beforeEach(() => sim.reset());

const post = (body: object) => postJson(`${sim.baseUrl("anthropic")}/v1/messages`, body, ANTHROPIC_AUTH);
const ask = (content: string, tools: object[], stream = false) => ({
  model: "claude-haiku-4-5",
  max_tokens: 100,
  stream,
  tools,
  messages: [{ role: "user", content }],
});

describe("Anthropic server tools in the simulator", () => {
  test("searches and fetches are reported, capped at max_uses, JSON and stream", async () => {
    const tools = [
      { type: "web_search_20250305", name: "web_search", max_uses: 3 },
      { type: "web_fetch_20250910", name: "web_fetch" },
    ];
    const json = await (await post(ask("find it [sim:web_searches=5] [sim:web_fetches=2]", tools))).json();
    expect(json.usage.server_tool_use).toEqual({ web_search_requests: 3, web_fetch_requests: 2 });
    const res = await post(ask("find it [sim:web_searches=2]", tools, true));
    const delta = parseSse(await res.text())
      .map((e) => JSON.parse(e.data))
      .find((d) => d.type === "message_delta");
    expect(delta.usage.server_tool_use).toEqual({ web_search_requests: 2, web_fetch_requests: 0 });
  });

  test("no server tool offered: no server_tool_use", async () => {
    const json = await (await post(ask("find it [sim:web_searches=5]", []))).json();
    expect(json.usage.server_tool_use).toBeUndefined();
  });

  test("a search result in the history counts by its JSON text", async () => {
    const result = { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ x: "y".repeat(4000) }] };
    const body = {
      model: "claude-haiku-4-5",
      max_tokens: 100,
      messages: [
        { role: "user", content: "q" },
        { role: "assistant", content: [result, { type: "text", text: "a" }] },
        { role: "user", content: "more" },
      ],
    };
    const json = await (await post(body)).json();
    expect(json.usage.input_tokens).toBeGreaterThan(1000);
  });
});
