/**
 * Authentication is throttled: sign-ups and login attempts per client
 * address, failed logins per email, and invalid API keys per address, each answered 429
 * `rate_limited` with Retry-After once over its limit. Client addresses come from
 * X-Forwarded-For, believed because the test client (127.0.0.1) is a trusted proxy. Runs with
 * the in-process limiter on each database and with the shared Redis limiter.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { dbKinds, redisAvailable, startTestGateway, type TestGateway } from "../harness";
import { fastUser } from "../support/http";

setDefaultTimeout(60_000);

const THROTTLE_ENV = {
  TRUSTED_PROXIES: "127.0.0.1",
  SIGNUP_RATE_PER_IP: "3",
  LOGIN_RATE_PER_IP: "5",
  LOGIN_FAILURES_PER_EMAIL: "3",
  INVALID_KEY_RATE_PER_IP: "3",
};

/**
 * A fresh network per test (`${net}.${host}` is an address in it): Redis keeps counts for up to
 * an hour across runs, so the prefix carries 48 random bits (IPv6 documentation range).
 */
const net = () => {
  const [a, b, c] = crypto.getRandomValues(new Uint16Array(3));
  return `2001:db8:${a!.toString(16)}:${b!.toString(16)}:${c!.toString(16)}:`;
};

function expectThrottled(r: { status: number; body: any; headers: Headers }) {
  expect(r.status).toBe(429);
  expect(r.body).toEqual({
    detail: { error: "rate_limited", message: expect.any(String), retryable: true },
    error: { message: expect.any(String), type: "rate_limit_error", code: "rate_limited", param: null },
  });
  const after = Number(r.headers.get("retry-after"));
  expect(after).toBeGreaterThanOrEqual(1);
  // An hour's window and at most one of its 60-second slots.
  expect(after).toBeLessThanOrEqual(3660);
}

const variants: { name: string; kind: "pg" | "pglite"; env: Record<string, string> }[] = (await dbKinds()).map(
  (kind) => ({ name: `in-process limiter on ${kind}`, kind, env: {} }),
);
if (await redisAvailable())
  variants.push({ name: "Redis limiter", kind: "pglite", env: { REDIS_URL: "redis://127.0.0.1:6379" } });

for (const v of variants) {
  describe(`authentication throttling, ${v.name}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: v.kind, env: { ...THROTTLE_ENV, ...v.env } });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    const from = (ip: string) => ({ "x-forwarded-for": ip });
    const signup = (email: string, ip: string) =>
      g.call("POST", "/v1/auth/signup", { body: { email, password: "correct horse battery" }, headers: from(ip) });
    const login = (email: string, password: string, ip: string) =>
      g.call("POST", "/v1/auth/login", { body: { email, password }, headers: from(ip) });

    test("repeated failed logins for one email get 429, from any address; another email still logs in", async () => {
      const n = net();
      const victim = `v${crypto.randomUUID().slice(0, 8)}@test.example`;
      const other = `o${crypto.randomUUID().slice(0, 8)}@test.example`;
      expect((await signup(victim, `${n}:1`)).status).toBe(201);
      expect((await signup(other, `${n}:2`)).status).toBe(201);
      // Each guess from its own address: the per-address limit never applies, the per-email one does.
      for (let i = 0; i < 3; i++)
        expect((await login(victim, `wrong password ${i}`, `${n}:${10 + i}`)).status).toBe(401);
      expectThrottled(await login(victim, "wrong password again", `${n}:20`));
      // The right password does not get through either until the window slides on.
      expectThrottled(await login(victim, "correct horse battery", `${n}:21`));
      const ok = await login(other, "correct horse battery", `${n}:22`);
      expect(ok.status).toBe(200);
      expect(ok.body.access_token).toEqual(expect.any(String));
    });

    test("a successful login does not count against the email", async () => {
      const n = net();
      const email = `s${crypto.randomUUID().slice(0, 8)}@test.example`;
      expect((await signup(email, `${n}:1`)).status).toBe(201);
      for (let i = 0; i < 4; i++)
        expect((await login(email, "correct horse battery", `${n}:${10 + i}`)).status).toBe(200);
    });

    test("many sign-ups from one address get 429; another address still signs up", async () => {
      const n = net();
      for (let i = 0; i < 3; i++)
        expect((await signup(`m${i}${crypto.randomUUID().slice(0, 8)}@test.example`, `${n}:1`)).status).toBe(201);
      expectThrottled(await signup(`m4${crypto.randomUUID().slice(0, 8)}@test.example`, `${n}:1`));
      expect((await signup(`m5${crypto.randomUUID().slice(0, 8)}@test.example`, `${n}:2`)).status).toBe(201);
    });

    test("many login attempts from one address get 429, whatever the emails", async () => {
      const n = net();
      for (let i = 0; i < 5; i++)
        expect(
          (await login(`nobody${i}${crypto.randomUUID().slice(0, 6)}@test.example`, "whatever", `${n}:1`)).status,
        ).toBe(401);
      expectThrottled(await login(`nobody${crypto.randomUUID().slice(0, 6)}@test.example`, "whatever", `${n}:1`));
      expect((await login(`nobody${crypto.randomUUID().slice(0, 6)}@test.example`, "whatever", `${n}:2`)).status).toBe(
        401,
      );
    });

    test("invalid API keys from one address get 429 after the threshold; a valid key from another address still works", async () => {
      const n = net();
      const u = await fastUser(g);
      const k = await g.newKey(u);
      const guess = () => `sk-gw-${crypto.randomUUID().replaceAll("-", "")}`;
      for (let i = 0; i < 3; i++)
        expect((await g.call("GET", "/v1/me", { token: guess(), headers: from(`${n}:1`) })).status).toBe(401);
      expectThrottled(await g.call("GET", "/v1/me", { token: guess(), headers: from(`${n}:1`) }));
      expectThrottled(
        await g.call("POST", "/v1/chat/completions", {
          token: guess(),
          headers: from(`${n}:1`),
          body: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
        }),
      );
      const ok = await g.call("GET", "/v1/me", { token: k.key, headers: from(`${n}:2`) });
      expect(ok.status).toBe(200);
      expect(ok.body.user_id).toBe(u.id);
      // Another address's guesses are its own: still a plain 401.
      expect((await g.call("GET", "/v1/me", { token: guess(), headers: from(`${n}:3`) })).status).toBe(401);
    });
  });
}
