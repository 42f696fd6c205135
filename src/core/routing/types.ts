/** Routing policies as the core sees them, and the route a policy decides for one call. */
import type { Category } from "./classify";
import type { PolicyConfig, PolicyLimits, ResponseCheck, RoutingPrefs } from "./config-schema";

export const POLICY_TYPES = ["fallback", "weighted", "latency", "auto", "cascade", "parallel"] as const;
export type PolicyType = (typeof POLICY_TYPES)[number];

/** The operator gate (admin settings) that covers a policy type. */
export function gateOf(type: PolicyType): "routing.policies_enabled" | "routing.orchestrators_enabled" {
  return type === "cascade" || type === "parallel" ? "routing.orchestrators_enabled" : "routing.policies_enabled";
}

export interface PolicyEntry {
  /** Short model id, optionally `@provider`. */
  model: string;
  /** Extra attempts per provider of this entry (fallback and cascade). */
  retries: number;
  /** Weighted policies only; absent means 1. */
  weight?: number;
}

export interface Policy {
  id: string;
  /** The creator. */
  userId: string;
  orgId: string | null;
  slug: string;
  displayName: string;
  policyType: PolicyType;
  entries: PolicyEntry[];
  config: PolicyConfig;
  isActive: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** One model the chat service will try, with its retries per provider (null: the default 2). */
export interface RouteEntry {
  model: string;
  retries: number | null;
}

export type RouteShape =
  /** fallback, weighted, latency, auto, and parallel without fan-out: one answer, entries in order. */
  | { kind: "single"; entries: RouteEntry[] }
  | {
      kind: "cascade";
      /** Cheap to expensive. */
      tiers: RouteEntry[];
      /** Index of the first tier to try (the top one for a hard category). */
      start: number;
      check: ResponseCheck;
      judge: string | null;
    }
  | {
      kind: "parallel";
      workers: RouteEntry[];
      synthesis: { model: string; instructions?: string };
    };

/** How one call of a policy runs: what the chat service executes and bills. */
export interface PolicyRoute {
  policyId: string;
  slug: string;
  engine: PolicyType;
  /** The request's intent, where the engine classified it. */
  category: Category | null;
  shape: RouteShape;
  prefs: RoutingPrefs | undefined;
  limits: PolicyLimits;
  /** `key=value` facts for the `X-Policy-Decision` header (the run appends its own). */
  facts: string[];
}
