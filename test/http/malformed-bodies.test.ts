/**
 * Malformed bodies are the client's error, never a 500 (nor a 502 from
 * an adapter that could not read them). Wrong-typed array items, parts missing their
 * required field and `null` where an object belongs are 422 with the `loc` of the bad value;
 * JSON nested deeper than MAX_JSON_DEPTH is 400 invalid_request before anything reads it.
 * Nothing is held or charged for any of them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { fastUser } from "../support/http";
import { money } from "../video/helpers";

const MODELS = ["gpt-4o-mini", "claude-haiku-4-5", "gemini-2.5-flash"];
const hi = { role: "user", content: "hi" };
const call = (extra: Record<string, unknown>) => ({ role: "assistant", content: null, ...extra });

/** [name, body fields, the loc the 422 must name (a prefix of it)] */
const CHAT: [string, Record<string, unknown>, (string | number)[]][] = [
  [
    "tool_calls: [1]",
    { messages: [hi, call({ tool_calls: [1] }), { role: "tool", tool_call_id: "a", content: "x" }] },
    ["body", "messages", 1, "tool_calls", 0],
  ],
  [
    "a tool call without its function",
    { messages: [hi, call({ tool_calls: [{ id: "a", type: "function" }] })] },
    ["body", "messages", 1, "tool_calls", 0, "function"],
  ],
  [
    "a tool call whose function is null",
    { messages: [hi, call({ tool_calls: [{ id: "a", type: "function", function: null }] })] },
    ["body", "messages", 1, "tool_calls", 0, "function"],
  ],
  [
    "tool call arguments as an object",
    { messages: [hi, call({ tool_calls: [{ id: "a", type: "function", function: { name: "f", arguments: {} } }] })] },
    ["body", "messages", 1, "tool_calls", 0, "function", "arguments"],
  ],
  [
    "a text part without text",
    { messages: [{ role: "user", content: [{ type: "text" }] }] },
    ["body", "messages", 0, "content", 0, "text"],
  ],
  [
    "an image part without image_url",
    { messages: [{ role: "user", content: [{ type: "image_url" }] }] },
    ["body", "messages", 0, "content", 0, "image_url"],
  ],
  [
    "an image part whose url is a number",
    { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: 5 } }] }] },
    ["body", "messages", 0, "content", 0, "image_url", "url"],
  ],
  [
    "a part of an unknown type",
    { messages: [{ role: "user", content: [{ type: "hologram" }] }] },
    ["body", "messages", 0, "content", 0, "type"],
  ],
  ["a part that is a number", { messages: [{ role: "user", content: [7] }] }, ["body", "messages", 0, "content", 0]],
  ["a null message", { messages: [null] }, ["body", "messages", 0]],
  ["tools: [1]", { messages: [hi], tools: [1] }, ["body", "tools", 0]],
  [
    "a function tool without its function",
    { messages: [hi], tools: [{ type: "function" }] },
    ["body", "tools", 0, "function"],
  ],
  [
    "a function tool whose function is null",
    { messages: [hi], tools: [{ type: "function", function: null }] },
    ["body", "tools", 0, "function"],
  ],
  [
    "a forced tool_choice without the function",
    { messages: [hi], tools: [{ type: "function", function: { name: "f" } }], tool_choice: { type: "function" } },
    ["body", "tool_choice"],
  ],
  ["stop: [1]", { messages: [hi], stop: [1] }, ["body", "stop"]],
  ["provider: null", { messages: [hi], provider: null }, ["body", "provider"]],
];

const RESPONSES: [string, Record<string, unknown>, (string | number)[]][] = [
  ["input: [1]", { input: [1] }, ["body", "input"]],
  [
    "an input_text part without text",
    { input: [{ role: "user", content: [{ type: "input_text" }] }] },
    ["body", "input", 0, "content", 0, "text"],
  ],
  ["tools: [1]", { input: "hi", tools: [1] }, ["body", "tools", 0]],
  [
    "function output parts that are numbers",
    { input: [{ type: "function_call_output", call_id: "c", output: [1] }] },
    ["body", "input", 0],
  ],
];

const deepArray = (n: number) => "[".repeat(n) + "]".repeat(n);
const deepObject = (n: number) => '{"a":'.repeat(n) + "1" + "}".repeat(n);

describe("malformed bodies", () => {
  let g: TestGateway;
  let user: TestUser;
  let key: string;
  beforeAll(async () => {
    g = await startTestGateway({ db: "pglite", env: { VIDEO_POLL_WORKERS: "0" } });
    user = await fastUser(g, { creditKrw: 100_000 });
    key = (await g.newKey(user)).key;
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  const expect422 = (r: { status: number; body: any }, loc: (string | number)[], label: string) => {
    expect({ label, status: r.status }).toEqual({ label, status: 422 });
    const locs = (r.body.detail as { loc: (string | number)[] }[]).map((d) => d.loc);
    const named = locs.some((l) => JSON.stringify(l.slice(0, loc.length)) === JSON.stringify(loc));
    expect({ label, locs, named }).toEqual({ label, locs, named: true });
  };

  test("chat: wrong-typed items, parts without their field, null objects are 422 at their loc, on every provider family", async () => {
    const before = await money(g, user);
    for (const model of MODELS) {
      for (const [name, fields, loc] of CHAT) {
        const r = await g.call("POST", "/v1/chat/completions", {
          token: key,
          body: { model, max_tokens: 5, ...fields },
        });
        expect422(r, loc, `${model}: ${name}`);
      }
    }
    expect(await money(g, user)).toEqual(before);
  }, 60_000);

  test("responses: the same shapes are 422", async () => {
    const before = await money(g, user);
    for (const model of MODELS) {
      for (const [name, fields, loc] of RESPONSES) {
        const r = await g.call("POST", "/v1/responses", {
          token: key,
          body: { model, max_output_tokens: 5, ...fields },
        });
        expect422(r, loc, `${model}: ${name}`);
      }
    }
    expect(await money(g, user)).toEqual(before);
  }, 60_000);

  test("JSON nested 100,000 deep is 400 invalid_request in the chat, responses and video bodies, inside a field or as the whole body", async () => {
    const before = await money(g, user);
    const bodies: [string, string][] = [
      [
        "/v1/chat/completions",
        `{"model":"gpt-4o-mini","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"x":${deepArray(100_000)}}`,
      ],
      [
        "/v1/chat/completions",
        `{"model":"claude-haiku-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${deepObject(100_000)}}}]}`,
      ],
      ["/v1/responses", `{"model":"gpt-4o-mini","input":"hi","metadata":{"a":${deepArray(100_000)}}}`],
      ["/v1/video/generations", `{"prompt":"a kite","x":${deepObject(100_000)}}`],
    ];
    for (const path of ["/v1/chat/completions", "/v1/responses", "/v1/video/generations"])
      bodies.push([path, deepArray(100_000)], [path, deepObject(100_000)]);
    for (const [path, raw] of bodies) {
      const r = await g.call("POST", path, { token: key, raw, headers: { "content-type": "application/json" } });
      expect({ path, head: raw.slice(0, 40), status: r.status, body: r.body }).toEqual({
        path,
        head: raw.slice(0, 40),
        status: 400,
        body: { error: { message: expect.any(String), type: "invalid_request", code: "invalid_request", param: null } },
      });
    }
    expect(await money(g, user)).toEqual(before);
    const jobs = await g.gw.deps.db.query<{ n: number }>(
      "select count(*)::int as n from video_jobs where user_id = $1",
      [user.id],
    );
    expect(jobs[0]!.n).toBe(0);
  }, 60_000);

  test("nesting up to MAX_JSON_DEPTH is accepted: a deep but legal tool schema still gets an answer", async () => {
    // body → tools → [0] → function → parameters: 5 levels, then 50 nested objects.
    let schema: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 25; i++) schema = { type: "object", properties: { x: schema } };
    const r = await g.call("POST", "/v1/chat/completions", {
      token: key,
      body: {
        model: "gpt-4o-mini",
        max_tokens: 5,
        messages: [hi],
        tools: [{ type: "function", function: { name: "f", parameters: schema } }],
      },
    });
    expect(r.status).toBe(200);
  }, 30_000);
});
