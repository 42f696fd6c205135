/**
 * HS256 JSON Web Tokens, just what the dashboard needs. The algorithm is pinned: a token
 * whose header names anything but HS256 (including "none") is refused, and `exp` is enforced.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

const b64url = (buf: Buffer | string) => Buffer.from(buf).toString("base64url");
const HEADER = b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));

export interface JwtClaims {
  sub: string;
  iat: number;
  exp: number;
  [k: string]: unknown;
}

export function signJwt(
  claims: Omit<JwtClaims, "iat" | "exp">,
  secret: string,
  ttlSeconds: number,
  now = Date.now(),
): string {
  const iat = Math.floor(now / 1000);
  const body = b64url(JSON.stringify({ ...claims, iat, exp: iat + ttlSeconds }));
  const sig = createHmac("sha256", secret).update(`${HEADER}.${body}`).digest("base64url");
  return `${HEADER}.${body}.${sig}`;
}

/** Returns the claims of a valid, unexpired token, or null. Never throws on bad input. */
export function verifyJwt(token: string, secret: string, now = Date.now()): JwtClaims | null {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  const [h, b, s] = parts as [string, string, string];
  try {
    const header = JSON.parse(Buffer.from(h, "base64url").toString("utf8"));
    if (header?.alg !== "HS256") return null;
    // Compare the canonical base64url text, not decoded bytes: a decoder ignores the unused
    // low bits of the last character, so a decoded comparison accepts altered signatures.
    const expected = Buffer.from(createHmac("sha256", secret).update(`${h}.${b}`).digest("base64url"));
    const given = Buffer.from(s);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const claims = JSON.parse(Buffer.from(b, "base64url").toString("utf8"));
    if (typeof claims?.sub !== "string" || typeof claims?.exp !== "number") return null;
    if (claims.exp * 1000 <= now) return null;
    return claims as JwtClaims;
  } catch {
    return null;
  }
}
