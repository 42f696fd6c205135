/**
 * Errors rendered once, in the dialect the route declares: the Messages routes declare
 * Anthropic's (`x-error-dialect: anthropic`, shown in the OpenAPI document), every other route
 * answers in the OpenAI dialect. The same failure (a bad key refused by the body gate, a body
 * failing validation, a body over the limit refused before routing) gets the same status,
 * message, code and headers in both, each in its own envelope. Which dialect follows the route's
 * declaration, not its URL.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { tenant } from "../support/chat";
import { ErrorDialects } from "../../src/http/error-dialect";
import { renderError } from "../../src/http/errors";
import { GatewayError } from "../../src/core/errors";

setDefaultTimeout(30_000);

let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway({ env: { MAX_BODY_BYTES: "100000" } });
}, 60_000);
afterAll(async () => {
  await g?.stop();
});

const EN = { "accept-language": "en" };
const chatBody = { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] };
const messagesBody = { ...chatBody, max_tokens: 10 };

async function post(path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(g.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...EN, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

describe("each route's errors in its own dialect", () => {
  test("auth: a bad key refused before the body is read", async () => {
    const bad = { authorization: "Bearer sk-gw-nope" };
    const openai = await post("/v1/chat/completions", chatBody, bad);
    const anthropic = await post("/v1/messages", messagesBody, bad);
    const message = "The API key is invalid or deleted.";
    expect(openai.status).toBe(401);
    expect(openai.body).toEqual({
      detail: { error: "unauthorized", message },
      error: { message, type: "authentication_error", code: "unauthorized", param: null },
    });
    expect(anthropic.status).toBe(401);
    expect(anthropic.body).toEqual({
      type: "error",
      error: { type: "authentication_error", message, code: "unauthorized" },
      request_id: anthropic.headers.get("x-request-id"),
    });
    for (const r of [openai, anthropic]) {
      expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(r.headers.get("cache-control")).toBe("no-store");
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });

  test("validation: the same 422, the list in OpenAI's, its summary in Anthropic's", async () => {
    const { key } = await tenant(g);
    const auth = { authorization: `Bearer ${key.key}` };
    const openai = await post("/v1/chat/completions", { model: "gpt-4o-mini" }, auth);
    const anthropic = await post("/v1/messages", { model: "gpt-4o-mini", max_tokens: 10 }, auth);
    expect(openai.status).toBe(422);
    expect(openai.body.detail).toEqual([{ loc: ["body", "messages"], msg: "Field required", type: "missing" }]);
    expect(openai.body.error).toEqual({
      message: "The request has invalid values. body.messages: Field required.",
      type: "invalid_request_error",
      code: "validation_error",
      param: "messages",
    });
    expect(anthropic.status).toBe(422);
    expect(anthropic.body).toEqual({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: "The request has invalid values. body.messages: Field required.",
        code: "validation_error",
      },
      request_id: anthropic.headers.get("x-request-id"),
    });
  });

  test("a declared body over the limit, refused before any route is matched", async () => {
    const { key } = await tenant(g);
    const big = JSON.stringify({ ...messagesBody, messages: [{ role: "user", content: "x".repeat(150_000) }] });
    const auth = { authorization: `Bearer ${key.key}` };
    const openai = await post("/v1/chat/completions", big, auth);
    const anthropic = await post("/v1/messages", big, auth);
    const message = openai.body.error.message;
    expect(openai.status).toBe(413);
    expect(openai.body).toEqual({
      error: { message, type: "payload_too_large", code: "payload_too_large", param: null },
    });
    expect(anthropic.status).toBe(413);
    expect(anthropic.body).toEqual({
      type: "error",
      error: { type: "request_too_large", message, code: "payload_too_large" },
      request_id: anthropic.headers.get("x-request-id"),
    });
    for (const r of [openai, anthropic]) expect(r.headers.get("connection")).toBe("close");
  });

  test("the OpenAPI document shows the Messages routes' dialect, and only theirs", async () => {
    const doc: any = await (await fetch(g.url + "/docs/json")).json();
    const declared = Object.entries<any>(doc.paths).flatMap(([path, ops]) =>
      Object.entries<any>(ops)
        .filter(([, op]) => op["x-error-dialect"])
        .map(([method, op]) => `${method} ${path} ${op["x-error-dialect"]}`),
    );
    expect(declared.sort()).toEqual(["post /v1/messages anthropic", "post /v1/messages/count_tokens anthropic"]);
  });
});

describe("the dialect follows the route's declaration, not its URL", () => {
  const anthropic = { detail: { "x-error-dialect": "anthropic" } };
  const dialects = new ErrorDialects(() => [
    { method: "POST", path: "/v1/messages", hooks: {} },
    { method: "POST", path: "/v2/chat", hooks: anthropic },
    { method: "GET", path: "/v2/jobs/:id", hooks: anthropic },
    { method: "GET", path: "/v2/jobs/:id/content", hooks: {} },
  ]);

  test("the matched route's declaration, whatever its path", () => {
    expect(dialects.ofRoute("POST", "/v1/messages")).toBe("openai");
    expect(dialects.ofRoute("POST", "/v2/chat")).toBe("anthropic");
    expect(dialects.ofRoute("GET", "/v2/jobs/:id")).toBe("anthropic");
    expect(dialects.ofRoute("GET", undefined)).toBe("openai");
  });

  test("before routing, the route that would answer: static paths, then patterns", () => {
    expect(dialects.ofRequest("POST", "/v2/chat")).toBe("anthropic");
    expect(dialects.ofRequest("GET", "/v2/jobs/abc")).toBe("anthropic");
    expect(dialects.ofRequest("GET", "/v2/jobs/abc/content")).toBe("openai");
    expect(dialects.ofRequest("POST", "/v2/jobs/abc")).toBe("openai");
    expect(dialects.ofRequest("POST", "/v1/messages")).toBe("openai");
  });

  test("one failure, rendered once in either dialect: same status, headers, message, code", async () => {
    const err = new GatewayError("rate_limited", undefined, {
      retryAfter: 2.5,
      headers: { "x-ratelimit-limit": "60" },
    });
    const openai = renderError(undefined, err, "req-1", "en", "openai");
    const anthropic = renderError(undefined, err, "req-1", "en", "anthropic");
    expect([openai.status, anthropic.status]).toEqual([429, 429]);
    for (const h of ["retry-after", "x-ratelimit-limit", "content-type"])
      expect(anthropic.headers.get(h)).toBe(openai.headers.get(h));
    const o: any = await openai.json();
    expect(await anthropic.json()).toEqual({
      type: "error",
      error: { type: "rate_limit_error", message: o.error.message, code: "rate_limited" },
      request_id: "req-1",
    });
  });
});
