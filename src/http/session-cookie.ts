/**
 * The console's refresh cookie and the same-origin rule that guards it (docs/console.md,
 * "Sessions"; docs/decisions.md 59). The cookie is HttpOnly, SameSite=Strict, scoped to
 * `/v1/auth` and Secure when the request came over TLS; only the refresh and sign-out routes
 * (and a login asking for it) read or set it, and only for a request whose Origin is the
 * gateway's own, or that has no Origin but says `Sec-Fetch-Site: same-origin`.
 */
import { GatewayError, text } from "../core/errors";

export const COOKIE = "gw_refresh";
/** Over TLS the name carries the `__Secure-` prefix: a browser keeps it only when set Secure over HTTPS. */
export const SECURE_COOKIE = `__Secure-${COOKIE}`;
const PATH = "/v1/auth";

/**
 * Whether the client reached us over TLS: the request's own scheme, or, from a proxy named in
 * TRUSTED_PROXIES only, the last X-Forwarded-Proto value (the one that proxy set). A client
 * talking to the gateway directly cannot claim TLS with the header.
 */
export function viaTls(request: Request, fromTrustedProxy: boolean): boolean {
  if (new URL(request.url).protocol === "https:") return true;
  if (!fromTrustedProxy) return false;
  const hops = (request.headers.get("x-forwarded-proto") ?? "").split(",");
  return hops[hops.length - 1]!.trim().toLowerCase() === "https";
}

/** The gateway's own origin as the browser sees it (the forwarded host believed from a trusted proxy only). */
export function ownOrigin(request: Request, fromTrustedProxy: boolean): string {
  const forwardedHost = fromTrustedProxy ? request.headers.get("x-forwarded-host")?.split(",")[0]?.trim() : undefined;
  const host = forwardedHost || request.headers.get("host") || new URL(request.url).host;
  return `${viaTls(request, fromTrustedProxy) ? "https" : "http"}://${host.toLowerCase()}`;
}

/**
 * Refuses (403) a request the cookie must not serve: an Origin other than the gateway's own
 * (another site, a sibling subdomain, `null`), or no Origin without `Sec-Fetch-Site: same-origin`.
 * Browsers send Origin on every POST, so a same-origin page always passes.
 */
export function checkSameOrigin(request: Request, fromTrustedProxy: boolean): void {
  const origin = request.headers.get("origin");
  const ok =
    origin !== null
      ? origin.toLowerCase() === ownOrigin(request, fromTrustedProxy)
      : request.headers.get("sec-fetch-site") === "same-origin";
  if (!ok)
    throw new GatewayError(
      "forbidden",
      text(
        "세션 쿠키는 이 게이트웨이의 콘솔(같은 출처)에서만 사용할 수 있습니다.",
        "The session cookie is accepted from the gateway's own console (same origin) only.",
      ),
    );
}

/** The refresh token the request's cookie carries (the `__Secure-` name first), or null. */
export function readRefreshCookie(request: Request): string | null {
  const header = request.headers.get("cookie");
  if (!header) return null;
  const jar = new Map<string, string>();
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0) jar.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return jar.get(SECURE_COOKIE) || jar.get(COOKIE) || null;
}

/** The Set-Cookie value for a refresh token living `maxAgeSeconds` (0 and no token: deletes it). */
export function refreshCookie(token: string | null, maxAgeSeconds: number, secure: boolean): string {
  const name = secure ? SECURE_COOKIE : COOKIE;
  const age = token ? Math.max(0, Math.floor(maxAgeSeconds)) : 0;
  return `${name}=${token ?? ""}; Path=${PATH}; Max-Age=${age}; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}
