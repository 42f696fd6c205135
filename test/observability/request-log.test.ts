/**
 * The per-request log line, in process: one JSON line per request, written after the answer
 * (for a stream, once it ended and was settled), with the route template, the caller's ids,
 * the model, every upstream attempt with its outcome and reason, tokens, cost and cache hit.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { suiteGateway, type TestGateway } from "../harness";
import { captureLog } from "../support/capture-log";
import { chat, chatFetch, eventually, tenant, user } from "../support/chat";

setDefaultTimeout(30_000);

/** The request lines among what was written, by request id. */
function requestLines(out: string): Map<string, any> {
  const m = new Map<string, any>();
  for (const l of out.split("\n")) {
    if (!l.trim()) continue;
    const j = JSON.parse(l); // every line is JSON
    if (j.msg === "request") {
      expect(m.has(j.request_id)).toBe(false); // one line per request
      m.set(j.request_id, j);
    }
  }
  return m;
}

/** Runs `fn` and waits until the line of each request id it returns was written. */
async function linesOf(fn: () => Promise<string[]>): Promise<any[]> {
  let ids: string[] = [];
  const out = await captureLog(async () => {
    ids = await fn();
    await eventually(() => false, 300); // lines come after the answers
  });
  const lines = requestLines(out);
  return ids.map((id) => lines.get(id));
}

const consent = (g: TestGateway, userId: string) =>
  g.admin("PATCH", `/v1/admin/users/${userId}`, { xborder_training_consent: true });

describe("request log line", () => {
  const gw = suiteGateway();

  test("a fallback: each attempt with provider, model, outcome and reason; the answer's model, tokens and cost", async () => {
    const g = gw();
    const { user: u, key } = await tenant(g);
    await consent(g, u.id);
    const [line] = await linesOf(async () => {
      const r = await chat(g, key.key, { model: "deepseek-v3", messages: user("fall over [sim:fail@deepseek=503]") });
      expect(r.status).toBe(200);
      return [r.headers.get("x-request-id")!];
    });
    expect(line).toMatchObject({
      level: "info",
      method: "POST",
      route: "/v1/chat/completions",
      status: 200,
      key_id: key.id,
      account_id: u.id,
      model: "deepseek-v3",
      response_model: "deepseek-v3",
      provider: "together",
      cache_hit: false,
    });
    expect(typeof line.ts).toBe("string");
    expect(line.duration_ms).toBeGreaterThanOrEqual(0);
    expect(line.attempts.map((a: any) => [a.provider, a.outcome, a.reason, a.status])).toEqual([
      ["deepseek", "retry", "transient/overloaded", 503],
      ["deepseek", "retry", "transient/overloaded", 503],
      ["deepseek", "fallback", "transient/overloaded", 503],
      ["together", "ok", undefined, undefined],
    ]);
    for (const a of line.attempts) expect(a.model).toBe("deepseek-v3");
    expect(line.tokens.in).toBeGreaterThan(0);
    expect(line.tokens.out).toBeGreaterThan(0);
    expect(line.tokens.cached).toBe(0);
    expect(line.cost_krw).toBeGreaterThan(0);
    expect(line.error).toBeUndefined();
    expect(line.ttfb_ms).toBeUndefined();
  });

  test("every provider down: 502 with its error code and the attempts that failed", async () => {
    const g = gw();
    const { key } = await tenant(g);
    const [line] = await linesOf(async () => {
      const r = await chat(g, key.key, { model: "gpt-4o-mini", messages: user("down [sim:fail=502]") });
      expect(r.status).toBe(502);
      return [r.headers.get("x-request-id")!];
    });
    expect(line).toMatchObject({ level: "warn", status: 502, error: "upstream_unavailable", model: "gpt-4o-mini" });
    expect(line.attempts.map((a: any) => a.outcome)).toEqual(["retry", "retry", "failed"]);
  });

  test("a stream: the line comes once it ended, with time to first byte, usage and cost", async () => {
    const g = gw();
    const { key } = await tenant(g);
    const [line] = await linesOf(async () => {
      const r = await chatFetch(g, key.key, { model: "gpt-4o-mini", stream: true, messages: user("stream me") });
      expect(r.status).toBe(200);
      await r.text();
      return [r.headers.get("x-request-id")!];
    });
    expect(line).toMatchObject({ status: 200, stream: "complete", provider: "openai", cache_hit: false });
    expect(line.ttfb_ms).toBeGreaterThanOrEqual(0);
    expect(line.duration_ms).toBeGreaterThanOrEqual(line.ttfb_ms);
    expect(line.tokens.out).toBeGreaterThan(0);
    expect(line.cost_krw).toBeGreaterThan(0);
  });

  test("a client that leaves a stream: the line says 499 and what was billed", async () => {
    const g = gw();
    const { key } = await tenant(g);
    const [line] = await linesOf(async () => {
      const ac = new AbortController();
      const r = await chatFetch(
        g,
        key.key,
        { model: "gpt-4o-mini", stream: true, messages: user("long [sim:tokens=2000] [sim:chunk_ms=5]") },
        { signal: ac.signal },
      );
      const reader = r.body!.getReader();
      await reader.read();
      ac.abort();
      const id = r.headers.get("x-request-id")!;
      await Bun.sleep(1500);
      return [id];
    });
    expect(line).toMatchObject({ status: 499, stream: "client_left", model: "gpt-4o-mini" });
    expect(line.ttfb_ms).toBeGreaterThanOrEqual(0);
  });

  test("a client that leaves before the answer: 499, client_closed", async () => {
    const g = gw();
    const { key } = await tenant(g);
    const [line] = await linesOf(async () => {
      const ac = new AbortController();
      const id = crypto.randomUUID();
      const pending = chatFetch(
        g,
        key.key,
        { model: "gpt-4o-mini", messages: user("wait [sim:hang]") },
        { signal: ac.signal, headers: { "x-request-id": id } },
      ).catch(() => null);
      await Bun.sleep(300);
      ac.abort();
      await pending;
      await Bun.sleep(300);
      return [id];
    });
    expect(line).toMatchObject({ status: 499, error: "client_closed", model: "gpt-4o-mini" });
    expect(line.attempts.map((a: any) => [a.provider, a.outcome, a.reason])).toEqual([["openai", "failed", "aborted"]]);
  });

  test("route templates, never raw ids; 401 and 422 get their line and code", async () => {
    const g = gw();
    const { user: u, key } = await tenant(g);
    const lines = await linesOf(async () => {
      const a = await g.call("PATCH", `/v1/keys/${key.id}`, { token: u.jwt, body: { name: "renamed" } });
      const b = await chat(g, "sk-nope", { model: "gpt-4o-mini", messages: user("x") });
      const c = await chat(g, key.key, { model: "gpt-4o-mini", messages: user("x"), temperature: 9 });
      expect([a.status, b.status, c.status]).toEqual([200, 401, 422]);
      return [a, b, c].map((r) => r.headers.get("x-request-id")!);
    });
    expect(lines[0]).toMatchObject({ method: "PATCH", route: "/v1/keys/:id", status: 200, account_id: u.id });
    expect(JSON.stringify(lines[0])).not.toContain(key.id.slice(9)); // the raw path is not logged
    expect(lines[1]).toMatchObject({ route: "/v1/chat/completions", status: 401, error: "unauthorized" });
    expect(lines[2]).toMatchObject({ status: 422, error: "validation_error" });
  });
});

describe("LOG_REQUESTS=off", () => {
  const gw = suiteGateway({ env: { LOG_REQUESTS: "0" } });
  test("no request line", async () => {
    const g = gw();
    const out = await captureLog(async () => {
      await g.call("GET", "/v1/models");
      await Bun.sleep(200);
    });
    expect(requestLines(out).size).toBe(0);
  });
});

describe("requests answered before routing", () => {
  const gw = suiteGateway({ env: { MAX_BODY_BYTES: "2048", CORS_ORIGINS: "*" } });
  test("a body over the limit (413) and a CORS preflight have their line too", async () => {
    const g = gw();
    const lines = await linesOf(async () => {
      const big = await fetch(g.url + "/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-gw-x" },
        body: "x".repeat(5000),
      });
      const pre = await fetch(g.url + "/v1/models", {
        method: "OPTIONS",
        headers: { origin: "http://app.example", "access-control-request-method": "GET" },
      });
      expect([big.status, pre.status]).toEqual([413, 204]);
      return [big, pre].map((r) => r.headers.get("x-request-id")!);
    });
    expect(lines[0]).toMatchObject({ method: "POST", route: "unmatched", status: 413, error: "payload_too_large" });
    expect(lines[1]).toMatchObject({ method: "OPTIONS", route: "unmatched", status: 204 });
  });
});
