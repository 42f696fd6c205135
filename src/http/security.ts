/**
 * Who may call a route, declared once on the route as OpenAPI's own `detail.security` and
 * used twice: the OpenAPI document shows it, and the body gate checks it from the headers
 * before a byte of the body is read. A caller without the route's credential gets its
 * 401/403/404 at once, and an unauthenticated body is never read, parsed or buffered.
 */
import type { Server } from "bun";
import type { Authenticator } from "./auth";
import { checkSameOrigin, COOKIE } from "./session-cookie";

/** The credential kinds, as OpenAPI security schemes (`Authorization: Bearer …`; an API key also as `x-api-key`). */
export const SECURITY_SCHEMES = {
  apiKey: { type: "http", scheme: "bearer", description: "API key (`sk-gw-…`): model calls, video jobs, usage report" },
  xApiKey: {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
    description: "The same API key in Anthropic's header (`ANTHROPIC_API_KEY`); accepted wherever an API key is",
  },
  dashboardJwt: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "Dashboard access token from `POST /v1/auth/login`",
  },
  managementKey: { type: "http", scheme: "bearer", description: "Management key (`mk-gw-…`): provisioning" },
  adminToken: { type: "http", scheme: "bearer", description: "The operator's `ADMIN_TOKEN`" },
  sessionCookie: {
    type: "apiKey",
    in: "cookie",
    name: COOKIE,
    description:
      "The console's refresh token (HttpOnly, SameSite=Strict, `__Secure-` prefixed over TLS), accepted from the gateway's own origin only (docs/console.md, \"Sessions\")",
  },
  metricsToken: {
    type: "http",
    scheme: "bearer",
    description: "`METRICS_TOKEN` (a Prometheus scraper's), or the `ADMIN_TOKEN` when it is unset",
  },
} as const;

type Scheme = keyof typeof SECURITY_SCHEMES;
/** OpenAPI's security requirement: any one of the alternatives; `[]` is a public route. */
type Requirement = Record<string, string[]>[];
const anyOf = (...schemes: Scheme[]): Requirement => schemes.map((s) => ({ [s]: [] }));

/** `detail: { security: AUTH.apiKey }` on a route. */
export const AUTH = {
  apiKey: anyOf("apiKey"),
  /** Anthropic's clients: `Authorization: Bearer` (ANTHROPIC_AUTH_TOKEN) or `x-api-key` (ANTHROPIC_API_KEY). */
  apiKeyOrXApiKey: anyOf("apiKey", "xApiKey"),
  dashboard: anyOf("dashboardJwt"),
  managementKey: anyOf("managementKey"),
  admin: anyOf("adminToken"),
  metrics: anyOf("metricsToken"),
  apiKeyOrDashboard: anyOf("apiKey", "dashboardJwt"),
  sessionCookie: anyOf("sessionCookie"),
  none: anyOf(),
};

export interface RouteInfo {
  method: string;
  path: string;
  hooks?: { detail?: { security?: unknown } };
}

const takesBody = (method: string) => method !== "GET" && method !== "HEAD" && method !== "OPTIONS";

/**
 * Every route that may receive a body must say who may send one: refused at start-up
 * otherwise, so a new route cannot silently read bodies from anyone.
 */
export function assertSecurityDeclared(routes: RouteInfo[]): void {
  const missing = routes
    .filter((r) => takesBody(r.method) && !Array.isArray(r.hooks?.detail?.security))
    .map((r) => `${r.method} ${r.path}`);
  if (missing.length)
    throw new Error(
      `routes taking a body must declare detail.security (see src/http/security.ts): ${missing.join(", ")}`,
    );
}

const PUBLIC: { readonly public: boolean } = Object.freeze({ public: true });
const NOT_PUBLIC: { readonly public: boolean } = Object.freeze({ public: false });
const PUBLIC_NOW = Promise.resolve(PUBLIC);
const NOT_PUBLIC_NOW = Promise.resolve(NOT_PUBLIC);
const notPublic = () => NOT_PUBLIC;

export class BodyGate {
  /** Method → route path → the alternatives, each the schemes it needs (indexed once, at the first body). */
  private byRoute: Map<string, Map<string, Scheme[][]>> | null = null;

  constructor(
    private auth: Authenticator,
    private routes: () => RouteInfo[],
  ) {}

  /**
   * Throws the caller's 401/403 (404 for disabled admin endpoints) unless it may send this route
   * a body. Returns whether the route is public (no credential: sign-up, login, or no known
   * route at all), whose body gets the small public limit.
   */
  check(request: Request, server: Server<unknown> | null, route: string): Promise<{ readonly public: boolean }> {
    const need = (this.byRoute ??= this.index()).get(request.method)?.get(route);
    if (!need?.length) return PUBLIC_NOW;
    // One credential (every model route: its API key): that check's own promise, no async call of ours.
    if (need.length === 1 && need[0]!.length === 1) {
      try {
        return this.verify(need[0]![0]!, request, server)?.then(notPublic) ?? NOT_PUBLIC_NOW;
      } catch (e) {
        return Promise.reject(e);
      }
    }
    return this.checkEach(need, request, server);
  }

  /** Several credentials: the first alternative that passes whole; else the first refusal. */
  private async checkEach(
    need: Scheme[][],
    request: Request,
    server: Server<unknown> | null,
  ): Promise<{ readonly public: boolean }> {
    let refusal: unknown;
    for (const alternative of need) {
      try {
        for (const scheme of alternative) await this.verify(scheme, request, server);
        return NOT_PUBLIC;
      } catch (e) {
        refusal ??= e;
      }
    }
    throw refusal;
  }

  private index(): Map<string, Map<string, Scheme[][]>> {
    const byRoute = new Map<string, Map<string, Scheme[][]>>();
    for (const r of this.routes()) {
      let paths = byRoute.get(r.method);
      if (!paths) byRoute.set(r.method, (paths = new Map()));
      const need = (r.hooks?.detail?.security ?? []) as Requirement;
      paths.set(
        r.path,
        need.map((alt) => Object.keys(alt) as Scheme[]),
      );
    }
    return byRoute;
  }

  /** The scheme's check; returned, not awaited here: one async call less on every request. */
  private verify(scheme: Scheme, request: Request, server: Server<unknown> | null): Promise<unknown> | undefined {
    switch (scheme) {
      case "apiKey":
      case "xApiKey":
        return this.auth.keyPrincipal(request, server);
      case "dashboardJwt":
        return this.auth.jwtUser(request);
      case "managementKey":
        return this.auth.mgmtKey(request, server);
      case "adminToken":
        return this.auth.admin(request, server);
      case "metricsToken":
        return this.auth.metrics(request, server);
      case "sessionCookie":
        // The cookie itself is read by the route; a cross-origin request is refused before its body.
        checkSameOrigin(request, this.auth.fromTrustedProxy(request, server));
        return undefined;
    }
  }
}
