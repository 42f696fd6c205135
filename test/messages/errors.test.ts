/**
 * Messages errors as the Anthropic SDK sees them: Anthropic's envelope and error types with the
 * gateway's status codes (the SDK's own error classes), refusals before money moves (the books
 * in SQL), upstream failures before the first byte, and a mid-stream failure (the simulator's
 * `drop` directive) as Anthropic's `error` event with only the received part billed, once.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { startTestGateway, type TestGateway } from "../harness";
import { books, MODELS, parseSse, postMessages, tenant } from "./helpers";

setDefaultTimeout(30_000);

let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway({ env: { MAX_BODY_BYTES: "100000" } });
}, 60_000);
afterAll(async () => {
  await g?.stop();
});

const ask = (content: string, model = "claude-haiku-4-5") => ({
  model,
  max_tokens: 100,
  messages: [{ role: "user" as const, content }],
});

/** The error an SDK call throws (the call must fail). */
async function failure(p: Promise<unknown>): Promise<any> {
  const e = await p.then(
    () => null,
    (err) => err,
  );
  expect(e).not.toBeNull();
  return e;
}

/** Nothing moved: no charge, no usage charged, no hold left open, the balance as credited. */
async function untouched(userId: string, creditKrw: number) {
  const b = await books(g, userId);
  expect(b.charges).toEqual([]);
  expect(b.held).toBe(0n);
  expect(b.balance).toBe(BigInt(creditKrw) * 1_000_000n);
  expect(b.holds.filter((h: any) => h.status === "open" || h.status === "settled")).toEqual([]);
  return b;
}

describe("refusals before money moves", () => {
  test("401: a bad key, by x-api-key and by Bearer → AuthenticationError, authentication_error", async () => {
    for (const sdk of [
      new Anthropic({ apiKey: "sk-gw-nope", baseURL: g.url, maxRetries: 0 }),
      new Anthropic({ authToken: "sk-gw-nope", apiKey: null, baseURL: g.url, maxRetries: 0 }),
    ]) {
      const e = await failure(sdk.messages.create(ask("hi")));
      expect(e).toBeInstanceOf(Anthropic.AuthenticationError);
      expect(e.status).toBe(401);
      expect(e.error).toMatchObject({ type: "error", error: { type: "authentication_error", code: "unauthorized" } });
      expect(e.error.error.message.length).toBeGreaterThan(0);
    }
    const res = await fetch(g.url + "/v1/messages", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });
  });

  test("402 with no credit → billing_error (our status), nothing held or charged", async () => {
    const { user, sdk } = await tenant(g, 0);
    const e = await failure(sdk.messages.create(ask("hi")));
    expect(e).toBeInstanceOf(Anthropic.APIError);
    expect(e.status).toBe(402);
    expect(e.error).toMatchObject({ type: "error", error: { type: "billing_error", code: "insufficient_credits" } });
    const s = await failure(sdk.messages.stream(ask("hi", "gpt-4o-mini")).finalMessage());
    expect(s.status).toBe(402);
    await untouched(user.id, 0);
  });

  test("unknown model → 400 not_found_error; a model the key may not call → 400", async () => {
    const { user, sdk } = await tenant(g, 100, { allowed_models: ["gpt-4o-mini"] });
    const e = await failure(sdk.messages.create(ask("hi", "no-such-model")));
    expect(e).toBeInstanceOf(Anthropic.BadRequestError);
    expect(e.error).toMatchObject({ type: "error", error: { type: "not_found_error", code: "model_not_found" } });
    const n = await failure(sdk.messages.create(ask("hi", "claude-haiku-4-5")));
    expect(n.status).toBe(400);
    expect(n.error.error).toMatchObject({ type: "invalid_request_error", code: "model_not_allowed" });
    await untouched(user.id, 100);
  });

  test("a key without the chat scope → 403 permission_error", async () => {
    const { user, sdk } = await tenant(g, 100, { scopes: ["usage:read"] });
    const e = await failure(sdk.messages.create(ask("hi")));
    expect(e).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(e.error.error.type).toBe("permission_error");
    await untouched(user.id, 100);
  });

  test("bad bodies → 422 / 400 invalid_request_error naming the field", async () => {
    const { user, sdk, key } = await tenant(g, 100);
    const cases: [Record<string, unknown>, string][] = [
      [{ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, "max_tokens"],
      [{ ...ask("hi"), temperature: 1.5 }, "temperature"],
      [{ ...ask("hi"), messages: [] }, "messages"],
      [{ ...ask("hi"), messages: [{ role: "system", content: "x" }] }, "messages"],
      [{ ...ask("hi"), messages: [{ role: "user", content: [] }] }, "messages"],
      [
        { ...ask("hi"), messages: [{ role: "user", content: [{ type: "document", source: {} }] }] },
        "messages.0.content.0.type",
      ],
      [
        {
          ...ask("hi"),
          messages: [{ role: "user", content: [{ type: "image", source: { type: "file", file_id: "f" } }] }],
        },
        "messages.0.content.0.source",
      ],
      [
        {
          ...ask("hi"),
          tools: [{ name: "a", input_schema: { type: "object" } }],
          tool_choice: { type: "tool", name: "b" },
        },
        "tool_choice.name",
      ],
      [
        { ...ask("hi"), max_tokens: 2000, thinking: { type: "enabled", budget_tokens: 4000 } },
        "thinking.budget_tokens",
      ],
      [{ ...ask("hi"), thinking: { type: "enabled" } }, "thinking.budget_tokens"],
    ];
    for (const [body, field] of cases) {
      const e = await failure(sdk.messages.create(body as any));
      expect(e).toBeInstanceOf(Anthropic.UnprocessableEntityError);
      expect(e.error.type).toBe("error");
      expect(e.error.error.type).toBe("invalid_request_error");
      expect(e.error.error.message).toContain(field);
    }
    const res = await fetch(g.url + "/v1/messages", {
      method: "POST",
      headers: { "x-api-key": key.key, "content-type": "application/json" },
      body: "{not json",
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    await untouched(user.id, 100);
  });

  test("a body over MAX_BODY_BYTES → 413 request_too_large, x-api-key answers not stored", async () => {
    const { user, key } = await tenant(g, 100);
    const res = await postMessages(g, key.key, { ...ask("x".repeat(150_000)) });
    expect(res.status).toBe(413);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toMatchObject({
      type: "error",
      error: { type: "request_too_large", code: "payload_too_large" },
    });
    await untouched(user.id, 100);
  });

  test("every upstream failing before the first byte → 502 api_error, the hold released", async () => {
    const { user, sdk } = await tenant(g, 100);
    const e = await failure(sdk.messages.create(ask("boom [sim:fail=500]", "gpt-4o-mini")));
    expect(e).toBeInstanceOf(Anthropic.InternalServerError);
    expect(e.status).toBe(502);
    expect(e.error.error.type).toBe("api_error");
    const s = await failure(sdk.messages.stream(ask("boom [sim:fail=500]", "claude-haiku-4-5")).finalMessage());
    expect(s.status).toBe(502);
    const b = await untouched(user.id, 100);
    expect(b.holds.map((h: any) => h.status)).toEqual(["released", "released"]);
  });
});

describe("retries", () => {
  test("an upstream failing once is retried: one answer, one charge", async () => {
    const { user, sdk } = await tenant(g, 100);
    for (const model of MODELS) {
      const msg = await sdk.messages.create(ask(`retry me ${model} [sim:fail=503x1]`, model));
      expect(msg.stop_reason).toBe("end_turn");
    }
    const b = await books(g, user.id);
    expect(b.charges).toHaveLength(3);
    expect(b.events.map((e: any) => e.status)).toEqual([200, 200, 200]);
  });
});

describe.each(MODELS)("%s: a stream cut after its first bytes", (model) => {
  test("ends with Anthropic's error event; the SDK throws; only the received part is billed, once", async () => {
    const { user, sdk, key } = await tenant(g, 100);
    const stream = sdk.messages.stream({
      model,
      max_tokens: 200,
      messages: [{ role: "user", content: "cut me [sim:tokens=60] [sim:drop=2]" }],
    });
    const text: string[] = [];
    stream.on("text", (t) => text.push(t));
    const e = await failure(stream.finalMessage());
    expect(e).toBeInstanceOf(Anthropic.APIError);
    expect(text.join("").length).toBeGreaterThan(0);
    const b = await books(g, user.id);
    expect(b.charges).toHaveLength(1);
    expect(b.events).toHaveLength(1);
    expect(b.events[0]).toMatchObject({ status: 502, api: "messages" });
    expect(b.held).toBe(0n);

    const raw = await postMessages(g, key.key, {
      model,
      max_tokens: 200,
      stream: true,
      messages: [{ role: "user", content: "raw cut [sim:tokens=60] [sim:drop=2]" }],
    });
    const frames = parseSse(await raw.text());
    const last = frames.at(-1)!;
    expect(last.event).toBe("error");
    expect(last.json).toMatchObject({ type: "error", error: { type: "api_error", code: "upstream_error" } });
    expect(frames.some((f) => f.event === "message_stop")).toBe(false);
  });
});
