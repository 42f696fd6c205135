/** Signup, login (dashboard JWT) and /v1/me — the operator contract's account endpoints. */
import { Elysia, t } from "elysia";
import type { Static } from "@sinclair/typebox";
import { GatewayError, text } from "../../core/errors";
import { API_KEY_PREFIX } from "../../core/auth/principal";
import { microToKrw } from "../../lib/money";
import { signJwt } from "../../lib/jwt";
import { bearer } from "../auth";
import { authenticateKey } from "../api-key-auth";
import type { AppDeps } from "../deps";
import type { UserRow } from "../../db/repos/users";
import { AUTH } from "../security";
import { created, errors, ok } from "../openapi/describe";
import { Me, SignupResult, Token } from "../openapi/shapes";
import { startSession } from "./session";
import { checkSameOrigin } from "../session-cookie";

const INDUSTRIES = ["general", "finance", "health", "government", "insurance", "education"] as const;
/** Every industry but general and education is regulated (operator contract). */
const isRegulatedIndustry = (i: string) => i !== "general" && i !== "education";

// A hash to verify against when the email is unknown, so both failures take the same time.
const DUMMY_HASH = Bun.password.hashSync("not-a-real-password", { algorithm: "argon2id" });

export function toMe(user: UserRow): Static<typeof Me> {
  return {
    user_id: user.id,
    email: user.email,
    balance_krw: microToKrw(user.balanceMicro),
    held_krw: microToKrw(user.heldMicro),
    regulated: user.regulated,
    xborder_training_consent: user.xborderTrainingConsent,
  };
}

export function accountRoutes(deps: AppDeps) {
  return new Elysia({ name: "account", normalize: false })
    .post(
      "/v1/auth/signup",
      async ({ body, set, request, server }) => {
        // Counted before the body was read (app.ts); counted here only for a bodiless request.
        await deps.throttle.signup(deps.auth.clientIp(request, server), request);
        const email = body.email.trim().toLowerCase();
        const industry = body.industry ?? "general";
        const hash = await Bun.password.hash(body.password, { algorithm: "argon2id" });
        const user = await deps.users.create({
          email,
          passwordHash: hash,
          industry,
          regulated: isRegulatedIndustry(industry),
        });
        if (!user)
          throw new GatewayError("conflict", text("이미 가입된 이메일입니다.", "This email is already registered."));
        set.status = 201;
        return { user_id: user.id, email: user.email } satisfies Static<typeof SignupResult>;
      },
      {
        body: t.Object({
          email: t.String({ format: "email", maxLength: 254 }),
          password: t.String({ minLength: 8, maxLength: 256 }),
          industry: t.Optional(t.Union(INDUSTRIES.map((i) => t.Literal(i)))),
        }),
        detail: {
          security: AUTH.none,
          tags: ["account"],
          summary: "Create an account",
          responses: { ...created(SignupResult), ...errors(409, 429) },
        },
      },
    )
    .post(
      "/v1/auth/login",
      async ({ body, request, server, set }) => {
        const email = body.email.trim().toLowerCase();
        // The cookie is set for the gateway's own console only (checked before the password).
        if (body.refresh_cookie) checkSameOrigin(request, deps.auth.fromTrustedProxy(request, server));
        // Before the password hash runs: guessing is refused per address and per email.
        await deps.throttle.login(deps.auth.clientIp(request, server), email, request);
        const user = await deps.users.byEmail(email);
        const ok = await Bun.password.verify(body.password, user?.passwordHash ?? DUMMY_HASH);
        if (!user || !ok || user.deletedAt) {
          await deps.throttle.loginFailed(email);
          throw new GatewayError(
            "unauthorized",
            text("이메일 또는 비밀번호가 올바르지 않습니다.", "Wrong email or password."),
          );
        }
        // The console's sign-in: a refresh cookie and a short-lived token (./session.ts).
        if (body.refresh_cookie) return startSession(deps, request, server, set.headers, user.id);
        const ttl = deps.config.JWT_TTL_SECONDS;
        return {
          access_token: signJwt({ sub: user.id, typ: "access" }, deps.jwtSecret, ttl),
          token_type: "bearer",
          expires_in: ttl,
        } satisfies Static<typeof Token>;
      },
      {
        body: t.Object({
          email: t.String({ minLength: 1, maxLength: 254 }),
          password: t.String({ minLength: 1, maxLength: 256 }),
          refresh_cookie: t.Optional(
            t.Boolean({
              description:
                "The console's sign-in (same origin only): also set the refresh cookie, and answer a short-lived access token (SESSION_ACCESS_TTL_SECONDS) that `POST /v1/auth/refresh` renews",
            }),
          ),
        }),
        detail: {
          security: AUTH.none,
          tags: ["account"],
          summary: "Log in: a dashboard access token (HS256 JWT)",
          responses: { ...ok(Token), ...errors(401, 403, 429) },
        },
      },
    )
    .get(
      "/v1/me",
      async ({ request, server, set }) => {
        const token = bearer(request);
        let userId: string;
        if (token?.startsWith(API_KEY_PREFIX)) {
          // Every key-authenticated response carries the rate-limit counters.
          const { principal } = await authenticateKey(deps.auth, request, {
            server,
            need: "any",
            headers: set.headers,
          });
          userId = principal.user.id;
          await deps.auth.settled(userId);
        } else userId = (await deps.auth.jwtUser(request)).id;
        const user = await deps.users.live(userId);
        if (!user) throw new GatewayError("unauthorized");
        return toMe(user);
      },
      {
        detail: {
          security: AUTH.apiKeyOrDashboard,
          tags: ["account"],
          summary: "The caller's account and balance (JWT or API key)",
          responses: ok(Me),
        },
      },
    );
}
