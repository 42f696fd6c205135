/**
 * Security response headers: `X-Content-Type-Options: nosniff` on every answer, `Cache-Control:
 * no-store` on every authenticated one (stats keep their public caching), and CORS, off by
 * default and answered only for the origins CORS_ORIGINS lists.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from "../harness";
import { fastUser } from "../support/http";

describe("security headers (CORS off)", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({ db: "pglite" });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  test("nosniff everywhere; no-store on authenticated answers, streams and errors; stats stay public", async () => {
    const u = await fastUser(g, { creditKrw: 100 });
    const k = await g.newKey(u);
    const cases: [string, string, string | undefined, unknown, number][] = [
      ["GET", "/healthz", undefined, undefined, 200],
      ["GET", "/v1/nowhere", undefined, undefined, 404],
      ["GET", "/v1/me", k.key, undefined, 200],
      ["GET", "/v1/keys", u.jwt, undefined, 200],
      ["GET", "/v1/keys", "bad-token", undefined, 401],
      ["POST", "/v1/keys", u.jwt, { scopes: ["nope"] }, 422],
      [
        "POST",
        "/v1/chat/completions",
        k.key,
        { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], max_tokens: 5 },
        200,
      ],
      ["GET", `/v1/jobs/${crypto.randomUUID()}`, k.key, undefined, 404],
      ["GET", "/v1/admin/settings", ADMIN_TOKEN, undefined, 200],
    ];
    for (const [method, path, token, body, status] of cases) {
      const r = await g.call(method, path, { token, body });
      expect({ path, status: r.status }).toEqual({ path, status });
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
      if (token) expect({ path, cc: r.headers.get("cache-control") }).toEqual({ path, cc: "no-store" });
    }
    // A stream of an authenticated call is never stored either.
    const s = await fetch(g.url + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${k.key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 5,
        stream: true,
      }),
    });
    await s.text();
    expect(s.headers.get("x-content-type-options")).toBe("nosniff");
    expect(s.headers.get("cache-control")).toContain("no-store");
    // Public statistics keep their public caching.
    const st = await g.call("GET", "/v1/stats/models");
    expect(st.status).toBe(200);
    expect(st.headers.get("cache-control")).toMatch(/^public, max-age=\d+$/);
    expect(st.headers.get("x-content-type-options")).toBe("nosniff");
  });

  test("CORS is off by default: no Access-Control headers, a preflight is not answered", async () => {
    const pre = await fetch(g.url + "/v1/chat/completions", {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "POST" },
    });
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    expect(pre.status).toBe(404);
    const r = await fetch(g.url + "/v1/stats/models", { headers: { origin: "https://app.example" } });
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("CORS_ORIGINS set", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({ db: "pglite", env: { CORS_ORIGINS: "https://app.example, https://admin.example/" } });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  test("a listed origin's preflight is 204 with methods and headers; its requests carry the headers", async () => {
    const pre = await fetch(g.url + "/v1/chat/completions", {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type",
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
    expect(pre.headers.get("access-control-allow-headers")).toContain("authorization");
    expect(pre.headers.get("access-control-allow-headers")).toContain("x-api-key"); // Anthropic's clients
    expect(pre.headers.get("vary")).toContain("Origin");
    expect(pre.headers.get("access-control-allow-credentials")).toBeNull();

    const u = await fastUser(g);
    const k = await g.newKey(u);
    const ok = await fetch(g.url + "/v1/me", {
      headers: { origin: "https://admin.example", authorization: `Bearer ${k.key}` },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://admin.example");
    expect(ok.headers.get("access-control-expose-headers")).toContain("x-request-id");
    // Errors carry them too, so a browser client can read the error body.
    const bad = await fetch(g.url + "/v1/me", {
      headers: { origin: "https://app.example", authorization: "Bearer sk-nope" },
    });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("access-control-allow-origin")).toBe("https://app.example");
  });

  test("an unlisted origin gets no CORS headers and no preflight answer", async () => {
    const pre = await fetch(g.url + "/v1/chat/completions", {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    expect(pre.status).toBe(404);
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    const r = await fetch(g.url + "/v1/stats/models", { headers: { origin: "https://evil.example" } });
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
  });
});
