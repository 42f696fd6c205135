/**
 * The rules of a model's lifecycle (`deprecated_at`, `retires_at`, `successor`) and of its
 * `aliases`, checked by verify.ts. None depends on today's date: a catalog that verifies today
 * still verifies after a retirement day passes.
 */
import type { ModelEntry } from "./schema";
import type { CatalogProblem, CatalogProblemKind } from "./types";

/** A real calendar day in `YYYY-MM-DD` form (the schema has checked the shape). */
export function isDay(day: string): boolean {
  const t = Date.parse(`${day}T00:00:00Z`);
  return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === day;
}

/**
 * Deprecation, retirement and successor of one model. Dates are compared as text (ISO days sort).
 * The rules hold at every date, so a catalog that verifies today still verifies later: the
 * successor must still be served on the day this model retires.
 */
export function checkLifecycle(at: string, m: ModelEntry, models: Map<string, ModelEntry>): CatalogProblem[] {
  const out: CatalogProblem[] = [];
  const push = (kind: CatalogProblemKind, path: string, message: string) => out.push({ kind, path, message });
  const deprecated = m.deprecated_at ?? null;
  const retires = m.retires_at ?? null;
  const successor = m.successor ?? null;
  if (m.kind !== "leaf") {
    for (const field of ["deprecated_at", "retires_at", "successor", "aliases"] as const) {
      if (m[field] !== undefined && m[field] !== null)
        push("schema", `${at}.${field}`, `only leaves have ${field} (this is a ${m.kind} id)`);
    }
    return out;
  }
  if (deprecated !== null && !isDay(deprecated))
    push("schema", `${at}.deprecated_at`, `"${deprecated}" is not a calendar date`);
  if (retires !== null && !isDay(retires)) push("schema", `${at}.retires_at`, `"${retires}" is not a calendar date`);
  if (deprecated !== null && retires !== null && retires < deprecated)
    push("schema", `${at}.retires_at`, `retires_at ${retires} is before deprecated_at ${deprecated}`);
  if (successor === null) return out;
  const next = models.get(successor);
  const sat = `${at}.successor`;
  if (successor === m.id) push("reference", sat, "a model cannot be its own successor");
  else if (!next) push("reference", sat, `unknown model "${successor}"`);
  else if (next.kind !== "leaf" || !next.active || next.modality !== m.modality)
    push("reference", sat, `"${successor}" is not an active ${m.modality} leaf`);
  else if (next.retires_at != null && (retires === null || next.retires_at <= retires))
    push("reference", sat, `"${successor}" retires on ${next.retires_at}, no later than "${m.id}" itself`);
  return out;
}

/** Aliases: only on leaves, and unique across every short id, vendor id and alias (bare or vendor-prefixed). */
export function checkAliases(models: readonly ModelEntry[]): CatalogProblem[] {
  const out: CatalogProblem[] = [];
  const taken = new Map<string, string>();
  models.forEach((m) => {
    taken.set(m.id, `model id of "${m.id}"`);
    taken.set(m.vendor_id, `vendor id of "${m.id}"`);
  });
  models.forEach((m, i) => {
    const prefix = m.vendor_id.slice(0, m.vendor_id.indexOf("/"));
    (m.aliases ?? []).forEach((alias, j) => {
      const at = `models[${i}].aliases[${j}]`;
      for (const form of [alias, `${prefix}/${alias}`]) {
        const owner = taken.get(form);
        if (owner !== undefined) {
          out.push({ kind: "duplicate", path: at, message: `"${form}" is already the ${owner}` });
          return;
        }
      }
      taken.set(alias, `alias of "${m.id}"`);
      taken.set(`${prefix}/${alias}`, `alias of "${m.id}"`);
    });
  });
  return out;
}
