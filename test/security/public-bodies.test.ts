/**
 * Issue 28 #4: the routes anyone may call without a credential (sign-up, login, and a POST to
 * no route at all) take a body of at most PUBLIC_MAX_BODY_BYTES (8 KB), and are throttled
 * before a byte of it is read. A 45 MB login is answered 413 while almost all of it is still
 * unsent (before: the whole body was read and validated, sixteen such logins took the
 * process from 605 to 2,864 MiB); a throttled login is answered 429 before its body arrives.
 * Real sockets (test/support/raw-upload.ts), on PostgreSQL and PGlite.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { upload, type UploadPlan } from "../support/raw-upload";

const MB = 1 << 20;
const PROBE = { bytes: 64 * 1024, waitMs: 3000 };
const LOGIN_PREFIX = '{"email":"someone@test.example","password":"';

const tooLarge = {
  error: { message: expect.any(String), type: "payload_too_large", code: "payload_too_large", param: null },
};

const big = (path: string, total: number, framing: UploadPlan["framing"] = { contentLength: total }): UploadPlan => ({
  path,
  framing,
  prefix: LOGIN_PREFIX,
  total,
  burst: MB,
  probe: PROBE,
});

for (const kind of await dbKinds()) {
  describe(`public bodies on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind, env: { VIDEO_POLL_WORKERS: "0" } });
    }, 60_000);
    afterAll(() => g?.stop());

    test("a 45 MB login or sign-up is 413 with the body unread, declared or chunked, and the connection closed", async () => {
      for (const path of ["/v1/auth/login", "/v1/auth/signup"])
        for (const framing of [{ contentLength: 45 * MB }, "chunked"] as const) {
          const r = await upload(g.url, big(path, 45 * MB, framing));
          const seen = { path, framing, status: r.status, body: r.body };
          expect(seen).toEqual({ path, framing, status: 413, body: tooLarge });
          // Answered after the probe: the other 44.9 MB were never sent.
          expect(r.sentBeforeAnswer).toBeLessThanOrEqual(PROBE.bytes);
          expect(r.closedByServer).toBe(true);
        }
    }, 60_000);

    test("a POST to no route at all is 404 with its body unread", async () => {
      const r = await upload(g.url, big("/v1/not-a-route", 45 * MB));
      expect(r.status).toBe(404);
      expect(r.body.error.type).toBe("not_found");
      expect(r.sentBeforeAnswer).toBeLessThanOrEqual(PROBE.bytes);
      expect(r.closedByServer).toBe(true);
    }, 30_000);

    test("sixteen 45 MB logins at once do not grow the process by their size", async () => {
      Bun.gc(true);
      const base = process.memoryUsage().rss;
      let peak = base;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
      // No pause for an answer: each client pushes as fast as the server takes it.
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          // 64 KB writes: the clients, in this process too, hold little of their own.
          upload(g.url, {
            ...big("/v1/auth/login", 45 * MB, i % 2 ? "chunked" : undefined),
            burst: 64 * 1024,
            probe: undefined,
          }),
        ),
      );
      clearInterval(sampler);
      const sent = Math.max(...results.map((r) => r.sentBeforeAnswer));
      console.error(
        `sixteen 45 MB logins: RSS +${Math.round((peak - base) / MB)} MiB, at most ${sent} bytes sent each`,
      );
      // Each answered long before its body was sent.
      for (const r of results) expect(r.sentBeforeAnswer).toBeLessThan(16 * MB);
      for (const r of results) if (r.status !== null) expect(r.status).toBe(413);
      // 16 × 45 MB = 720 MB if the bodies were read (before: +2,259 MiB). What remains is what
      // loopback buffers hold in flight before an answer is seen: a few MB per connection.
      expect((peak - base) / MB).toBeLessThan(150);
    }, 60_000);

    if (kind === "pglite")
      test("sign-up and login are the only documented routes taking a body without a credential", async () => {
        const doc = (await g.call("GET", "/docs/json")).body;
        const open: string[] = [];
        for (const [path, ops] of Object.entries<any>(doc.paths))
          for (const [method, op] of Object.entries<any>(ops))
            if (op.requestBody && Array.isArray(op.security) && op.security.length === 0)
              open.push(`${method.toUpperCase()} ${path}`);
        expect(open.sort()).toEqual(["POST /v1/auth/login", "POST /v1/auth/signup"]);
      });

    test("a login or sign-up within the limit still works", async () => {
      const email = `p${crypto.randomUUID().slice(0, 8)}@test.example`;
      const s = await g.call("POST", "/v1/auth/signup", { body: { email, password: "a good password" } });
      expect(s.status).toBe(201);
      const l = await g.call("POST", "/v1/auth/login", { body: { email, password: "a good password" } });
      expect(l.status).toBe(200);
      expect(l.body.token_type).toBe("bearer");
    });
  });
}

describe("the throttles run before the body is read", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({ env: { LOGIN_RATE_PER_IP: "2", SIGNUP_RATE_PER_IP: "1", VIDEO_POLL_WORKERS: "0" } });
  }, 60_000);
  afterAll(() => g?.stop());

  /** A body of `size` bytes announced, only its first 100 sent until an answer comes (or 3 s). */
  const partial = (path: string, size: number): UploadPlan => ({
    path,
    framing: { contentLength: size },
    prefix: LOGIN_PREFIX,
    total: size,
    burst: size,
    probe: { bytes: 100, waitMs: 3000 },
  });

  test("past LOGIN_RATE_PER_IP a login is 429 with Retry-After while its body is still unsent", async () => {
    for (let i = 0; i < 2; i++) {
      const r = await g.call("POST", "/v1/auth/login", { body: { email: "x@test.example", password: "wrong one" } });
      expect(r.status).toBe(401);
    }
    const r = await upload(g.url, partial("/v1/auth/login", 4000));
    expect(r.status).toBe(429);
    expect(r.body.detail.error).toBe("rate_limited");
    expect(Number(r.headers["retry-after"])).toBeGreaterThan(0);
    expect(r.sentBeforeAnswer).toBe(100);
  }, 30_000);

  test("past SIGNUP_RATE_PER_IP a sign-up is 429 while its body is still unsent, and counted once", async () => {
    const email = `t${crypto.randomUUID().slice(0, 8)}@test.example`;
    // One sign-up is allowed: counted before its body, not again by the handler.
    expect((await g.call("POST", "/v1/auth/signup", { body: { email, password: "a good password" } })).status).toBe(
      201,
    );
    const r = await upload(g.url, partial("/v1/auth/signup", 4000));
    expect(r.status).toBe(429);
    expect(r.sentBeforeAnswer).toBe(100);
  }, 30_000);
});
