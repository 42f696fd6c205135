/**
 * The upstream simulator: a real HTTP server that impersonates the model providers in their
 * own wire protocols, so tests, demo mode and benchmarks exercise the gateway's real
 * adapters. See docs/simulator.md. It imports nothing from the gateway: sharing code with
 * the adapters it tests would let their bugs cancel out.
 */
import { registerBuiltinSimRoutes } from "./protocols/index.ts";
import { createSimServer } from "./server.ts";
import { SimState, type SimStats } from "./state.ts";

export type { SimStats } from "./state.ts";
export { registerSimRoutes, simProviders } from "./routes.ts";
export type { SimContext, SimHandler, SimRouteTable } from "./routes.ts";
export { directiveInt, failureFor, parseDirectives, parseFailure, stripDirectives } from "./directives.ts";
export type { Directives, FailureSpec } from "./directives.ts";
export { keepOpen, obeyDirectives } from "./directive-effects.ts";
export { jsonResponse, readJsonBody, sleep, SimHttpError } from "./http.ts";
export { sseResponse } from "./sse.ts";
export type { SseFrame } from "./sse.ts";
export { countTokens } from "./tokens.ts";

export interface Simulator {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** A provider's base URL: `${url}/sim/${provider}`. */
  baseUrl(provider: string): string;
  /** Calls received so far, per provider and `"METHOD /path"` (same as `GET /sim/stats`). */
  stats(): SimStats;
  /** Requests per provider whose client hung up while they waited out `[sim:latency]` (cancelled before their first byte). */
  cancelled(): Record<string, number>;
  /** Clears stats, prompt caches, `xN` counters and protocol state (same as `POST /sim/reset`). */
  reset(): void;
  stop(): Promise<void>;
}

export interface SimulatorOptions {
  /** 0 or absent: a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  hostname?: string;
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  registerBuiltinSimRoutes();
  const state = new SimState();
  const hostname = opts.hostname ?? "127.0.0.1";
  const server = createSimServer(state, opts.port ?? 0, hostname);
  const url = `http://${urlHost(hostname)}:${server.port}`;
  return {
    url,
    baseUrl: (provider) => `${url}/sim/${provider}`,
    stats: () => state.stats(),
    cancelled: () => state.cancelled(),
    reset: () => state.reset(),
    async stop() {
      // Settle hung requests first so no handler promise outlives the server.
      for (const release of [...state.hangs]) release();
      await server.stop(true);
    },
  };
}

/** A host clients can dial: wildcard binds are reached through loopback. */
function urlHost(hostname: string): string {
  if (hostname === "0.0.0.0" || hostname === "") return "127.0.0.1";
  if (hostname === "::") return "[::1]";
  return hostname.includes(":") ? `[${hostname}]` : hostname;
}
