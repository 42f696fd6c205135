/**
 * The catalog's prices are the price source's, at the version and on the day the catalog
 * records. Every source-backed price is re-derived with the source package's own evaluator
 * (`calcPrice`, sampled over the recorded build day, keeping the day's peak), tiers included,
 * and compared to the micro-dollar. Also: `npm run catalog:sync` is idempotent (its output for
 * the recorded day is the shipped files, byte for byte) and refuses nothing it should accept.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { calcPrice } from "@pydantic/genai-prices";
import { usdToMicros } from "../../src/lib/money";
import { CATALOG_DIR, mutated, offering, shippedHashText, shippedText } from "./helpers";

const ROOT = join(import.meta.dir, "../..");
const overlay = JSON.parse(readFileSync(join(CATALOG_DIR, "overlay.json"), "utf8"));
const shipped = JSON.parse(shippedText());

/** Each source-backed offering of the overlay: model, provider and the source's model id. */
const backed: { model: string; provider: string; source: string; embedding: boolean }[] = overlay.models.flatMap(
  (m: any) =>
    m.offerings
      .filter((o: any) => o.source !== undefined)
      .map((o: any) => ({
        model: m.id,
        provider: o.provider,
        source: o.source,
        embedding: m.modality === "embedding",
      })),
);

const micros = (usd: number): number => Math.round(usd * 1_000_000);

/** Every 15 minutes of the build day (UTC): the source's time-of-day prices change on such marks. */
function slots(day: string): Date[] {
  return Array.from({ length: 96 }, (_, i) => new Date(Date.parse(`${day}T00:00:00Z`) + i * 15 * 60_000));
}

/**
 * What the source charges per million tokens of one kind, at a prompt of `prompt` input tokens,
 * at its peak over the day (USD, rounded to the micro-dollar).
 */
function sourcePrice(
  b: (typeof backed)[number],
  day: string,
  kind: "input" | "output" | "cache_read" | "cache_write" | "cache_write_1h" | "web_search",
  prompt = 1000,
): number {
  let peak = 0;
  for (const timestamp of slots(day)) {
    const usage: Record<string, number> =
      kind === "output"
        ? { input_tokens: prompt, output_tokens: 1000 }
        : kind === "web_search"
          ? { web_searches: 1000 }
          : kind === "cache_read"
            ? { input_tokens: prompt, cache_read_tokens: prompt }
            : kind === "cache_write"
              ? { input_tokens: prompt, cache_write_tokens: prompt }
              : kind === "cache_write_1h"
                ? { input_tokens: prompt, cache_write_tokens: prompt, cache_write_1h_tokens: prompt }
                : { input_tokens: prompt };
    const r = calcPrice(usage, b.source, { providerId: b.provider, timestamp });
    if (!r) throw new Error(`the source has no price for ${b.source} on ${b.provider}`);
    expect(r.model.id).toBe(b.source);
    const usd =
      kind === "output"
        ? (r.output_price * 1e6) / 1000
        : kind === "web_search"
          ? r.total_price
          : (r.input_price * 1e6) / prompt;
    peak = Math.max(peak, micros(usd));
  }
  return peak;
}

/** Every difference between a catalog (as data) and the source, as readable lines. */
function mismatches(catalog: any): string[] {
  const out: string[] = [];
  const day: string = catalog.source.built_at;
  const caching = new Map(catalog.providers.map((p: any) => [p.id, p.caching]));
  for (const b of backed) {
    const o = catalog.offerings.find((x: any) => x.model === b.model && x.provider === b.provider);
    if (!o?.pricing) {
      out.push(`${b.model}@${b.provider}: missing`);
      continue;
    }
    const mode = caching.get(b.provider);
    const same = (what: string, catalogUsd: number | null | undefined, sourceMicros: number) => {
      if (catalogUsd == null || usdToMicros(catalogUsd) !== sourceMicros)
        out.push(`${b.model}@${b.provider} ${what}: catalog ${catalogUsd}, source ${sourceMicros / 1e6}`);
    };
    const check = (row: any, prompt: number, label: string) => {
      same(`${label}input`, row.input, sourcePrice(b, day, "input", prompt));
      if (b.embedding) return;
      same(`${label}output`, row.output, sourcePrice(b, day, "output", prompt));
      // The caching case decides which cache prices are the source's (docs/catalog.md).
      if (mode === "reported" && row.cached_input !== row.input)
        out.push(`${b.model}@${b.provider} ${label}cached_input ≠ input`);
      if (mode === "automatic" || mode === "explicit") {
        const read = sourcePrice(b, day, "cache_read", prompt);
        // No discount in the source (OpenAI's -pro models): the catalog has no cached price, billed at input.
        const undiscounted =
          mode === "automatic" && row.cached_input === null && read === sourcePrice(b, day, "input", prompt);
        if (!undiscounted) same(`${label}cached_input`, row.cached_input, read);
      }
      if (mode === "explicit") same(`${label}cache_write`, row.cache_write, sourcePrice(b, day, "cache_write", prompt));
    };
    check(o.pricing, 1000, "");
    if (mode === "explicit" && !b.embedding)
      same("cache_write_1h", o.pricing.cache_write_1h, sourcePrice(b, day, "cache_write_1h"));
    for (const t of o.pricing.tiers ?? []) check(t, t.above_input_tokens + 1, `tier >${t.above_input_tokens} `);
    // A tier the source has and the catalog lacks shows at the longest prompt: there the source's
    // input price must be the catalog's last tier (or its base price, without tiers).
    const top = (o.pricing.tiers ?? []).at(-1) ?? o.pricing;
    if (usdToMicros(top.input) !== sourcePrice(b, day, "input", 2_000_000))
      out.push(`${b.model}@${b.provider}: the source has a tier the catalog lacks`);
    const search = sourcePrice(b, day, "web_search");
    if (!b.embedding && (search > 0 || o.pricing.web_search_per_1k !== undefined))
      same("web_search_per_1k", o.pricing.web_search_per_1k, search);
  }
  return out;
}

describe("the catalog's prices are the source's", () => {
  test("the catalog records the installed source and its version", () => {
    const main = fileURLToPath(import.meta.resolve("@pydantic/genai-prices"));
    const pkg = JSON.parse(readFileSync(join(dirname(main), "../package.json"), "utf8"));
    expect(shipped.source.name).toBe(pkg.name);
    expect(shipped.source.version).toBe(pkg.version);
    expect(overlay.source).toEqual({ name: pkg.name, version: pkg.version });
    expect(shipped.source.built_at).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  test("every source-backed price, tiers included, equals the source's on the build day", () => {
    expect(backed.length).toBeGreaterThan(50);
    expect(mismatches(shipped)).toEqual([]);
  });

  test("a price that drifts from the source is caught", () => {
    const drift = JSON.parse(
      mutated((d) => {
        offering(d, "gpt-4o-mini", "openai").pricing.input = 0.16;
        offering(d, "claude-sonnet-4-5", "anthropic").pricing.tiers[0].output = 22;
        offering(d, "deepseek-v3", "deepseek").pricing.output = 0.42; // the off-peak price, not the day's peak
        delete offering(d, "gemini-2.5-pro", "google").pricing.tiers;
      }),
    );
    const found = mismatches(drift);
    expect(found.some((l) => l.startsWith("gpt-4o-mini@openai input"))).toBe(true);
    expect(found.some((l) => l.startsWith("claude-sonnet-4-5@anthropic tier >200000 output"))).toBe(true);
    expect(found.some((l) => l.startsWith("deepseek-v3@deepseek output"))).toBe(true);
    expect(found).toContain("gemini-2.5-pro@google: the source has a tier the catalog lacks");
  });

  test("every other text or embedding offering is overlay-priced with a note naming its origin", () => {
    const notes = new Map<string, any>();
    for (const m of overlay.models)
      for (const o of m.offerings) if (o.source === undefined) notes.set(`${m.id}@${o.provider}`, o);
    expect([...notes.keys()].sort()).toEqual(
      [
        "claude-haiku-5-5@anthropic",
        "claude-sonnet-5-5@anthropic",
        "deepseek-v3@together",
        "gpt-oss-120b@together",
      ].sort(),
    );
    for (const [key, o] of notes) {
      expect(o.price_source.length).toBeGreaterThan(20);
      const [m, p] = key.split("@");
      expect(offering(shipped, m!, p).pricing).toEqual(o.pricing);
    }
    const covered = new Set([...notes.keys(), ...backed.map((b) => `${b.model}@${b.provider}`)]);
    const tokenPriced = shipped.offerings.filter((o: any) => o.pricing).map((o: any) => `${o.model}@${o.provider}`);
    expect(tokenPriced.filter((k: string) => !covered.has(k))).toEqual([]);
  });
});

describe("npm run catalog:sync", () => {
  const dir = mkdtempSync(join(tmpdir(), "catalog-sync-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const sync = (...args: string[]) =>
    Bun.spawnSync([process.execPath, join(ROOT, "scripts/catalog-sync.ts"), ...args], {
      stdout: "pipe",
      stderr: "pipe",
    });
  const table = () => readFileSync(join(ROOT, "docs/catalog-models.md"), "utf8");

  test("regenerates the shipped files byte for byte, from scratch and over the previous build", () => {
    const fresh = join(dir, "fresh");
    const first = sync("--out", fresh, "--date", shipped.source.built_at);
    expect(first.stderr.toString()).toBe("");
    expect(first.exitCode).toBe(0);
    expect(readFileSync(join(fresh, "catalog.json"), "utf8")).toBe(shippedText());
    expect(readFileSync(join(fresh, "catalog.sha256"), "utf8")).toBe(shippedHashText());
    expect(readFileSync(join(fresh, "catalog-models.md"), "utf8")).toBe(table());

    const again = sync("--out", fresh, "--date", shipped.source.built_at);
    expect(again.exitCode).toBe(0);
    expect(again.stdout.toString()).toContain("unchanged");
  });

  test("a run on a later day with the same facts keeps the previous build and its day", () => {
    const later = join(dir, "later");
    sync("--out", later, "--date", shipped.source.built_at);
    copyFileSync(join(CATALOG_DIR, "catalog.json"), join(later, "catalog.json"));
    const nextDay = new Date(Date.parse(`${shipped.source.built_at}T00:00:00Z`) + 86_400_000)
      .toISOString()
      .slice(0, 10);
    const next = sync("--out", later, "--date", nextDay);
    expect(next.exitCode).toBe(0);
    expect(next.stdout.toString()).toContain("unchanged");
    expect(readFileSync(join(later, "catalog.json"), "utf8")).toBe(shippedText());
    expect(sync("--out", later, "--date", nextDay, "--check").exitCode).toBe(0);
  });

  test("--check reports a stale catalog and writes nothing", () => {
    const stale = join(dir, "stale");
    sync("--out", stale, "--date", shipped.source.built_at);
    const edited = mutated((d) => (offering(d, "gpt-4o", "openai").pricing.output = 11));
    writeFileSync(join(stale, "catalog.json"), edited);
    const r = sync("--out", stale, "--date", shipped.source.built_at, "--check");
    expect(r.exitCode).toBe(1);
    expect(r.stderr.toString()).toContain("out of date");
    expect(readFileSync(join(stale, "catalog.json"), "utf8")).toBe(edited);
  });
});
