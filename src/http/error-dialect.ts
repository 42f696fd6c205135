/**
 * Which dialect a route's errors are rendered in, declared once on the route as an OpenAPI
 * extension of its `detail` (so the document says it too): `detail: { ...ANTHROPIC_ERRORS }` on
 * the Messages routes, whose clients are Anthropic's SDKs; every other route answers in the
 * OpenAI dialect. The error renderer (./errors.ts) asks this index and renders once.
 */

export type ErrorDialect = "openai" | "anthropic";

export const DIALECT_KEY = "x-error-dialect";

/** `detail: { ...ANTHROPIC_ERRORS, ... }`: this route's errors are Anthropic's envelope. */
export const ANTHROPIC_ERRORS = { [DIALECT_KEY]: "anthropic" } as const;

export interface DialectRoute {
  method: string;
  path: string;
  hooks?: { detail?: Record<string, unknown> };
}

const dialectOf = (r: DialectRoute): ErrorDialect =>
  r.hooks?.detail?.[DIALECT_KEY] === "anthropic" ? "anthropic" : "openai";

/** Elysia's pattern `/v1/jobs/:job_id` or `/v1/models/*` as a matcher of request paths. */
function matcher(path: string): RegExp {
  const body = path
    .split("/")
    .map((s) => (s.startsWith(":") ? "[^/]+" : s === "*" ? ".*" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${body}$`);
}

export class ErrorDialects {
  private byRoute: Map<string, ErrorDialect> | null = null;
  private patterns: { method: string; match: RegExp; dialect: ErrorDialect }[] = [];

  /** `routes` is read at the first error, once every route is added. */
  constructor(private routes: () => readonly DialectRoute[]) {}

  private index(): Map<string, ErrorDialect> {
    if (this.byRoute) return this.byRoute;
    const all = this.routes();
    this.byRoute = new Map(all.map((r) => [`${r.method} ${r.path}`, dialectOf(r)]));
    this.patterns = all
      .filter((r) => /[:*]/.test(r.path))
      .map((r) => ({ method: r.method, match: matcher(r.path), dialect: dialectOf(r) }));
    return this.byRoute;
  }

  /** The dialect of the route Elysia matched (`route` is its declared path; none: OpenAI's). */
  ofRoute(method: string, route: string | undefined): ErrorDialect {
    if (!route) return "openai";
    return this.index().get(`${method} ${route}`) ?? this.index().get(`ALL ${route}`) ?? "openai";
  }

  /**
   * The dialect of the route that would answer a request refused before routing (a declared
   * body over the limit): the route table looked up as the router would, static paths first.
   */
  ofRequest(method: string, pathname: string): ErrorDialect {
    const exact = this.index().get(`${method} ${pathname}`) ?? this.byRoute!.get(`ALL ${pathname}`);
    if (exact) return exact;
    const found = this.patterns.find((p) => (p.method === method || p.method === "ALL") && p.match.test(pathname));
    return found?.dialect ?? "openai";
  }
}
