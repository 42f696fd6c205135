/**
 * CORS, off unless CORS_ORIGINS lists the browser origins allowed to call the API (or `*`).
 * Credentials are bearer tokens in the Authorization header (or an API key in x-api-key),
 * never cookies, so no Access-Control-Allow-Credentials is sent. A preflight from an allowed origin is answered
 * 204 at once; any other preflight falls through to routing (404: nothing is allowed).
 */
const ALLOW_METHODS = "GET, POST, PATCH, DELETE, OPTIONS";
// Anthropic's clients send the key as x-api-key and name the API version and betas.
const ALLOW_HEADERS =
  "authorization, content-type, idempotency-key, x-request-id, x-title, http-referer, range, x-api-key, anthropic-version, anthropic-beta, anthropic-dangerous-direct-browser-access";
const EXPOSE_HEADERS =
  "x-request-id, x-cost-krw, x-cost-usd, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, retry-after, x-policy-decision, x-gateway-warnings, deprecation, sunset, link, x-token-count-source, x-response-stored, location, idempotent-replayed, content-range";

export interface CorsPolicy {
  /** Adds the CORS headers for an allowed Origin; returns the answer of a preflight. */
  apply(request: Request, headers: Record<string, string | number>): Response | undefined;
}

export function corsPolicy(setting: string): CorsPolicy | null {
  const list = setting
    .split(",")
    .map((s) => s.trim().replace(/\/+$/, ""))
    .filter(Boolean);
  if (!list.length) return null;
  const any = list.includes("*");
  const allowed = new Set(list.map((o) => o.toLowerCase()));
  return {
    apply(request, headers) {
      const origin = request.headers.get("origin");
      if (!origin || (!any && !allowed.has(origin.toLowerCase()))) return undefined;
      const h: Record<string, string> = {
        "access-control-allow-origin": any ? "*" : origin,
        vary: "Origin",
      };
      if (request.method === "OPTIONS" && request.headers.has("access-control-request-method")) {
        return new Response(null, {
          status: 204,
          headers: {
            ...h,
            "access-control-allow-methods": ALLOW_METHODS,
            "access-control-allow-headers": ALLOW_HEADERS,
            "access-control-max-age": "600",
          },
        });
      }
      Object.assign(headers, h, { "access-control-expose-headers": EXPOSE_HEADERS });
      return undefined;
    },
  };
}
