/**
 * API-key authentication of a route, declared on the route: `{ apiKey: "model" }` (or `"any"`,
 * or a scope such as `"usage:read"`). The key is checked with everything the specification
 * enforces at a key authentication point (validity, allowlist, scope, rate limit), every answer
 * to it carries the rate-limit counters, and the handler receives the key's `principal`.
 *
 * An Elysia macro whose `resolve` runs after the body's validation, where handlers checked the
 * key themselves: a 422 still costs no rate-limit hit, and the credential itself was already
 * checked from the headers before the body was read (./security.ts).
 */
import { Elysia } from "elysia";
import type { Server } from "bun";
import type { Scope } from "../core/auth/principal";
import type { ApiKeyAuth, Authenticator } from "./auth";

/** What a route asks of the key: a scope, any model-calling key, or any key at all. */
export type KeyNeed = Scope | "model" | "any";

/**
 * Authenticates the request's API key for `need` and adds the rate-limit counters to
 * `headers`. For routes that take a key or another credential, which decide per request.
 */
export function authenticateKey(
  auth: Authenticator,
  request: Request,
  { server, need, headers }: { server: Server<unknown> | null; need: KeyNeed; headers: Record<string, unknown> },
): Promise<ApiKeyAuth> {
  return auth.apiKey(request, server, need, headers);
}

/** The `apiKey` route option. Each route module uses it; Elysia applies it per route. */
export function apiKeyAuth(auth: Authenticator) {
  return new Elysia({ name: "api-key-auth" }).macro({
    apiKey: (need: KeyNeed) => ({
      resolve({ request, server, set }) {
        return auth.apiKey(request, server, need, set.headers);
      },
    }),
  });
}
