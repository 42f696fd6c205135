/**
 * Catalog verification: file text in, a deep-frozen `CatalogSnapshot` or the list of every
 * problem out. Pure (no file system): `CatalogStore` reads the files and calls this.
 *
 * Order: hash, JSON, schema, then the cross-entry rules. The cross-entry rules run only on a
 * file that passed the schema, so they can trust the shapes; every problem of one stage is
 * listed, not just the first.
 */
import { KindGuard, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { usdToMicros } from "../../lib/money";
import {
  CHAT_PROTOCOLS,
  CatalogFileSchema,
  type CatalogFile,
  type OfferingEntry,
  type ProviderEntry,
  type ModelEntry,
  type TokenPricingEntry,
  type VideoPricingEntry,
} from "./schema";
import type { CatalogProblem, CatalogProblemKind, CatalogSnapshot, CatalogVerification } from "./types";
import { buildSnapshot, familyGroup } from "./snapshot";
import { checkOfferingLifecycles } from "./verify-offerings-lifecycle";
import { checkAliases, checkLifecycle, isDay } from "./verify-lifecycle";

/** SHA-256 (lowercase hex) of the file text, as `src/core/catalog/catalog.sha256` records it. */
export function catalogHash(text: string): string {
  return new Bun.CryptoHasher("sha256").update(text).digest("hex");
}

/**
 * The hash recorded in a `.sha256` file: its first token, in `sha256sum` format
 * (`<hex>  catalog.json`) or bare. Null when the text holds no SHA-256.
 */
export function parseHashFile(text: string): string | null {
  const m = /^\s*([0-9a-fA-F]{64})(?:\s|$)/.exec(text);
  return m ? m[1]!.toLowerCase() : null;
}

/** The `.sha256` file content for a catalog text (`sha256sum` format). */
export function formatHashFile(text: string, fileName = "catalog.json"): string {
  return `${catalogHash(text)}  ${fileName}\n`;
}

export interface VerifyOptions {
  /** The snapshot's load time (tests pin it). */
  now?: Date;
}

/** Schema errors beyond this many are summarized in one line. */
const MAX_SCHEMA_PROBLEMS = 50;

/**
 * Verifies a catalog file. With `expectedHash`, the text's SHA-256 must equal it (a mismatch
 * is a problem like any other, reported together with the rest).
 */
export function verifyCatalog(text: string, expectedHash?: string, options: VerifyOptions = {}): CatalogVerification {
  const problems: CatalogProblem[] = [];
  const hash = catalogHash(text);
  if (expectedHash !== undefined) {
    const expected = parseHashFile(expectedHash);
    if (expected === null) {
      problems.push(problem("hash", "", "the expected hash is not a SHA-256 hex digest"));
    } else if (expected !== hash) {
      problems.push(
        problem(
          "hash",
          "",
          `content hash ${hash} does not match the expected ${expected} (run: npm run catalog:rehash)`,
        ),
      );
    }
  }

  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    problems.push(problem("parse", "", `not valid JSON: ${(e as Error).message}`));
    return { ok: false, errors: problems };
  }

  if (!Value.Check(CatalogFileSchema, data)) {
    const found = schemaErrors(CatalogFileSchema, data, "");
    for (const [i, err] of found.entries()) {
      if (i === MAX_SCHEMA_PROBLEMS) {
        problems.push(problem("schema", "", `${found.length - i} more schema errors; fix these first`));
        break;
      }
      problems.push(problem("schema", pointerToPath(err.path), err.message));
    }
    return { ok: false, errors: problems };
  }

  problems.push(...checkReferences(data));
  if (problems.length > 0) return { ok: false, errors: problems };
  return { ok: true, snapshot: buildSnapshot(data, hash, options.now ?? new Date()), errors: [] };
}

/**
 * TypeBox's errors, made precise for nullable objects: for `object | null` with a non-null
 * value TypeBox only says "Expected union value" at the union; report the object's own errors.
 */
function schemaErrors(schema: TSchema, value: unknown, base: string): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  for (const err of Value.Errors(schema, value)) {
    const path = base + err.path;
    const variants: TSchema[] = KindGuard.IsUnion(err.schema) ? err.schema.anyOf : [];
    const objects = variants.filter((v) => KindGuard.IsObject(v));
    const nullable = variants.some((v) => KindGuard.IsNull(v));
    if (nullable && objects.length === 1 && err.value !== null && typeof err.value === "object") {
      out.push(...schemaErrors(objects[0]!, err.value, path));
    } else {
      out.push({ path, message: err.message });
    }
  }
  return out;
}

function problem(kind: CatalogProblemKind, path: string, message: string): CatalogProblem {
  return { kind, path, message };
}

/** `/models/3/candidates/0` → `models[3].candidates[0]`. */
function pointerToPath(pointer: string): string {
  return pointer
    .split("/")
    .filter(Boolean)
    .map((seg) => seg.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), "");
}

const CHAT = new Set<string>(CHAT_PROTOCOLS);

/** Which video protocol serves each family letter. */
const FAMILY_PROTOCOL = { K: "video-kling", L: "video-ltx", S: "video-seedance", G: "video-veo" } as const;

/** Every rule that relates entries to each other. The file has already passed the schema. */
function checkReferences(file: CatalogFile): CatalogProblem[] {
  const out: CatalogProblem[] = [];
  const push = (kind: CatalogProblemKind, path: string, message: string) => out.push(problem(kind, path, message));

  // Providers: unique ids and env names; protocol-dependent fields.
  const providers = new Map<string, ProviderEntry>();
  const envs = new Map<string, string>();
  file.providers.forEach((p, i) => {
    const at = `providers[${i}]`;
    if (providers.has(p.id)) push("duplicate", `${at}.id`, `duplicate provider id "${p.id}"`);
    else providers.set(p.id, p);
    for (const [field, env] of [
      ["credential_env", p.credential_env],
      ["base_url_env", p.base_url_env],
    ] as const) {
      const owner = envs.get(env);
      if (owner !== undefined)
        push("duplicate", `${at}.${field}`, `environment variable ${env} is already used by ${owner}`);
      else envs.set(env, `${at}.${field}`);
    }
    // Config reads credentials generically as `<PROVIDER>_API_KEY` / `<PROVIDER>_BASE_URL`.
    const stem = p.id.toUpperCase().replace(/-/g, "_");
    if (p.credential_env !== `${stem}_API_KEY`) push("schema", `${at}.credential_env`, `expected ${stem}_API_KEY`);
    if (p.base_url_env !== `${stem}_BASE_URL`) push("schema", `${at}.base_url_env`, `expected ${stem}_BASE_URL`);
    const chat = CHAT.has(p.protocol);
    if (p.service_tier && p.protocol !== "openai") {
      push(
        "protocol",
        `${at}.service_tier`,
        `service_tier is an OpenAI-protocol feature; "${p.id}" speaks ${p.protocol}`,
      );
    }
    if (chat && p.caching === "none")
      push("protocol", `${at}.caching`, `chat provider "${p.id}" must say how caching is billed`);
    if (!chat && p.caching !== "none")
      push("protocol", `${at}.caching`, `video provider "${p.id}" has no prompt caching ("none")`);
  });

  if (file.source && !isDay(file.source.built_at))
    push("schema", "source.built_at", `"${file.source.built_at}" is not a calendar date`);

  // Models: unique short and vendor ids.
  const models = new Map<string, ModelEntry>();
  const vendorIds = new Set<string>();
  file.models.forEach((m, i) => {
    const at = `models[${i}]`;
    if (models.has(m.id)) push("duplicate", `${at}.id`, `duplicate model id "${m.id}"`);
    else models.set(m.id, m);
    if (vendorIds.has(m.vendor_id)) push("duplicate", `${at}.vendor_id`, `duplicate vendor id "${m.vendor_id}"`);
    vendorIds.add(m.vendor_id);
  });
  out.push(...checkAliases(file.models));

  // Offerings: references, modality vs protocol, prices.
  const offered = new Map<string, OfferingEntry[]>();
  const pairs = new Set<string>();
  file.offerings.forEach((o, i) => {
    const at = `offerings[${i}]`;
    const m = models.get(o.model);
    const p = providers.get(o.provider);
    if (!m) push("reference", `${at}.model`, `unknown model "${o.model}"`);
    if (!p) push("reference", `${at}.provider`, `unknown provider "${o.provider}"`);
    const pair = `${o.model}@${o.provider}`;
    if (pairs.has(pair)) push("duplicate", at, `duplicate offering ${pair}`);
    pairs.add(pair);
    if (!m || !p) return;
    if (m.kind !== "leaf") {
      push("reference", `${at}.model`, `"${m.id}" is a ${m.kind} model; only leaves have offerings`);
      return;
    }
    const list = offered.get(m.id) ?? [];
    list.push(o);
    offered.set(m.id, list);
    out.push(...checkOffering(at, o, m, p));
  });

  out.push(...checkOfferingLifecycles(file));

  // Models: kind-specific rules.
  file.models.forEach((m, i) => {
    const at = `models[${i}]`;
    if (m.modality === "video" && m.family === null) push("schema", `${at}.family`, "video models need a family");
    if (m.modality !== "video" && m.family !== null) push("schema", `${at}.family`, "only video models have a family");
    if (m.dimensions !== undefined && m.modality !== "embedding") {
      push("schema", `${at}.dimensions`, "only embedding models have dimensions");
    }
    if (m.kind === "leaf") {
      if (!m.capabilities) push("schema", `${at}.capabilities`, "leaf models need capability flags");
      if (m.candidates) push("schema", `${at}.candidates`, "only parents have candidates");
      if (m.replaced_by) push("schema", `${at}.replaced_by`, "only retired ids have replaced_by");
      const priced = (offered.get(m.id) ?? []).some((o) => (m.modality === "video" ? o.video_pricing : o.pricing));
      if (m.active && !priced) push("reference", at, `active model "${m.id}" has no priced offering`);
    } else {
      if (m.modality !== "text") push("schema", `${at}.modality`, `${m.kind} ids route text models`);
      if (m.capabilities) push("schema", `${at}.capabilities`, "capability flags belong to leaves");
      if (m.reasoning_pro !== null) push("schema", `${at}.reasoning_pro`, "only leaves have a pro mode");
    }
    if (m.kind === "parent") {
      if (!m.candidates) push("schema", `${at}.candidates`, "a routing parent needs leaf candidates");
      if (m.replaced_by) push("schema", `${at}.replaced_by`, "only retired ids have replaced_by");
      const seen = new Set<string>();
      (m.candidates ?? []).forEach((c, j) => {
        const cat = `${at}.candidates[${j}]`;
        if (seen.has(c)) push("duplicate", cat, `candidate "${c}" is listed twice`);
        seen.add(c);
        const leaf = models.get(c);
        if (!leaf) push("reference", cat, `unknown model "${c}"`);
        else if (leaf.kind !== "leaf" || leaf.modality !== "text") push("reference", cat, `"${c}" is not a text leaf`);
        else if (!leaf.active) push("reference", cat, `"${c}" is inactive`);
      });
    }
    if (m.kind === "retired") {
      if (!m.replaced_by) push("schema", `${at}.replaced_by`, "a retired id must name the current parents");
      if (m.candidates) push("schema", `${at}.candidates`, "only parents have candidates");
      if (m.active) push("schema", `${at}.active`, "a retired id cannot be active");
      (m.replaced_by ?? []).forEach((r, j) => {
        const target = models.get(r);
        const rat = `${at}.replaced_by[${j}]`;
        if (!target) push("reference", rat, `unknown model "${r}"`);
        else if (target.kind !== "parent" || !target.active)
          push("reference", rat, `"${r}" is not an active routing parent`);
      });
    }
    const pro = m.reasoning_pro;
    if (pro && "variant" in pro) {
      const v = models.get(pro.variant);
      if (pro.variant === m.id)
        push("reference", `${at}.reasoning_pro.variant`, "a model cannot be its own pro variant");
      else if (!v) push("reference", `${at}.reasoning_pro.variant`, `unknown model "${pro.variant}"`);
      else if (v.kind !== "leaf" || !v.active || v.modality !== m.modality) {
        push("reference", `${at}.reasoning_pro.variant`, `"${pro.variant}" is not an active ${m.modality} leaf`);
      }
    }
    if (pro && "effort" in pro && m.capabilities && !m.capabilities.reasoning) {
      push(
        "schema",
        `${at}.reasoning_pro.effort`,
        `"${m.id}" does not reason; a pro effort needs capabilities.reasoning`,
      );
    }
    if (pro && m.modality !== "text") push("schema", `${at}.reasoning_pro`, "only text models have a pro mode");
    out.push(...checkLifecycle(at, m, models));
  });
  return out;
}

/** Rules for one offering whose model (a leaf) and provider exist. */
function checkOffering(at: string, o: OfferingEntry, m: ModelEntry, p: ProviderEntry): CatalogProblem[] {
  const out: CatalogProblem[] = [];
  const push = (kind: CatalogProblemKind, path: string, message: string) => out.push(problem(kind, path, message));
  const chat = CHAT.has(p.protocol);

  if (m.modality === "video") {
    if (chat) push("protocol", `${at}.provider`, `video model "${m.id}" cannot be served by chat provider "${p.id}"`);
    const group = familyGroup(m.family);
    if (group && !chat && FAMILY_PROTOCOL[group] !== p.protocol) {
      push(
        "protocol",
        `${at}.provider`,
        `family ${m.family} needs protocol ${FAMILY_PROTOCOL[group]}, "${p.id}" speaks ${p.protocol}`,
      );
    }
    if (o.pricing !== null)
      push("price", `${at}.pricing`, "video offerings are priced in video_pricing (pricing must be null)");
    if (!o.video_pricing) push("price", `${at}.video_pricing`, "video offerings need video_pricing");
    else out.push(...checkVideoPricing(`${at}.video_pricing`, o.video_pricing, m));
    return out;
  }

  if (!chat)
    push("protocol", `${at}.provider`, `${m.modality} model "${m.id}" cannot be served by video provider "${p.id}"`);
  if (m.modality === "embedding" && p.protocol !== "openai" && p.protocol !== "gemini") {
    push(
      "protocol",
      `${at}.provider`,
      `embeddings are served over the OpenAI or Gemini protocol; "${p.id}" speaks ${p.protocol}`,
    );
  }
  if (o.video_pricing) push("price", `${at}.video_pricing`, `${m.modality} offerings have no video_pricing`);
  if (o.context_length === null)
    push("schema", `${at}.context_length`, `${m.modality} offerings need a context length`);
  if (m.modality === "text" && o.max_output === null)
    push("schema", `${at}.max_output`, "text offerings need max_output");
  if (o.pricing === null) {
    push("price", `${at}.pricing`, `${m.modality} offerings need token prices`);
    return out;
  }
  const pr = o.pricing;
  out.push(...checkDecimals(`${at}.pricing`, pr), ...checkTiers(`${at}.pricing`, pr, p, m));
  if (o.service_tiers && !p.service_tier)
    push("price", `${at}.service_tiers`, `"${p.id}" takes no service_tier: no tier prices`);
  if (m.modality === "embedding") {
    if (pr.cached_input !== null && pr.cached_input !== pr.input) {
      push("price", `${at}.pricing.cached_input`, "embeddings have no cached price (null or equal to input)");
    }
    if (pr.cache_write !== null) push("price", `${at}.pricing.cache_write`, "embeddings have no cache write price");
    return out;
  }
  out.push(...checkCaching(`${at}.pricing`, pr, p));
  for (const [tier, tp] of Object.entries(o.service_tiers ?? {}))
    out.push(
      ...checkDecimals(`${at}.service_tiers.${tier}`, tp),
      ...checkCaching(`${at}.service_tiers.${tier}`, tp, p),
      ...checkTiers(`${at}.service_tiers.${tier}`, tp, p, m),
    );
  return out;
}

function checkDecimals(
  at: string,
  pr: Pick<TokenPricingEntry, "input" | "output" | "cached_input" | "cache_write"> &
    Partial<Pick<TokenPricingEntry, "cache_write_1h" | "web_search_per_1k">>,
): CatalogProblem[] {
  return (["input", "output", "cached_input", "cache_write", "cache_write_1h", "web_search_per_1k"] as const)
    .filter((key) => pr[key] != null && !isMicroExact(pr[key]!))
    .map((key) => problem("price", `${at}.${key}`, `${pr[key]} has more than 6 decimals`));
}

/** Long-context tiers: strictly ascending thresholds, exact prices, the provider's caching case. */
function checkTiers(at: string, pr: TokenPricingEntry, p: ProviderEntry, m: ModelEntry): CatalogProblem[] {
  const out: CatalogProblem[] = [];
  let previous = 0;
  (pr.tiers ?? []).forEach((t, k) => {
    const tat = `${at}.tiers[${k}]`;
    if (t.above_input_tokens <= previous)
      out.push(problem("price", `${tat}.above_input_tokens`, "tier thresholds must be strictly ascending"));
    previous = t.above_input_tokens;
    out.push(...checkDecimals(tat, t));
    if (m.modality === "embedding") {
      if (t.cache_write !== null)
        out.push(problem("price", `${tat}.cache_write`, "embeddings have no cache write price"));
    } else out.push(...checkCaching(tat, t, p));
  });
  return out;
}

/** The specification's three prompt-caching cases, one per provider caching mode. */
function checkCaching(
  at: string,
  pr: Pick<TokenPricingEntry, "input" | "cached_input" | "cache_write" | "cache_write_1h">,
  p: ProviderEntry,
): CatalogProblem[] {
  const out: CatalogProblem[] = [];
  const push = (path: string, message: string) => out.push(problem("price", `${at}.${path}`, message));
  const long = pr.cache_write_1h ?? null;
  if (long !== null && p.caching !== "explicit")
    push("cache_write_1h", `"${p.id}" has no explicit cache TTLs: no cache_write_1h price`);
  if (long !== null && pr.cache_write !== null && long < pr.cache_write)
    push("cache_write_1h", "a one-hour cache write costs at least the five-minute one");
  const { cached_input: cached, cache_write: write, input } = pr;
  switch (p.caching) {
    case "automatic":
      // null: a model the provider gives no cached-input discount (OpenAI's `-pro` models).
      if (cached !== null && cached >= input)
        push("cached_input", `"${p.id}" discounts cached input: needs 0 ≤ cached_input < input, or null`);
      if (write !== null) push("cache_write", `"${p.id}" caches automatically: no cache_write price`);
      break;
    case "explicit":
      if (cached === null || cached > input)
        push("cached_input", `"${p.id}" has explicit caching: needs a cache-read price ≤ input`);
      if (write === null) push("cache_write", `"${p.id}" has explicit caching: needs a cache_write price`);
      break;
    case "reported":
      if (cached !== input)
        push("cached_input", `"${p.id}" reports cached tokens without a discount: cached_input must equal input`);
      if (write !== null) push("cache_write", `"${p.id}" has no cache writes: cache_write must be null`);
      break;
    case "none":
      break; // a chat provider with "none" is already reported on the provider
  }
  return out;
}

function checkVideoPricing(at: string, v: VideoPricingEntry, m: ModelEntry): CatalogProblem[] {
  const out: CatalogProblem[] = [];
  const push = (path: string, message: string) => out.push(problem("price", path ? `${at}.${path}` : at, message));
  const perToken = v.krw_per_1k_output_tokens !== undefined;
  const perSecond = v.krw_per_second !== undefined;
  if (perToken === perSecond) {
    push("", "set exactly one of krw_per_second and krw_per_1k_output_tokens");
    return out;
  }
  if (m.family === "G-omni" && !perToken) push("krw_per_1k_output_tokens", "Family G Omni is billed per output token");
  if (m.family !== "G-omni" && perToken) push("krw_per_second", `family ${m.family} is billed per second of output`);
  if (perSecond) {
    const map = v.krw_per_second!;
    if (Object.keys(map).length === 0) push("krw_per_second", "price at least one resolution");
    else if (map[v.default_resolution] === undefined) {
      push("default_resolution", `the default resolution ${v.default_resolution} has no price`);
    }
    if (v.est_output_tokens_per_second !== undefined)
      push("est_output_tokens_per_second", "only token-priced models estimate tokens");
    if (v.max_seconds !== undefined) push("max_seconds", "only token-priced models need max_seconds");
  } else {
    const est = v.est_output_tokens_per_second;
    if (!est || Object.keys(est).length === 0)
      push("est_output_tokens_per_second", "token-priced models need a tokens-per-second estimate");
    else if (est[v.default_resolution] === undefined) {
      push("default_resolution", `the default resolution ${v.default_resolution} has no token estimate`);
    }
    if (v.max_seconds === undefined) push("max_seconds", "token-priced models need max_seconds to size the hold");
  }
  return out;
}

/** A USD price converts to integer micro-dollars without losing anything. */
function isMicroExact(usd: number): boolean {
  return Math.abs(usdToMicros(usd) - usd * 1_000_000) < 1e-6;
}
