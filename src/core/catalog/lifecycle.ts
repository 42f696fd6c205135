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
 *
 * One provider's offering has the same stages (its `deprecated_at` / `retires_at`): a model
 * outlives a provider that retired its upstream id. A retired offering is skipped (the model's
 * other providers answer), a pin to it (`deepseek-v3@deepseek`) is refused naming the offering's
 * successor, and a model whose every offering is retired is retired. The simulator exception is
 * the same. A deprecated offering's answer carries the same notice.
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

const DAY_MS = 86_400_000;
let dayStart = 0;
let dayText = "";

/** Today (UTC) by the clock, formatted once a day rather than on every call that asks. */
export function utcToday(): string {
  const now = Date.now();
  if (now < dayStart || now >= dayStart + DAY_MS) {
    dayStart = now - (now % DAY_MS);
    dayText = utcDay(new Date(now));
  }
  return dayText;
}

/** The real clock and no simulator: what a service without a port applies. */
export const SYSTEM_LIFECYCLE: LifecyclePort = { today: utcToday, simulated: () => false };

/** The stage of anything with the two days (a model's own, or one offering's). */
function stageOf(x: { readonly deprecatedAt: string | null; readonly retiresAt: string | null }, today: string) {
  if (x.retiresAt !== null && today >= x.retiresAt) return "retired";
  if (x.deprecatedAt !== null && today >= x.deprecatedAt) return "deprecated";
  return "active";
}

/** The model's own stage (its own dates only; see `modelStage` for its offerings too). */
export function lifecycleStage(m: CatalogModel, today: string): LifecycleStage {
  return stageOf(m, today);
}

/** One provider's offering: retired when its own day or its model's has come. */
export function offeringStage(m: CatalogModel, o: CatalogOffering, today: string): LifecycleStage {
  const own = stageOf(o, today);
  const model = stageOf(m, today);
  return own === "retired" || model === "retired"
    ? "retired"
    : own === "deprecated" || model === "deprecated"
      ? "deprecated"
      : "active";
}

/** The model's stage counting its offerings: retired too when every offering is. */
export function modelStage(m: CatalogModel, offerings: readonly CatalogOffering[], today: string): LifecycleStage {
  const own = stageOf(m, today);
  if (own === "retired") return own;
  if (offerings.length > 0 && offerings.every((o) => stageOf(o, today) === "retired")) return "retired";
  return own;
}

/**
 * The dates a client is told about a model: its own, or, when every offering retires, the
 * latest offering retirement and the first offering's successor (the model goes with them).
 */
export function modelDates(
  m: CatalogModel,
  offerings: readonly CatalogOffering[],
): { deprecatedAt: string | null; retiresAt: string | null; successor: string | null } {
  if (m.retiresAt !== null || offerings.length === 0 || offerings.some((o) => o.retiresAt === null))
    return { deprecatedAt: m.deprecatedAt, retiresAt: m.retiresAt, successor: m.successor };
  const last = [...offerings].sort((a, b) => (a.retiresAt! < b.retiresAt! ? 1 : -1))[0]!;
  return {
    deprecatedAt: m.deprecatedAt ?? offerings.map((o) => o.deprecatedAt ?? o.retiresAt!).sort()[0]!,
    retiresAt: last.retiresAt,
    successor: m.successor ?? last.successor,
  };
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

/**
 * The notice for an answer of `m` today (through `offering`, when known); null when both the
 * model and the offering are active. The model's own notice comes first; an offering's names
 * `model@provider`.
 */
export function lifecycleNotice(
  m: CatalogModel | undefined,
  today: string,
  offering?: CatalogOffering,
): ModelNotice | null {
  if (!m) return null;
  const stage = lifecycleStage(m, today);
  if (stage !== "active")
    return {
      model: m.id,
      stage,
      deprecatedAt: m.deprecatedAt ?? m.retiresAt!,
      retiresAt: m.retiresAt,
      successor: m.successor,
    };
  if (!offering) return null;
  const own = stageOf(offering, today);
  if (own === "active") return null;
  return {
    model: `${m.id}@${offering.providerId}`,
    stage: own,
    deprecatedAt: offering.deprecatedAt ?? offering.retiresAt!,
    retiresAt: offering.retiresAt,
    successor: offering.successor,
  };
}

/** 400 `model_retired`: the model, the day it retired and what to call instead. */
export function modelRetired(m: CatalogModel, offerings: readonly CatalogOffering[] = []): GatewayError {
  const { retiresAt, successor } = modelDates(m, offerings);
  return retiredError(m.id, retiresAt!, successor);
}

/** 400 `model_retired` for a pin to an offering its provider retired (`deepseek-v3@deepseek`). */
export function offeringRetired(m: CatalogModel, o: CatalogOffering): GatewayError {
  // Retired with its model (on the model's own, earlier day): the model's refusal.
  if (m.retiresAt !== null && (o.retiresAt === null || m.retiresAt <= o.retiresAt)) return modelRetired(m);
  return retiredError(`${m.id}@${o.providerId}`, o.retiresAt!, o.successor);
}

function retiredError(id: string, day: string, next: string | null): GatewayError {
  return new GatewayError(
    "model_retired",
    next
      ? text(
          `'${id}' 모델은 ${day}에 지원이 종료되었습니다. 대신 '${next}' 모델을 사용하세요.`,
          `The model '${id}' was retired on ${day}. Use '${next}' instead.`,
        )
      : text(
          `'${id}' 모델은 ${day}에 지원이 종료되었습니다. 사용 가능한 모델은 GET /v1/models에서 확인하세요.`,
          `The model '${id}' was retired on ${day}. See GET /v1/models for the available models.`,
        ),
    { suggestions: next ? [next] : [] },
  );
}

/**
 * A resolution with retirement applied: a retired model, or a retired offering, is kept only
 * where the simulator serves it. A leaf left without offerings is refused with `model_retired`
 * (a pin: naming the offering's successor); a routing parent drops retired candidates the same
 * way (none left: `model_retired` for the first). Policies pass: their entries are checked when routed.
 */
export function withoutRetired<R extends ModelResolution>(resolution: R, port: LifecyclePort): R {
  return narrowed(resolution, port) as R;
}

function narrowed(resolution: ModelResolution, port: LifecyclePort): ModelResolution {
  if (resolution.kind === "policy") return resolution;
  const today = port.today();
  const kept = (m: CatalogModel, o: CatalogOffering) => offeringStage(m, o, today) !== "retired" || port.simulated(o);
  // The same array when every offering stays (the usual case): no copy on every call.
  const keep = (m: CatalogModel, offerings: readonly CatalogOffering[]) => {
    for (const o of offerings) if (!kept(m, o)) return offerings.filter((x) => kept(m, x));
    return offerings;
  };
  const refusal = (m: CatalogModel, offerings: readonly CatalogOffering[], pinned: boolean) =>
    pinned && offerings.length === 1 ? offeringRetired(m, offerings[0]!) : modelRetired(m, offerings);
  if (resolution.kind === "leaf") {
    const offerings = keep(resolution.model, resolution.offerings);
    if (offerings.length === 0)
      throw refusal(resolution.model, resolution.offerings, resolution.pinnedProvider !== null);
    return offerings.length === resolution.offerings.length ? resolution : { ...resolution, offerings };
  }
  const candidates = resolution.candidates.flatMap((c) => {
    const offerings = keep(c.model, c.offerings);
    if (offerings.length === c.offerings.length) return [c];
    return offerings.length > 0 ? [{ model: c.model, offerings }] : [];
  });
  if (candidates.length === 0) {
    const first = resolution.candidates[0]!;
    throw modelRetired(first.model, first.offerings);
  }
  return candidates.length === resolution.candidates.length ? resolution : { ...resolution, candidates };
}
