/**
 * Model lifecycle: what a model's `deprecated_at` / `retires_at` mean on a given day. Pure:
 * the day comes from the caller (the gateway's clock, `CATALOG_TODAY` in tests and demos).
 *
 * - active: answers as usual;
 * - deprecated (deprecated_at ≤ today < retires_at): answers, with a notice the HTTP edge turns
 *   into `x-gateway-warnings`, `Deprecation` and `Sunset` headers;
 * - retired (retires_at ≤ today): refused before any hold with 400 `model_retired` naming the
 *   successor, except through offerings the simulator serves (demo mode, `SIMULATOR=on`): the
 *   simulator has no provider behind it to retire the model, so documents and tests written
 *   against the id keep working there (docs/decisions.md, "Retired models in demo mode").
 */
import { GatewayError, text } from "../errors";
import type { ModelResolution } from "./resolve";
import type { CatalogModel, CatalogOffering } from "./types";

export type LifecycleStage = "active" | "deprecated" | "retired";

/** What the gateway needs to apply the lifecycle: the day, and which offerings the simulator serves. */
export interface LifecyclePort {
  /** Today as `YYYY-MM-DD` (UTC). */
  today(): string;
  /** Whether this offering's calls go to the built-in simulator (for this caller). */
  simulated(offering: CatalogOffering): boolean;
}

/** `YYYY-MM-DD` of a time, in UTC. */
export const utcDay = (d: Date): string => d.toISOString().slice(0, 10);

/** The real clock and no simulator: what a service without a port applies. */
export const SYSTEM_LIFECYCLE: LifecyclePort = { today: () => utcDay(new Date()), simulated: () => false };

export function lifecycleStage(m: CatalogModel, today: string): LifecycleStage {
  if (m.retiresAt !== null && today >= m.retiresAt) return "retired";
  if (m.deprecatedAt !== null && today >= m.deprecatedAt) return "deprecated";
  return "active";
}

/** What a deprecated (or retired, simulator-served) model's answer says about it. */
export interface ModelNotice {
  readonly model: string;
  readonly stage: "deprecated" | "retired";
  /** The day it was deprecated; the retirement day when only that is known. */
  readonly deprecatedAt: string;
  readonly retiresAt: string | null;
  readonly successor: string | null;
}

/** The notice for an answer of `m` today; null for an active model. */
export function lifecycleNotice(m: CatalogModel | undefined, today: string): ModelNotice | null {
  if (!m) return null;
  const stage = lifecycleStage(m, today);
  if (stage === "active") return null;
  return {
    model: m.id,
    stage,
    deprecatedAt: m.deprecatedAt ?? m.retiresAt!,
    retiresAt: m.retiresAt,
    successor: m.successor,
  };
}

/** 400 `model_retired`: the model, the day it retired and what to call instead. */
export function modelRetired(m: CatalogModel): GatewayError {
  const next = m.successor;
  return new GatewayError(
    "model_retired",
    next
      ? text(
          `'${m.id}' 모델은 ${m.retiresAt}에 지원이 종료되었습니다. 대신 '${next}' 모델을 사용하세요.`,
          `The model '${m.id}' was retired on ${m.retiresAt}. Use '${next}' instead.`,
        )
      : text(
          `'${m.id}' 모델은 ${m.retiresAt}에 지원이 종료되었습니다. 사용 가능한 모델은 GET /v1/models에서 확인하세요.`,
          `The model '${m.id}' was retired on ${m.retiresAt}. See GET /v1/models for the available models.`,
        ),
    { suggestions: next ? [next] : [] },
  );
}

/**
 * A resolution with retirement applied: a retired leaf keeps only the offerings the simulator
 * serves (none: `model_retired`); a routing parent drops retired candidates the same way (none
 * left: `model_retired` for the first). Policies pass: their entries are checked when routed.
 */
export function withoutRetired<R extends ModelResolution>(resolution: R, port: LifecyclePort): R {
  return narrowed(resolution, port) as R;
}

function narrowed(resolution: ModelResolution, port: LifecyclePort): ModelResolution {
  if (resolution.kind === "policy") return resolution;
  const today = port.today();
  const keep = (m: CatalogModel, offerings: readonly CatalogOffering[]) =>
    lifecycleStage(m, today) === "retired" ? offerings.filter((o) => port.simulated(o)) : offerings;
  if (resolution.kind === "leaf") {
    const offerings = keep(resolution.model, resolution.offerings);
    if (offerings.length === 0) throw modelRetired(resolution.model);
    return offerings.length === resolution.offerings.length ? resolution : { ...resolution, offerings };
  }
  const candidates = resolution.candidates.flatMap((c) => {
    if (lifecycleStage(c.model, today) !== "retired") return [c];
    const offerings = keep(c.model, c.offerings);
    return offerings.length > 0 ? [{ model: c.model, offerings }] : [];
  });
  if (candidates.length === 0) throw modelRetired(resolution.candidates[0]!.model);
  return candidates.length === resolution.candidates.length ? resolution : { ...resolution, candidates };
}
