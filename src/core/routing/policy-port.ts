/**
 * The policy port: how a chat call asks for the route of a routing policy (`orch/<slug>`). The
 * policy store implements it (src/core/policies, src/db); the chat service calls it
 * (chat/ports.ts ChatDeps.policies); router.ts decides the route.
 */
import type { CatalogSnapshot } from "../catalog/types";
import type { ChatRequest } from "../model/types";
import type { PolicyRoute } from "./types";

export interface PolicyRouteInput {
  userId: string;
  slug: string;
  traceId: string | undefined;
  request: Omit<ChatRequest, "model">;
  snapshot: CatalogSnapshot;
}

/**
 * A routing-policy call (`orch/<slug>`): finds the caller's policy, applies its gates and
 * state, and decides the route (src/core/routing). `observe` receives every leaf call's
 * latency, for the `latency` engine.
 */
export interface PolicyPort {
  route(input: PolicyRouteInput): Promise<PolicyRoute>;
  observe?(model: string, provider: string | null, ok: boolean, ttftMs: number, totalMs: number): void;
}
