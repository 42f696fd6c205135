/**
 * The simulator's HTTP server: plain `Bun.serve` (it is also the baseline upstream in
 * benchmarks, so the per-request work is one URL parse, one map lookup and the handler).
 * `/sim/stats` and `/sim/reset` are served at the root; everything else is
 * `/sim/<provider>/<path>` dispatched through the route registry.
 */
import type { Server } from "bun";
import { SimHttpError } from "./http.ts";
import { matchSimRoute, primaryTable, type SimContext, type SimRouteTable } from "./routes.ts";
import type { SimState } from "./state.ts";

const PREFIX = "/sim/";

export function createSimServer(state: SimState, port: number, hostname: string): Server<undefined> {
  return Bun.serve({
    port,
    hostname,
    // Generous, for slow clients; hangs, latencies and slow streams lift it per request.
    idleTimeout: 255,
    fetch: (req, server) => dispatch(req, server, state),
    error: (err) => plainJson(500, `simulator error: ${err instanceof Error ? err.message : String(err)}`),
  });
}

async function dispatch(req: Request, server: Server<undefined>, state: SimState): Promise<Response> {
  const url = new URL(req.url);
  const path = url.pathname;
  if (!path.startsWith(PREFIX)) return plainJson(404, `not a simulator path: ${path} (try ${PREFIX}<provider>/...)`);
  if (path === "/sim/stats" && req.method === "GET") return Response.json(state.stats());
  if (path === "/sim/reset" && req.method === "POST") {
    state.reset();
    return Response.json({ ok: true });
  }

  const slash = path.indexOf("/", PREFIX.length);
  const provider = path.slice(PREFIX.length, slash < 0 ? undefined : slash);
  const rest = slash < 0 ? "/" : path.slice(slash);
  state.count(provider, `${req.method} ${rest}`);

  const route = matchSimRoute(provider, req.method, rest);
  if (!route) {
    const table = primaryTable(provider);
    if (!table) return plainJson(404, `unknown simulated provider: ${provider}`);
    return table.error(404, `Invalid URL (${req.method} ${rest})`);
  }
  const denied = route.table.authenticate?.(req, url);
  if (denied) return denied;
  const ctx: SimContext = {
    req,
    url,
    provider,
    path: rest,
    params: route.params,
    sim: state,
    server,
    error: route.table.error,
  };
  try {
    return await route.handler(ctx);
  } catch (err) {
    return renderThrown(route.table, err);
  }
}

function renderThrown(table: SimRouteTable, err: unknown): Response {
  if (err instanceof SimHttpError) return table.error(err.status, err.message);
  return table.error(500, `simulator bug: ${err instanceof Error ? err.message : String(err)}`);
}

function plainJson(status: number, message: string): Response {
  return Response.json({ error: { message, type: "not_found" } }, { status });
}
