/**
 * Console sessions over HTTP (docs/console.md, "Sessions"): the refresh cookie's attributes,
 * the same-origin rule (a cross-origin refresh is refused and rotates nothing), rotation, reuse
 * of a rotated token ending the whole family with its access tokens (two uses at once
 * included), sign-out, the Secure cookie behind a trusted TLS proxy only, and the plain login
 * of API callers unchanged. On PGlite, and on PostgreSQL when it is reachable.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway, type TestUser } from "../harness";
import { fastUser } from "../support/http";

interface Session {
  cookie: string;
  setCookie: string;
  access: string;
  body: any;
}

/** `name=value` of a Set-Cookie line. */
const pair = (setCookie: string) => setCookie.split(";")[0]!;

async function post(g: TestGateway, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(g.url + path, {
    method: "POST",
    headers: { ...(body !== undefined && { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, setCookie: res.headers.get("set-cookie") };
}

const me = async (g: TestGateway, token: string) => (await g.call("GET", "/v1/me", { token })).status;

for (const kind of await dbKinds())
  describe(`console sessions over HTTP (${kind})`, () => {
    let g: TestGateway;
    let u: TestUser;
    let origin: string;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind });
      u = await fastUser(g);
      origin = g.url;
    });
    afterAll(() => g?.stop());

    async function signIn(): Promise<Session> {
      const r = await post(
        g,
        "/v1/auth/login",
        { origin },
        { email: u.email, password: u.password, refresh_cookie: true },
      );
      expect(r.status).toBe(200);
      return { cookie: pair(r.setCookie!), setCookie: r.setCookie!, access: r.body.access_token, body: r.body };
    }

    async function refresh(cookie: string, headers: Record<string, string> = { origin }) {
      const r = await post(g, "/v1/auth/refresh", { cookie, ...headers });
      return { ...r, cookie: r.setCookie ? pair(r.setCookie) : null };
    }

    test("a plain login answers as before, without a cookie", async () => {
      const r = await post(g, "/v1/auth/login", {}, { email: u.email, password: u.password });
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(["access_token", "expires_in", "token_type"]);
      expect(r.body.expires_in).toBe(3600);
      expect(r.setCookie).toBeNull();
      expect(await me(g, r.body.access_token)).toBe(200);
    });

    test("the console's login sets an HttpOnly, SameSite=Strict cookie scoped to /v1/auth", async () => {
      const s = await signIn();
      const attrs = s.setCookie.split(";").map((a) => a.trim());
      expect(attrs[0]).toMatch(/^gw_refresh=[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}$/);
      expect(attrs).toContain("HttpOnly");
      expect(attrs).toContain("SameSite=Strict");
      expect(attrs).toContain("Path=/v1/auth");
      // Plain HTTP from a client that is no trusted proxy: not Secure (a browser would drop it).
      expect(attrs).not.toContain("Secure");
      const maxAge = Number(attrs.find((a) => a.startsWith("Max-Age="))!.slice(8));
      expect(maxAge).toBeGreaterThan(30 * 86400 - 60);
      expect(maxAge).toBeLessThanOrEqual(30 * 86400);
      expect(s.body.expires_in).toBe(300);
      expect(Date.parse(s.body.session_expires_at)).toBeGreaterThan(Date.now() + 29 * 86400_000);
      expect(await me(g, s.access)).toBe(200);
    });

    test("the console's login from another origin is refused and sets nothing", async () => {
      const r = await post(
        g,
        "/v1/auth/login",
        { origin: "https://evil.example" },
        { email: u.email, password: u.password, refresh_cookie: true },
      );
      expect(r.status).toBe(403);
      expect(r.body.detail.error).toBe("forbidden");
      expect(r.setCookie).toBeNull();
    });

    test("a cross-origin refresh is refused and rotates nothing", async () => {
      const s = await signIn();
      const refused: Record<string, string>[] = [
        { origin: "https://evil.example" },
        { origin: "null" },
        { origin: origin.replace("127.0.0.1", "localhost") },
        { origin: origin.replace("http:", "https:") },
        {},
        { "sec-fetch-site": "same-site" },
        { "sec-fetch-site": "cross-site" },
      ];
      for (const headers of refused) {
        const r = await refresh(s.cookie, headers);
        expect(r.status).toBe(403);
        expect(r.body.detail.error).toBe("forbidden");
        expect(r.setCookie).toBeNull();
      }
      // The cookie is still the current one: had any of those rotated it, this would be a reuse.
      const ok = await refresh(s.cookie, { "sec-fetch-site": "same-origin" });
      expect(ok.status).toBe(200);
    });

    test("a refresh rotates the cookie; the rotated one used again ends the family and its tokens", async () => {
      const s = await signIn();
      const r1 = await refresh(s.cookie);
      expect(r1.status).toBe(200);
      expect(r1.cookie).not.toBe(s.cookie);
      expect(r1.body.expires_in).toBe(300);
      expect(await me(g, r1.body.access_token)).toBe(200);
      const r2 = await refresh(r1.cookie!);
      expect(r2.status).toBe(200);
      // The first cookie again: a stolen copy, or a replay. The family ends.
      const reuse = await refresh(s.cookie);
      expect(reuse.status).toBe(401);
      expect(reuse.body.detail.message).toContain("이미 사용된 갱신 토큰");
      expect(reuse.setCookie).toContain("Max-Age=0");
      // The newest cookie of the family is refused too, and every access token it issued.
      expect((await refresh(r2.cookie!)).status).toBe(401);
      expect(await me(g, r2.body.access_token)).toBe(401);
      expect(await me(g, s.access)).toBe(401);
      const [row] = await g.gw.deps.db.query<{ revoked_reason: string }>(
        "select revoked_reason from console_sessions where id = $1",
        [s.cookie.split("=")[1]!.split(".")[0]],
      );
      expect(row!.revoked_reason).toBe("reuse");
      // Another sign-in of the same account is a family of its own, untouched.
      const other = await signIn();
      expect((await refresh(other.cookie)).status).toBe(200);
    });

    test("one cookie sent twice at once: one refresh wins, the other is a reuse and ends the family", async () => {
      const s = await signIn();
      const both = await Promise.all([refresh(s.cookie), refresh(s.cookie)]);
      expect(both.map((r) => r.status).sort()).toEqual([200, 401]);
      const winner = both.find((r) => r.status === 200)!;
      expect((await refresh(winner.cookie!)).status).toBe(401);
      expect(await me(g, winner.body.access_token)).toBe(401);
    });

    test("the database keeps a hash of the current secret only", async () => {
      const s = await signIn();
      const [id, secret] = s.cookie.split("=")[1]!.split(".") as [string, string];
      const rows = await g.gw.deps.db.query<Record<string, unknown>>("select * from console_sessions where id = $1", [
        id,
      ]);
      expect(rows).toHaveLength(1);
      expect(JSON.stringify(rows[0])).not.toContain(secret);
      expect(rows[0]!.token_hash).toBe(new Bun.CryptoHasher("sha256").update(secret).digest("hex"));
    });

    test("sign-out ends the session: the cookie and the access token are refused", async () => {
      const s = await signIn();
      const crossOrigin = await post(g, "/v1/auth/logout", { cookie: s.cookie, origin: "https://evil.example" });
      expect(crossOrigin.status).toBe(403);
      expect(await me(g, s.access)).toBe(200);
      const out = await post(g, "/v1/auth/logout", { cookie: s.cookie, origin, authorization: `Bearer ${s.access}` });
      expect(out.status).toBe(204);
      expect(out.setCookie).toMatch(/^gw_refresh=; Path=\/v1\/auth; Max-Age=0; HttpOnly; SameSite=Strict$/);
      expect(await me(g, s.access)).toBe(401);
      const again = await refresh(s.cookie);
      expect(again.status).toBe(401);
    });

    test("no cookie, or a malformed one: 401", async () => {
      expect((await post(g, "/v1/auth/refresh", { origin })).status).toBe(401);
      expect((await refresh("gw_refresh=not-a-token")).status).toBe(401);
      expect((await refresh(`gw_refresh=${crypto.randomUUID()}.${"A".repeat(43)}`)).status).toBe(401);
    });

    test("the refresh routes are in the OpenAPI document with the cookie scheme", async () => {
      const doc = (await g.call("GET", "/docs/json")).body;
      expect(doc.components.securitySchemes.sessionCookie).toMatchObject({ type: "apiKey", in: "cookie" });
      expect(doc.paths["/v1/auth/refresh"].post.security).toEqual([{ sessionCookie: [] }]);
      expect(doc.paths["/v1/auth/logout"].post.security).toEqual([{ sessionCookie: [] }]);
    });
  });

describe("the session cookie behind a TLS proxy", () => {
  let trusting: TestGateway;
  let plain: TestGateway;
  let u: TestUser;
  beforeAll(async () => {
    trusting = await startTestGateway({ env: { TRUSTED_PROXIES: "127.0.0.1/32" } });
    plain = await startTestGateway();
  });
  afterAll(async () => {
    await trusting?.stop();
    await plain?.stop();
  });

  test("a trusted proxy's X-Forwarded-Proto: https makes it Secure and __Secure- prefixed", async () => {
    u = await fastUser(trusting);
    const host = new URL(trusting.url).host;
    const login = { email: u.email, password: u.password, refresh_cookie: true };
    const r = await post(
      trusting,
      "/v1/auth/login",
      { origin: `https://${host}`, "x-forwarded-proto": "https" },
      login,
    );
    expect(r.status).toBe(200);
    expect(r.setCookie).toMatch(
      /^__Secure-gw_refresh=[^;]+; Path=\/v1\/auth; Max-Age=\d+; HttpOnly; SameSite=Strict; Secure$/,
    );
    // The page's origin is https there; the plain http origin is another one.
    const refreshed = await post(trusting, "/v1/auth/refresh", {
      cookie: pair(r.setCookie!),
      origin: `https://${host}`,
      "x-forwarded-proto": "https",
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.setCookie).toStartWith("__Secure-gw_refresh=");
    const wrongScheme = await post(trusting, "/v1/auth/refresh", {
      cookie: pair(refreshed.setCookie!),
      origin: `http://${host}`,
      "x-forwarded-proto": "https",
    });
    expect(wrongScheme.status).toBe(403);
  });

  test("from a client that is no trusted proxy, X-Forwarded-Proto is ignored", async () => {
    const v = await fastUser(plain);
    const host = new URL(plain.url).host;
    const r = await post(
      plain,
      "/v1/auth/login",
      { origin: `http://${host}`, "x-forwarded-proto": "https" },
      { email: v.email, password: v.password, refresh_cookie: true },
    );
    expect(r.status).toBe(200);
    expect(r.setCookie).toStartWith("gw_refresh=");
    expect(r.setCookie).not.toContain("Secure");
    const claimed = await post(
      plain,
      "/v1/auth/login",
      { origin: `https://${host}`, "x-forwarded-proto": "https" },
      { email: v.email, password: v.password, refresh_cookie: true },
    );
    expect(claimed.status).toBe(403);
  });
});
