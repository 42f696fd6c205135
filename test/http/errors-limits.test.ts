/** Error envelopes, the body limit (413), the per-key rate limit (429) and the Redis limiter. */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway, redisAvailable } from "../harness";
import { fastUser, gatewayOn } from "../support/http";
import { openDatabase } from "../../src/db/client";
import { freshPostgres, postgresAvailable } from "../harness";

setDefaultTimeout(30_000);

const LIMIT_ENV = { MAX_BODY_BYTES: "2048", RATE_LIMIT_RPM: "3" };

/** A chunked request body (no Content-Length): the limit must hold while reading. */
function chunked(size: number, chunk = 512): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(c) {
      if (sent >= size) return c.close();
      const n = Math.min(chunk, size - sent);
      // A JSON string that keeps going: valid JSON would only appear at the end.
      c.enqueue(new TextEncoder().encode(sent === 0 ? `{"email":"${"a".repeat(n - 10)}` : "a".repeat(n)));
      sent += n;
    },
  });
}

for (const kind of await dbKinds()) {
  describe(`errors and limits on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind, env: LIMIT_ENV });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("an unknown route is 404 with the compatible envelope", async () => {
      for (const [method, path] of [
        ["GET", "/v1/nope"],
        ["POST", "/nothing/here"],
        ["GET", "/v2/keys"],
        ["PUT", "/v1/keys"],
      ]) {
        const r = await g.call(method!, path!);
        expect([path, r.status]).toEqual([path, 404]);
        expect(r.body).toEqual({
          error: { message: expect.any(String), type: "not_found", code: "not_found", param: null },
        });
        expect(r.headers.get("content-type")).toContain("application/json");
      }
    });

    test("malformed JSON is 400 invalid_request (not a 500)", async () => {
      const u = await fastUser(g);
      for (const raw of ['{"name": ', "{name: 'x'}", "[1,2", "nul"]) {
        for (const [path, token] of [
          ["/v1/keys", u.jwt],
          ["/v1/auth/signup", undefined],
        ] as const) {
          const r = await g.call("POST", path, { token, raw, headers: { "content-type": "application/json" } });
          expect([path, raw, r.status]).toEqual([path, raw, 400]);
          expect(r.body).toEqual({
            error: { message: expect.any(String), type: "invalid_request", code: "invalid_request", param: null },
          });
        }
      }
    });

    test("a body over MAX_BODY_BYTES is 413 payload_too_large, with Content-Length and chunked", async () => {
      const big = JSON.stringify({ email: "a".repeat(3000) + "@x.example", password: "correct horse battery" });
      const withLength = await fetch(g.url + "/v1/auth/signup", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: big,
      });
      expect(withLength.status).toBe(413);
      expect(await withLength.json()).toEqual({
        error: { message: expect.any(String), type: "payload_too_large", code: "payload_too_large", param: null },
      });

      const streamed = await fetch(g.url + "/v1/auth/signup", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: chunked(8192),
        duplex: "half",
      } as RequestInit);
      expect(streamed.status).toBe(413);
      expect(await streamed.json()).toEqual({
        error: { message: expect.any(String), type: "payload_too_large", code: "payload_too_large", param: null },
      });

      // On an authenticated route too, and just under the limit is fine.
      const u = await fastUser(g);
      const over = await fetch(g.url + "/v1/keys", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${u.jwt}` },
        body: JSON.stringify({ name: "x", allowed_models: Array(200).fill("model-name-xyz") }),
      });
      expect(over.status).toBe(413);
      const under = JSON.stringify({ name: "y".repeat(90), allowed_models: Array(20).fill("model-name-xyz") });
      expect(under.length).toBeLessThan(2048);
      const ok = await g.call("POST", "/v1/keys", {
        token: u.jwt,
        raw: under,
        headers: { "content-type": "application/json" },
      });
      expect(ok.status).toBe(201);
    });

    test("rate limit: the 4th call in a minute is 429 with Retry-After and X-RateLimit-*; every call carries the counters", async () => {
      const u = await fastUser(g);
      const k = await g.newKey(u);
      const other = await g.newKey(u);
      for (let i = 1; i <= 3; i++) {
        const r = await g.call("GET", "/v1/me", { token: k.key });
        expect(r.status).toBe(200);
        expect(r.headers.get("x-ratelimit-limit")).toBe("3");
        expect(r.headers.get("x-ratelimit-remaining")).toBe(String(3 - i));
        const reset = Number(r.headers.get("x-ratelimit-reset"));
        expect(reset).toBeGreaterThanOrEqual(1);
        // A sliding window: a hit leaves it one minute and at most one 1-second slot later.
        expect(reset).toBeLessThanOrEqual(61);
      }
      const limited = await g.call("GET", "/v1/me", { token: k.key });
      expect(limited.status).toBe(429);
      expect(limited.body.detail.error).toBe("rate_limited");
      expect(limited.body.detail.retryable).toBe(true);
      const retryAfter = Number(limited.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(61);
      expect(limited.headers.get("x-ratelimit-limit")).toBe("3");
      expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(Number(limited.headers.get("x-ratelimit-reset"))).toBe(retryAfter);
      // The limit is per key: another key of the same user is unaffected; the JWT is not limited.
      expect((await g.call("GET", "/v1/me", { token: other.key })).status).toBe(200);
      for (let i = 0; i < 4; i++) expect((await g.call("GET", "/v1/me", { token: u.jwt })).status).toBe(200);
    });
  });
}

describe.skipIf(!(await redisAvailable()))("Redis rate limiter", () => {
  test("is shared by two gateways on one database", async () => {
    const env = { RATE_LIMIT_RPM: "3", REDIS_URL: "redis://127.0.0.1:6379" };
    const usePg = await postgresAvailable();
    const fresh = usePg ? await freshPostgres() : null;
    const db = usePg ? await openDatabase({ url: fresh!.url, max: 3 }) : await openDatabase({});
    const db2 = usePg ? await openDatabase({ url: fresh!.url, max: 3 }) : db;
    if (!usePg) await (await import("../../src/db/migrate")).runMigrations(db);
    const a = await gatewayOn(db, usePg ? "pg" : "pglite", env);
    const b = await gatewayOn(db2, usePg ? "pg" : "pglite", env);
    try {
      const u = await fastUser(a);
      const k = await a.newKey(u);
      const seq = [a, b, a, b];
      const statuses = [];
      for (const gw of seq) statuses.push((await gw.call("GET", "/v1/me", { token: k.key })).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const r = await a.call("GET", "/v1/me", { token: k.key });
      expect(r.status).toBe(429);
      expect(r.headers.get("retry-after")).toBeTruthy();
      // A memory limiter would have allowed b's calls: the count really lives in Redis.
    } finally {
      await a.stop();
      await b.stop();
      await db.close();
      if (db2 !== db) await db2.close();
      await fresh?.drop();
    }
  }, 60_000);

  test("Redis down: 503 limiter_unavailable, fast, never unlimited", async () => {
    const g = await startTestGateway({
      db: "pglite",
      env: { RATE_LIMIT_RPM: "3", REDIS_URL: "redis://127.0.0.1:6390" },
    });
    try {
      const u = await fastUser(g);
      const k = await g.newKey(u);
      for (let i = 0; i < 2; i++) {
        const t = performance.now();
        const r = await g.call("GET", "/v1/me", { token: k.key });
        expect(r.status).toBe(503);
        expect(r.body).toEqual({
          error: { message: expect.any(String), type: "limiter_unavailable", code: "limiter_unavailable", param: null },
        });
        expect(performance.now() - t).toBeLessThan(3000);
      }
      // Endpoints that are not key-limited keep working.
      expect((await g.call("GET", "/v1/me", { token: u.jwt })).status).toBe(200);
      // The limiter is never consulted before the key is known to be valid.
      expect((await g.call("GET", "/v1/me", { token: "sk-gw-unknown" })).status).toBe(401);
    } finally {
      await g.stop();
    }
  }, 60_000);
});
