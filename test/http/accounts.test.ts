/** Accounts and the dashboard JWT (operator contract): signup, login, /v1/me, token checks. */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { decodeJwtPart, fastUser, forgeJwt } from "../support/http";

setDefaultTimeout(30_000);

const PASSWORD = "correct horse battery";
const email = () => `a${crypto.randomUUID().slice(0, 12)}@test.example`;

const kinds = await dbKinds();
for (const kind of kinds) {
  describe(`accounts on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("signup answers 201 with exactly { user_id, email }", async () => {
      const e = email();
      const r = await g.call("POST", "/v1/auth/signup", { body: { email: e, password: PASSWORD } });
      expect(r.status).toBe(201);
      expect(Object.keys(r.body).sort()).toEqual(["email", "user_id"]);
      expect(r.body.email).toBe(e);
      expect(r.body.user_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    });

    test("a password shorter than 8 characters is 422 at body.password", async () => {
      const r = await g.call("POST", "/v1/auth/signup", { body: { email: email(), password: "1234567" } });
      expect(r.status).toBe(422);
      expect(r.body.detail).toBeArray();
      expect(r.body.detail.map((d: any) => d.loc)).toContainEqual(["body", "password"]);
      for (const d of r.body.detail) expect(typeof d.msg).toBe("string");
      // Exactly 8 characters is enough.
      const ok = await g.call("POST", "/v1/auth/signup", { body: { email: email(), password: "12345678" } });
      expect(ok.status).toBe(201);
    });

    test("missing fields and an unknown industry are 422 with their loc", async () => {
      const r = await g.call("POST", "/v1/auth/signup", { body: { password: PASSWORD } });
      expect(r.status).toBe(422);
      expect(r.body.detail.map((d: any) => d.loc)).toContainEqual(["body", "email"]);
      const i = await g.call("POST", "/v1/auth/signup", {
        body: { email: email(), password: PASSWORD, industry: "mining" },
      });
      expect(i.status).toBe(422);
      expect(i.body.detail.map((d: any) => d.loc)).toContainEqual(["body", "industry"]);
    });

    test("an object where a string belongs, carrying its own toString, is 422 (not 500)", async () => {
      // Found by the OpenAPI fuzzer: Elysia writes a failing value into its message with `${value}`,
      // which throws for such an object. Chat bodies go through the same validation.
      for (const [path, body] of [
        ["/v1/auth/signup", { email: { toString: true }, password: PASSWORD }],
        ["/v1/auth/signup", { email: { valueOf: 1, toString: "x" }, password: PASSWORD }],
        ["/v1/auth/login", { email: { toString: null }, password: PASSWORD }],
      ] as const) {
        const r = await g.call("POST", path, { body });
        expect(r.status).toBe(422);
        expect(r.body.detail[0].loc[0]).toBe("body");
      }
    });

    test("a taken email is 409, also with different case", async () => {
      const e = email();
      expect((await g.call("POST", "/v1/auth/signup", { body: { email: e, password: PASSWORD } })).status).toBe(201);
      const again = await g.call("POST", "/v1/auth/signup", { body: { email: e, password: "another password" } });
      expect(again.status).toBe(409);
      const upper = await g.call("POST", "/v1/auth/signup", { body: { email: e.toUpperCase(), password: PASSWORD } });
      expect(upper.status).toBe(409);
    });

    test("login answers { access_token, token_type: bearer, expires_in } with an HS256 JWT", async () => {
      const e = email();
      const s = await g.call("POST", "/v1/auth/signup", { body: { email: e, password: PASSWORD } });
      const r = await g.call("POST", "/v1/auth/login", { body: { email: e, password: PASSWORD } });
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(["access_token", "expires_in", "token_type"]);
      expect(r.body.token_type).toBe("bearer");
      expect(r.body.expires_in).toBe(3600);
      const [h, b] = r.body.access_token.split(".");
      expect(decodeJwtPart(h).alg).toBe("HS256");
      const claims = decodeJwtPart(b);
      expect(claims.sub).toBe(s.body.user_id);
      expect(claims.exp - claims.iat).toBe(3600);
    });

    test("wrong password and unknown email are 401 with identical bodies", async () => {
      const e = email();
      await g.call("POST", "/v1/auth/signup", { body: { email: e, password: PASSWORD } });
      const wrong = await g.call("POST", "/v1/auth/login", { body: { email: e, password: "not the password" } });
      const unknown = await g.call("POST", "/v1/auth/login", { body: { email: email(), password: PASSWORD } });
      expect(wrong.status).toBe(401);
      expect(unknown.status).toBe(401);
      expect(wrong.body).toEqual(unknown.body);
      expect(wrong.body.detail.error).toBe("unauthorized");
    });

    // Pure derivation, checked once (seven argon2 signups are slow on a loaded machine).
    if (kind === kinds[0])
      test("industry decides regulated: all but general and education", async () => {
        const expected: Record<string, boolean> = {
          general: false,
          education: false,
          finance: true,
          health: true,
          government: true,
          insurance: true,
        };
        const results = await Promise.all(
          [...Object.keys(expected), undefined].map(async (industry) => {
            const s = await g.call("POST", "/v1/auth/signup", {
              body: { email: email(), password: PASSWORD, ...(industry && { industry }) },
            });
            expect(s.status).toBe(201);
            // An empty admin PATCH changes nothing and answers the /v1/me shape.
            const me = await g.admin("PATCH", `/v1/admin/users/${s.body.user_id}`, {});
            return [industry ?? "(none)", me.body.regulated] as const;
          }),
        );
        expect(Object.fromEntries(results)).toEqual({ ...expected, "(none)": false });
      });

    test("/v1/me with the JWT and with an API key gives the same account", async () => {
      const u = await fastUser(g, { creditKrw: 500 });
      const k = await g.newKey(u);
      const byJwt = await g.call("GET", "/v1/me", { token: u.jwt });
      const byKey = await g.call("GET", "/v1/me", { token: k.key });
      expect(byJwt.status).toBe(200);
      expect(byKey.status).toBe(200);
      expect(byJwt.body).toEqual({
        user_id: u.id,
        email: u.email,
        balance_krw: 500,
        held_krw: 0,
        regulated: false,
        xborder_training_consent: false,
      });
      expect(byKey.body).toEqual(byJwt.body);
    });

    test("a JWT of a deleted account is 401; so is its login", async () => {
      const u = await fastUser(g);
      expect((await g.call("POST", "/v1/auth/login", { body: { email: u.email, password: u.password } })).status).toBe(
        200,
      );
      expect((await g.call("GET", "/v1/me", { token: u.jwt })).status).toBe(200);
      const del = await g.admin("PATCH", `/v1/admin/users/${u.id}`, { deleted: true });
      expect(del.status).toBe(200);
      const me = await g.call("GET", "/v1/me", { token: u.jwt });
      expect(me.status).toBe(401);
      expect((await g.call("GET", "/v1/keys", { token: u.jwt })).status).toBe(401);
      const login = await g.call("POST", "/v1/auth/login", { body: { email: u.email, password: u.password } });
      expect(login.status).toBe(401);
    });

    test("tampered, alg:none, foreign-secret and expired JWTs are 401", async () => {
      const u = await fastUser(g);
      const victim = await fastUser(g);
      const [h, b, s] = u.jwt.split(".");
      const claims = decodeJwtPart(b!);
      expect((await g.call("GET", "/v1/me", { token: u.jwt })).status).toBe(200);

      // Payload swapped to another account, signature kept.
      const swapped = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: victim.id })).toString("base64url")}.${s}`;
      // Signature altered in its last character.
      const last = s!.at(-1)!;
      const badSig = `${h}.${b}.${s!.slice(0, -1)}${last === "A" ? "Q" : "A"}`;
      const none = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${b}.`;
      const noneWithSig = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${b}.${s}`;
      const hs512 = forgeJwt({ alg: "HS512", typ: "JWT" }, claims);
      const foreign = forgeJwt({ alg: "HS256", typ: "JWT" }, claims, "another-secret-0123456789abcdef0123456789");
      const now = Math.floor(Date.now() / 1000);
      const expired = forgeJwt({ alg: "HS256", typ: "JWT" }, { ...claims, iat: now - 7200, exp: now - 10 });
      const stillValid = forgeJwt({ alg: "HS256", typ: "JWT" }, { ...claims, iat: now, exp: now + 60 });
      const noTyp = forgeJwt({ alg: "HS256", typ: "JWT" }, { sub: u.id, iat: now, exp: now + 60 });

      expect((await g.call("GET", "/v1/me", { token: stillValid })).status).toBe(200);
      for (const [name, token] of Object.entries({
        swapped,
        badSig,
        none,
        noneWithSig,
        hs512,
        foreign,
        expired,
        noTyp,
        garbage: "not.a.jwt",
      })) {
        const r = await g.call("GET", "/v1/me", { token });
        expect([name, r.status]).toEqual([name, 401]);
        expect(r.body.detail.error).toBe("unauthorized");
      }
      // Without any Authorization header.
      expect((await g.call("GET", "/v1/me")).status).toBe(401);
    });
  });
}
