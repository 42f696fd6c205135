/**
 * The console's session: `POST /v1/auth/refresh` trades the refresh cookie for a short-lived
 * access token and a new cookie (rotation), `POST /v1/auth/logout` ends the session. Both accept
 * the cookie from the gateway's own origin only (./session-cookie.ts). A login asking for
 * `refresh_cookie` starts a session (./account.ts, through `startSession`).
 */
import { Elysia } from "elysia";
import { GatewayError, text } from "../../core/errors";
import type { IssuedSession } from "../../db/repos/sessions";
import { parseRefreshToken } from "../../db/repos/sessions";
import { signJwt, verifyJwt } from "../../lib/jwt";
import { bearer } from "../auth";
import type { AppDeps } from "../deps";
import { AUTH } from "../security";
import { errors, noContent, ok } from "../openapi/describe";
import { Token } from "../openapi/shapes";
import { checkSameOrigin, readRefreshCookie, refreshCookie, viaTls } from "../session-cookie";

type Headers = Record<string, string | number>;

/** The access token of a console session: short-lived, naming its session (`sid`) so sign-out ends it. */
function accessToken(d: AppDeps, s: IssuedSession) {
  const ttl = d.config.SESSION_ACCESS_TTL_SECONDS;
  return {
    access_token: signJwt({ sub: s.userId, typ: "access", sid: s.id }, d.jwtSecret, ttl),
    token_type: "bearer" as const,
    expires_in: ttl,
    session_expires_at: s.expiresAt.toISOString(),
  };
}

function setCookie(d: AppDeps, request: Request, server: unknown, headers: Headers, s: IssuedSession | null) {
  const secure = viaTls(request, d.auth.fromTrustedProxy(request, server as never));
  headers["set-cookie"] = refreshCookie(s?.token ?? null, s ? (s.expiresAt.getTime() - Date.now()) / 1000 : 0, secure);
  headers["cache-control"] = "no-store";
}

/** A login's session (same origin only): sets the cookie and answers the session's access token. */
export async function startSession(d: AppDeps, request: Request, server: unknown, headers: Headers, userId: string) {
  checkSameOrigin(request, d.auth.fromTrustedProxy(request, server as never));
  const s = await d.sessions.start(userId);
  setCookie(d, request, server, headers, s);
  return accessToken(d, s);
}

const ENDED = {
  malformed: text(
    "세션 쿠키가 올바르지 않습니다. 다시 로그인하세요.",
    "The session cookie is not valid. Sign in again.",
  ),
  unknown: text("세션이 없습니다. 다시 로그인하세요.", "There is no such session. Sign in again."),
  ended: text("세션이 끝났습니다. 다시 로그인하세요.", "The session has ended. Sign in again."),
  reuse: text(
    "이미 사용된 갱신 토큰입니다. 안전을 위해 이 세션을 끝냈습니다. 다시 로그인하세요.",
    "This refresh token was already used: the session is ended for safety. Sign in again.",
  ),
};

export function sessionRoutes(d: AppDeps) {
  return new Elysia({ name: "session", normalize: false })
    .post(
      "/v1/auth/refresh",
      async ({ request, server, set }) => {
        checkSameOrigin(request, d.auth.fromTrustedProxy(request, server));
        const token = readRefreshCookie(request);
        if (!token)
          throw new GatewayError("unauthorized", text("세션 쿠키가 없습니다.", "No session cookie was sent."));
        const r = await d.sessions.refresh(token);
        if (!r.ok) {
          setCookie(d, request, server, set.headers, null);
          throw new GatewayError("unauthorized", ENDED[r.why]);
        }
        if (!(await d.users.live(r.session.userId))) {
          await d.sessions.revoke(r.session.id, "account_gone");
          setCookie(d, request, server, set.headers, null);
          throw new GatewayError("unauthorized", ENDED.ended);
        }
        setCookie(d, request, server, set.headers, r.session);
        return accessToken(d, r.session);
      },
      {
        detail: {
          security: AUTH.sessionCookie,
          tags: ["account"],
          summary: "Console session: a new access token for the refresh cookie, which is rotated",
          description:
            "Same origin only (Origin, or Sec-Fetch-Site: same-origin). A refresh token used a second time ends its whole session (401).",
          responses: { ...ok(Token), ...errors(401, 403) },
        },
      },
    )
    .post(
      "/v1/auth/logout",
      async ({ request, server, set }) => {
        checkSameOrigin(request, d.auth.fromTrustedProxy(request, server));
        // The cookie's session, and the one a console access token names: either ends it.
        const fromCookie = parseRefreshToken(readRefreshCookie(request) ?? "")?.id;
        const jwt = bearer(request);
        const sid = jwt ? verifyJwt(jwt, d.jwtSecret)?.sid : undefined;
        for (const id of new Set([fromCookie, typeof sid === "string" ? sid : undefined]))
          if (id) await d.sessions.revoke(id, "sign_out");
        setCookie(d, request, server, set.headers, null);
        set.status = 204;
        return undefined;
      },
      {
        detail: {
          security: AUTH.sessionCookie,
          tags: ["account"],
          summary: "Console session: sign out (the session and its access tokens end; the cookie is deleted)",
          responses: { ...noContent("Signed out"), ...errors(403) },
        },
      },
    );
}
