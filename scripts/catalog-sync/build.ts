/**
 * Builds the catalog file (src/core/catalog/catalog.json) from the project's overlay
 * (src/core/catalog/overlay.json) and the pinned price source, as of one build day. Pure: the
 * CLI (scripts/catalog-sync.ts) reads the files and the installed package and writes the
 * results. What comes from where is documented in docs/catalog.md, "npm run catalog:sync".
 */
import type { MatchLogic, ModelInfo, Provider } from "@pydantic/genai-prices";
import type {
  CatalogFile,
  ModelEntry,
  OfferingEntry,
  ProviderEntry,
  TokenPricingEntry,
} from "../../src/core/catalog/schema";
import { derivePricing, peakOf, pricesOnDay } from "./prices";

/** One provider's offering of a model, as the overlay writes it. */
export interface OverlayOffering {
  provider: string;
  upstream_id: string;
  /** The source's model id under this provider; absent for an overlay-priced offering. */
  source?: string;
  context_length?: number | null;
  max_output: number | null;
  /** Overlay-priced offerings only (the source lacks the model), with `price_source`. */
  pricing?: TokenPricingEntry;
  price_source?: string;
  service_tiers?: OfferingEntry["service_tiers"];
  capabilities?: OfferingEntry["capabilities"];
  /** This provider's lifecycle of its upstream id, copied to the catalog (docs/catalog.md, "Retired offerings"). */
  deprecated_at?: string | null;
  retires_at?: string | null;
  successor?: string | null;
  /** Served on the provider's Responses API only (docs/catalog.md). */
  responses_only?: boolean;
  /** Where those dates come from (kept in the overlay, not the catalog). */
  lifecycle_source?: string;
}

export interface OverlayModel
  extends Omit<ModelEntry, "created" | "kind" | "active" | "family" | "capabilities" | "reasoning_pro"> {
  created?: number;
  /** Release day, `YYYY-MM-DD`, when `created` is not given. */
  released?: string;
  capabilities: NonNullable<ModelEntry["capabilities"]>;
  reasoning_pro: ModelEntry["reasoning_pro"];
  /** Where the lifecycle dates come from (kept in the overlay, not the catalog). */
  lifecycle_source?: string;
  offerings: OverlayOffering[];
}

export interface Overlay {
  about: string;
  source: { name: string; version: string };
  providers: ProviderEntry[];
  models: OverlayModel[];
  routing: ModelEntry[];
  video: { models: ModelEntry[]; offerings: OfferingEntry[] };
}

export interface BuildResult {
  catalog: CatalogFile;
  /** Offerings priced by the overlay, `model@provider` → the note naming the price's origin. */
  overlayPriced: Map<string, string>;
  /** Lines for the sync's report (source price kinds not carried, unreferenced source models). */
  notes: string[];
}

/** The equality clauses of a source `match` (the ids it names exactly). */
export function namedIds(match: MatchLogic): string[] {
  if ("equals" in match) return [match.equals.toLowerCase()];
  if ("or" in match) return match.or.flatMap(namedIds);
  return [];
}

const DATED = /^(?:-\d{4}-\d{2}-\d{2}|-\d{8}|-latest)?$/;

/**
 * Aliases a source entry names for a catalog model: its dated snapshots and `-latest` forms,
 * and the dotted id written with dashes (`gpt-5-1` for `gpt-5.1`), with or without a date.
 */
function sourceAliases(id: string, info: ModelInfo): string[] {
  const stems = [...new Set([id, id.replace(/\./g, "-")])];
  return namedIds(info.match).filter(
    (v) =>
      v !== id &&
      /^[a-z0-9][a-z0-9._-]*$/.test(v) &&
      stems.some((s) => v.startsWith(s) && DATED.test(v.slice(s.length))),
  );
}

/** A model entry's fields in the file's reading order. */
const MODEL_KEYS = [
  "id",
  "vendor_id",
  "name",
  "maker",
  "modality",
  "family",
  "active",
  "kind",
  "created",
  "capabilities",
  "reasoning_pro",
  "candidates",
  "replaced_by",
  "dimensions",
  "deprecated_at",
  "retires_at",
  "successor",
  "aliases",
] as const;

function ordered(m: ModelEntry): ModelEntry {
  const out: Record<string, unknown> = {};
  for (const k of MODEL_KEYS)
    if ((m as Record<string, unknown>)[k] !== undefined) out[k] = (m as Record<string, unknown>)[k];
  const extra = Object.keys(m).filter((k) => !(MODEL_KEYS as readonly string[]).includes(k));
  if (extra.length > 0) throw new Error(`${m.id}: unknown model fields ${extra.join(", ")}`);
  return out as unknown as ModelEntry;
}

const dayToUnix = (day: string): number => Math.floor(Date.parse(`${day}T00:00:00Z`) / 1000);

export function buildCatalog(overlay: Overlay, source: Map<string, Provider>, day: string): BuildResult {
  const notes: string[] = [];
  const overlayPriced = new Map<string, string>();
  const providers = new Map(overlay.providers.map((p) => [p.id, p]));
  const used = new Set<string>();
  const models: ModelEntry[] = [];
  const offerings: OfferingEntry[] = [];
  const aliasOwners = new Map<string, Set<string>>();

  for (const om of overlay.models) {
    const { offerings: offs, released, lifecycle_source: _note, created, ...rest } = om;
    if (created === undefined && released === undefined) throw new Error(`${om.id}: give created or released`);
    const aliases = new Set(om.aliases ?? []);
    for (const off of offs) {
      const at = `${om.id}@${off.provider}`;
      const provider = providers.get(off.provider);
      if (!provider) throw new Error(`${at}: unknown provider`);
      let pricing: TokenPricingEntry;
      let context = off.context_length;
      if (off.source !== undefined) {
        if (off.pricing) throw new Error(`${at}: a source-backed offering takes its prices from the source`);
        const info = source.get(off.provider)?.models.find((x) => x.id === off.source);
        if (!info) throw new Error(`${at}: the source has no model "${off.source}" under "${off.provider}"`);
        if (info.deprecated && om.deprecated_at == null && off.deprecated_at == null)
          throw new Error(
            `${at}: the source marks "${info.id}" deprecated; record deprecated_at/retires_at in the overlay`,
          );
        used.add(`${off.provider}/${info.id}`);
        const d = derivePricing(peakOf(pricesOnDay(info, day)), provider.caching, om.modality === "embedding", at);
        pricing = d.pricing;
        if (d.dropped.length > 0) notes.push(`${at}: not carried from the source: ${d.dropped.join(", ")}`);
        context ??= info.context_window;
        if (off.provider === om.vendor_id.split("/")[0]) for (const a of sourceAliases(om.id, info)) aliases.add(a);
      } else {
        if (!off.pricing || !off.price_source)
          throw new Error(`${at}: an offering without a source needs pricing and price_source`);
        pricing = off.pricing;
        overlayPriced.set(at, off.price_source);
      }
      if (context == null && om.modality !== "video")
        throw new Error(`${at}: no context length in the source or the overlay`);
      offerings.push({
        model: om.id,
        provider: off.provider,
        upstream_id: off.upstream_id,
        context_length: context ?? null,
        max_output: off.max_output,
        pricing,
        ...(off.service_tiers ? { service_tiers: off.service_tiers } : {}),
        ...(off.capabilities ? { capabilities: off.capabilities } : {}),
        ...(off.deprecated_at != null ? { deprecated_at: off.deprecated_at } : {}),
        ...(off.retires_at != null ? { retires_at: off.retires_at } : {}),
        ...(off.successor != null ? { successor: off.successor } : {}),
        ...(off.responses_only ? { responses_only: true } : {}),
      });
    }
    for (const a of aliases) {
      const owners = aliasOwners.get(a) ?? new Set();
      owners.add(om.id);
      aliasOwners.set(a, owners);
    }
    models.push(
      ordered({
        ...rest,
        family: null,
        active: true,
        kind: "leaf",
        created: created ?? dayToUnix(released!),
        ...(aliases.size > 0 ? { aliases: [...aliases] } : {}),
      } as ModelEntry),
    );
  }

  // An alias two models claim, or one that is some model's id, resolves to neither.
  const ids = new Set([
    ...models.map((m) => m.id),
    ...overlay.routing.map((m) => m.id),
    ...overlay.video.models.map((m) => m.id),
  ]);
  for (const m of models) {
    if (!m.aliases) continue;
    const kept = m.aliases.filter((a) => aliasOwners.get(a)!.size === 1 && !ids.has(a));
    for (const a of m.aliases) if (!kept.includes(a)) notes.push(`${m.id}: alias "${a}" is ambiguous; left out`);
    if (kept.length > 0) m.aliases = kept.sort();
    else delete m.aliases;
  }

  for (const [pid, p] of source)
    for (const info of p.models)
      if (!used.has(`${pid}/${info.id}`)) notes.push(`source ${pid}/${info.id}: not in the overlay`);

  const catalog = {
    version: 1 as const,
    source: { name: overlay.source.name, version: overlay.source.version, built_at: day },
    providers: overlay.providers,
    models: [...models, ...overlay.routing, ...overlay.video.models],
    offerings: [...offerings, ...overlay.video.offerings],
  };
  return { catalog, overlayPriced, notes };
}
