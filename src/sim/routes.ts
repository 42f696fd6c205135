/**
 * The route registry: which simulated provider answers which `"METHOD /path"`, with which
 * protocol's credentials check and error envelope. Every protocol — built-in chat ones and
 * ones added later (video task APIs, web search) — registers a table here; the server only
 * dispatches. Lookups happen per request, so tables registered after start still apply.
 */
import type { Server } from "bun";
import type { SimState } from "./state.ts";

/** What a route handler gets. */
export interface SimContext {
  readonly req: Request;
  readonly url: URL;
  /** The simulated provider id, from the base URL `/sim/<provider>`. */
  readonly provider: string;
  /** The path under the provider's base URL, e.g. `/v1/chat/completions`. */
  readonly path: string;
  /** Values of the `{name}` pieces of the matched route pattern. */
  readonly params: Readonly<Record<string, string>>;
  /** This simulator instance's state (stats, caches, counters, scratch). */
  readonly sim: SimState;
  readonly server: Server<undefined>;
  /** Renders an error in the matched table's envelope (vendor default message when omitted). */
  error(status: number, message?: string): Response;
}

export type SimHandler = (ctx: SimContext) => Response | Promise<Response>;

/** One protocol's routes, as a provider serves them. */
export interface SimRouteTable {
  /** Protocol name, for logs and docs (e.g. "openai-chat", "anthropic-messages"). */
  protocol: string;
  /**
   * Checks the protocol's credential header. Returns the vendor's own error response when it
   * is missing, undefined when the request may proceed. Any non-empty value is accepted.
   */
  authenticate?: (req: Request, url: URL) => Response | undefined;
  /** Renders the vendor's error envelope for a status; also used for unknown paths (404). */
  error: (status: number, message?: string) => Response;
  /**
   * `"METHOD /path"` → handler. A `{name}` piece matches up to the next `/` and lands in
   * `ctx.params.name`, e.g. `"POST /v1beta/models/{model}:generateContent"`.
   */
  routes: Record<string, SimHandler>;
}

interface RouteEntry {
  table: SimRouteTable;
  handler: SimHandler;
}

interface PatternEntry extends RouteEntry {
  method: string;
  regex: RegExp;
  names: string[];
}

interface ProviderRoutes {
  tables: SimRouteTable[];
  exact: Map<string, RouteEntry>;
  patterns: PatternEntry[];
}

export interface RouteMatch extends RouteEntry {
  params: Record<string, string>;
}

const providers = new Map<string, ProviderRoutes>();
const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * Adds a protocol's routes to a simulated provider (created on first use), served under
 * `/sim/<provider>`. A provider may carry several tables (Gemini chat plus Veo video under
 * `google`); its first table renders 404s for unknown paths. Registering the same
 * `"METHOD /path"` again replaces the earlier handler.
 */
export function registerSimRoutes(provider: string, table: SimRouteTable): void {
  let entry = providers.get(provider);
  if (!entry) providers.set(provider, (entry = { tables: [], exact: new Map(), patterns: [] }));
  if (!entry.tables.includes(table)) entry.tables.push(table);
  for (const [key, handler] of Object.entries(table.routes)) {
    const space = key.indexOf(" ");
    if (space < 1 || key[space + 1] !== "/") throw new Error(`sim route must look like "POST /path": ${key}`);
    const method = key.slice(0, space).toUpperCase();
    const path = key.slice(space + 1);
    if (!path.includes("{")) {
      entry.exact.set(`${method} ${path}`, { table, handler });
      continue;
    }
    const names: string[] = [];
    const source = path
      .split(/(\{\w+\})/)
      .map((piece) => {
        const name = /^\{(\w+)\}$/.exec(piece)?.[1];
        if (!name) return piece.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
        names.push(name);
        return "([^/]+?)";
      })
      .join("");
    const regex = new RegExp(`^${source}$`);
    entry.patterns = entry.patterns.filter((p) => !(p.method === method && p.regex.source === regex.source));
    entry.patterns.push({ method, regex, names, table, handler });
  }
}

/** Provider ids that have routes, in registration order. */
export function simProviders(): string[] {
  return [...providers.keys()];
}

/** The first table of a provider (its error envelope), or undefined for an unknown provider. */
export function primaryTable(provider: string): SimRouteTable | undefined {
  return providers.get(provider)?.tables[0];
}

/** Finds the route for a request under a provider's base URL. */
export function matchSimRoute(provider: string, method: string, path: string): RouteMatch | undefined {
  const entry = providers.get(provider);
  if (!entry) return undefined;
  const exact = entry.exact.get(`${method} ${path}`);
  if (exact) return { ...exact, params: NO_PARAMS };
  for (const p of entry.patterns) {
    if (p.method !== method) continue;
    const m = p.regex.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    p.names.forEach((name, i) => (params[name] = decodeURIComponent(m[i + 1]!)));
    return { table: p.table, handler: p.handler, params };
  }
  return undefined;
}
