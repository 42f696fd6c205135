import { readFileSync } from "node:fs";
import { join } from "node:path";
import { catalogHash, verifyCatalog } from "../../src/core/catalog/verify";
import type { CatalogSnapshot } from "../../src/core/catalog/types";

export const CATALOG_DIR = join(import.meta.dir, "../../src/core/catalog");
export const shippedText = (): string => readFileSync(join(CATALOG_DIR, "catalog.json"), "utf8");
export const shippedHashText = (): string => readFileSync(join(CATALOG_DIR, "catalog.sha256"), "utf8");

/** The shipped catalog as data, changed by `edit`, serialized again. */
export function mutated(edit: (data: any) => void): string {
  const data = JSON.parse(shippedText());
  edit(data);
  return JSON.stringify(data, null, 2);
}

export function model(data: any, id: string): any {
  const m = data.models.find((x: any) => x.id === id);
  if (!m) throw new Error(`no model ${id}`);
  return m;
}

export function offering(data: any, modelId: string, providerId?: string): any {
  const o = data.offerings.find(
    (x: any) => x.model === modelId && (providerId === undefined || x.provider === providerId),
  );
  if (!o) throw new Error(`no offering ${modelId}@${providerId}`);
  return o;
}

/** A verified snapshot of `text` (shipped by default); throws listing the problems otherwise. */
export function snapshotOf(text = shippedText()): CatalogSnapshot {
  const r = verifyCatalog(text, catalogHash(text), { now: new Date("2026-01-01T00:00:00Z") });
  if (!r.ok) throw new Error(r.errors.map((e) => `${e.path}: ${e.message}`).join("\n"));
  return r.snapshot;
}
