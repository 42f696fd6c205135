/**
 * The policy port of the chat service: finds the caller's policy by slug, applies the
 * operator gates and the policy's own state (docs/decisions.md #12), keeps only entries that are
 * still callable in the current catalog, and decides the route. Also the sink of live
 * latency measurements for the `latency` engine.
 */
import { GatewayError, text } from "../errors";
import { checkPolicyEntryModel } from "../catalog/resolve";
import type { PolicyPort, PolicyRouteInput } from "./policy-port";
import type { BenchmarkTable } from "./benchmarks";
import { decideRoute } from "./decide";
import type { LatencyTracker } from "./latency";
import { gateOf, type Policy, type PolicyRoute } from "./types";

/** Where policies come from (a cached repository in the gateway). */
export interface PolicySource {
  /** The caller's own policy with this slug, else one of their organizations'; null when none. */
  findForCall(userId: string, slug: string): Promise<Policy | null>;
}

export interface PolicyRouterDeps {
  source: PolicySource;
  /** The operator gates, read on every call (they change at runtime). */
  gates(): Record<"routing.policies_enabled" | "routing.orchestrators_enabled", boolean>;
  benchmarks(): BenchmarkTable;
  latency: LatencyTracker;
  random?: () => number;
}

export class PolicyRouter implements PolicyPort {
  constructor(private deps: PolicyRouterDeps) {}

  async route(input: PolicyRouteInput): Promise<PolicyRoute> {
    const policy = await this.deps.source.findForCall(input.userId, input.slug);
    if (!policy)
      throw new GatewayError(
        "policy_not_found",
        text(`라우팅 정책 '${input.slug}'을(를) 찾을 수 없습니다.`, `Routing policy '${input.slug}' not found.`),
      );
    const gate = gateOf(policy.policyType);
    if (!this.deps.gates()[gate]) {
      throw new GatewayError(
        "policy_gate_disabled",
        text(
          `'${policy.policyType}' 정책은 운영 설정(${gate})에서 꺼져 있습니다.`,
          `'${policy.policyType}' policies are turned off in the operator setting ${gate}.`,
        ),
      );
    }
    if (!policy.isActive)
      throw new GatewayError(
        "policy_inactive",
        text(
          `라우팅 정책 '${policy.slug}'은(는) 비활성화되어 있습니다.`,
          `Routing policy '${policy.slug}' is inactive.`,
        ),
      );
    // The catalog may have changed since the policy was saved: skip entries no longer callable.
    const entries = policy.entries.filter((e) => checkPolicyEntryModel(input.snapshot, e.model).ok);
    if (!entries.length)
      throw new GatewayError(
        "invalid_policy_entry",
        text(
          `라우팅 정책 '${policy.slug}'에 현재 호출할 수 있는 모델이 없습니다.`,
          `Routing policy '${policy.slug}' has no model that can be called now.`,
        ),
      );
    const route = decideRoute(policy, entries, {
      traceId: input.traceId,
      request: input.request,
      benchmarks: this.deps.benchmarks(),
      latency: this.deps.latency,
      random: this.deps.random ?? Math.random,
    });
    // A judge or synthesis model that left the catalog: no judge; the first worker merges.
    const shape = route.shape;
    if (shape.kind === "cascade" && shape.judge && !checkPolicyEntryModel(input.snapshot, shape.judge).ok)
      shape.judge = null;
    if (shape.kind === "parallel" && !checkPolicyEntryModel(input.snapshot, shape.synthesis.model).ok)
      shape.synthesis = { model: shape.workers[0]!.model };
    return route;
  }

  observe(model: string, provider: string | null, ok: boolean, ttftMs: number, totalMs: number): void {
    this.deps.latency.observe(model, provider, ok, ttftMs, totalMs);
  }
}
