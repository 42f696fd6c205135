/**
 * How a price of the source (`@pydantic/genai-prices`) becomes a catalog price. The source
 * gives USD per million tokens per usage kind, sometimes long-context tiers (`{base, tiers}`)
 * and sometimes a list of conditional prices (from a start date, or by time of day). The
 * catalog carries one price per token kind plus its tiers, so the rule is:
 *
 * - the prices in force on the build day (the latest `start_date` constraint reached);
 * - where prices change by time of day, the highest of that day (the peak), so a call is
 *   never billed below what the provider may charge for it;
 * - then the provider's caching case (docs/catalog.md, "How caching is billed") decides
 *   which cache prices the catalog keeps.
 *
 * Pure: the test re-derives every price with the source's own evaluator instead.
 */
import type { ModelInfo, ModelPrice } from "@pydantic/genai-prices";
import type { CachingMode, PriceTierEntry, TokenPricingEntry } from "../../src/core/catalog/schema";

type Tiered = { base: number; tiers: { start: number; price: number }[] };
type PriceValue = number | Tiered | undefined;

/** The price lists that apply at some moment of `day` (UTC), by the source's own precedence. */
export function pricesOnDay(model: ModelInfo, day: string): ModelPrice[] {
  if (!Array.isArray(model.prices)) return [model.prices];
  const found: ModelPrice[] = [];
  for (let minute = 0; minute < 24 * 60; minute += 15) {
    const at = new Date(Date.parse(`${day}T00:00:00Z`) + minute * 60_000);
    const p = priceAt(model.prices, at);
    if (!found.includes(p)) found.push(p);
  }
  return found;
}

/** The source's precedence: the last conditional price whose constraint holds, else the first. */
function priceAt(list: { constraint?: any; prices: ModelPrice }[], at: Date): ModelPrice {
  for (let i = list.length - 1; i >= 0; i--) {
    const c = list[i]!.constraint;
    if (c === undefined) return list[i]!.prices;
    if (c.type === "start_date" && at >= new Date(c.start_date)) return list[i]!.prices;
    if (c.type === "time_of_date") {
      const s = secondsOfDay(c.start_time);
      const e = secondsOfDay(c.end_time);
      const t = at.getUTCHours() * 3600 + at.getUTCMinutes() * 60 + at.getUTCSeconds();
      if (e < s ? t >= s || t < e : t >= s && t < e) return list[i]!.prices;
    }
  }
  return list[0]!.prices;
}

/** `HH:MM:SS` with `Z` or `±HH:MM`, as seconds after UTC midnight. */
function secondsOfDay(text: string): number {
  const m = /^(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(Z|([+-])(\d{2}):(\d{2}))$/.exec(text);
  if (!m) throw new Error(`unreadable time of day "${text}"`);
  const local = Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
  const offset = m[4] === "Z" ? 0 : (m[5] === "+" ? 1 : -1) * (Number(m[6]) * 60 + Number(m[7])) * 60;
  return (local - offset + 86400) % 86400;
}

const base = (v: PriceValue): number | undefined => (v === undefined ? undefined : typeof v === "number" ? v : v.base);

/** The peak of the day: of several price lists in force, the one with the highest input price. */
export function peakOf(lists: ModelPrice[]): ModelPrice {
  return lists.reduce((a, b) =>
    (base(b.input_mtok as PriceValue) ?? 0) > (base(a.input_mtok as PriceValue) ?? 0) ? b : a,
  );
}

/** The price of one kind at a prompt of `inputTokens` tokens (the source's tier rule: above `start`). */
function at(v: PriceValue, inputTokens: number): number | undefined {
  if (v === undefined || typeof v === "number") return v;
  let price = v.base;
  for (const t of [...v.tiers].sort((a, b) => a.start - b.start)) if (inputTokens > t.start) price = t.price;
  return price;
}

/** Every tier threshold any price kind of the list names, ascending. */
function thresholds(p: ModelPrice): number[] {
  const out = new Set<number>();
  for (const v of Object.values(p))
    if (v !== undefined && typeof v !== "number") for (const t of v.tiers) out.add(t.start);
  return [...out].sort((a, b) => a - b);
}

export interface Derived {
  pricing: TokenPricingEntry;
  /** Source price kinds the catalog does not carry, for the sync's report. */
  dropped: string[];
}

/**
 * The catalog pricing of one offering from the source's price list for the build day.
 * Throws when the provider's caching case needs a price the source lacks.
 */
export function derivePricing(p: ModelPrice, caching: CachingMode, embedding: boolean, label: string): Derived {
  const dropped: string[] = [];
  const row = (
    tokens: number,
  ): Omit<TokenPricingEntry, "tiers" | "web_search_per_1k" | "cache_write_1h"> & {
    cache_write_1h?: number | null;
  } => {
    const input = at(p.input_mtok as PriceValue, tokens);
    if (input === undefined) throw new Error(`${label}: the source has no input price`);
    const output = at(p.output_mtok as PriceValue, tokens) ?? (embedding ? 0 : undefined);
    if (output === undefined) throw new Error(`${label}: the source has no output price`);
    const read = at(p.cache_read_mtok as PriceValue, tokens);
    const write = at(p.cache_write_mtok as PriceValue, tokens);
    const write1h = at(p.cache_write_1h_mtok as PriceValue, tokens);
    if (embedding) return { input, output, cached_input: null, cache_write: null };
    switch (caching) {
      case "automatic":
        // No cache_read price: the provider gives this model no cached-input discount (OpenAI's
        // `-pro` models): no cached price, cached tokens cost the input price (types.ts, TokenPricing).
        return { input, output, cached_input: read ?? null, cache_write: null };
      case "explicit":
        if (read === undefined || write === undefined)
          throw new Error(`${label}: explicit caching needs the source's cache_read and cache_write prices`);
        return {
          input,
          output,
          cached_input: read,
          cache_write: write,
          ...(write1h !== undefined ? { cache_write_1h: write1h } : {}),
        };
      default:
        return { input, output, cached_input: input, cache_write: null };
    }
  };
  const pricing: TokenPricingEntry = { ...row(0) };
  const tiers: PriceTierEntry[] = thresholds(p).map((start) => {
    const r = row(start + 1);
    return {
      above_input_tokens: start,
      input: r.input,
      output: r.output,
      cached_input: r.cached_input,
      cache_write: r.cache_write,
    };
  });
  if (tiers.length > 0) pricing.tiers = tiers;
  const search = base(p.web_searches_kcount as PriceValue);
  if (search !== undefined && !embedding) pricing.web_search_per_1k = search;
  for (const key of Object.keys(p)) {
    const kept = ["input_mtok", "output_mtok", "web_searches_kcount"];
    if (!embedding && caching !== "reported") kept.push("cache_read_mtok");
    if (!embedding && caching === "explicit") kept.push("cache_write_mtok", "cache_write_1h_mtok");
    if (!kept.includes(key)) dropped.push(key);
  }
  return { pricing, dropped };
}
