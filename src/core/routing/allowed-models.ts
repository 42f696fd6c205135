/**
 * `allowed_models`: what a key's list lets it call. One check for every route that names a
 * model (chat, Responses, Messages and count_tokens, embeddings, video), so the list means one
 * thing everywhere (docs/decisions.md #52). Pure functions of the catalog snapshot.
 */
import { GatewayError, text } from "../errors";
import type { KeyPrincipal } from "../auth/principal";
import { findModel, parsePolicyRef, type ModelResolution } from "../catalog/resolve";
import type { CatalogSnapshot } from "../catalog/types";

/**
 * Throws 400 `model_not_allowed` naming the id as the client sent it, unless the key's list
 * allows the resolved call. Called once the model resolved (unknown, other-modality and
 * retired ids are refused before) and before anything else about it is looked at.
 */
export function checkAllowed(snapshot: CatalogSnapshot, p: KeyPrincipal, r: ModelResolution): void {
  if (!allows(snapshot, p, r))
    throw new GatewayError(
      "model_not_allowed",
      text(`이 키로는 '${r.requested}' 모델을 호출할 수 없습니다.`, `This key cannot call the model '${r.requested}'.`),
    );
}

/**
 * Whether the list allows `r`: an empty or absent list allows everything; otherwise the model
 * the call resolved to must be listed by itself (a leaf by its own id, a routing parent by the
 * parent's, a policy by its slug). Nothing is allowed through a relative: a family, a sibling,
 * a parent's leaf or a leaf's parent.
 */
export function allows(snapshot: CatalogSnapshot, p: KeyPrincipal, r: ModelResolution): boolean {
  if (!p.allowedModels?.length) return true;
  const allowed = new Set(p.allowedModels.map((entry) => canonicalEntry(snapshot, entry)));
  return allowed.has(r.kind === "policy" ? `orch/${r.slug}` : r.model.id);
}

/**
 * A list entry in canonical form: `orch/<slug>` for a policy (either prefix); for a model its
 * catalog id, from any spelling a request may use (short, vendor-prefixed, alias, any case),
 * a `@provider` pin dropped (the entry allows the model on all its providers); an entry that
 * names nothing stays as written and matches nothing.
 */
function canonicalEntry(snapshot: CatalogSnapshot, entry: string): string {
  const policy = parsePolicyRef(entry);
  if (policy) return `orch/${policy.slug}`;
  const base = entry.includes("@") ? entry.slice(0, entry.lastIndexOf("@")) : entry;
  return findModel(snapshot, base)?.id ?? entry;
}
