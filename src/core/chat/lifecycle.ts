/**
 * The model lifecycle of one call (catalog/lifecycle.ts) from the call's point of view: a BYOK
 * key's own provider is reached with the key's credential, never simulated, so a retired model
 * is refused there even while the simulator stands in for the operator; and the notice an
 * answer carries is about the model that answered (a routing parent's or a policy's leaf).
 */
import type { KeyPrincipal } from "../auth/principal";
import { lifecycleNotice, SYSTEM_LIFECYCLE, type LifecyclePort, type ModelNotice } from "../catalog/lifecycle";
import { getModel, getOffering, type CatalogSnapshot } from "../catalog/types";

export function lifecycleFor(d: { lifecycle?: LifecyclePort }, p: KeyPrincipal): LifecyclePort {
  const port = d.lifecycle ?? SYSTEM_LIFECYCLE;
  const own = p.kind === "byok" ? p.byokProvider : null;
  return { today: () => port.today(), simulated: (o) => o.providerId !== own && port.simulated(o) };
}

/**
 * The deprecation notice of an answer by `modelId` through `providerId` (when known: a deprecated
 * or retired offering warns too); null when both are active.
 */
export function answerNotice(
  d: { lifecycle?: LifecyclePort },
  snapshot: CatalogSnapshot,
  modelId: string,
  providerId: string | null = null,
): ModelNotice | null {
  const offering = providerId === null ? undefined : getOffering(snapshot, modelId, providerId);
  return lifecycleNotice(getModel(snapshot, modelId), (d.lifecycle ?? SYSTEM_LIFECYCLE).today(), offering);
}
