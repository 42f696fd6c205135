/**
 * Verification of the lifecycle, alias, long-context tier, web-search and source fields of the
 * catalog file: what it accepts, what it refuses (with the path of the problem), and what the
 * snapshot carries (prices as integer micro-dollars, aliases indexed bare and vendor-prefixed).
 */
import { describe, expect, test } from "bun:test";
import { verifyCatalog } from "../../src/core/catalog/verify";
import { findModel } from "../../src/core/catalog/resolve";
import { getModel, getOffering, type CatalogProblem } from "../../src/core/catalog/types";
import { model, mutated, offering, shippedText, snapshotOf } from "./helpers";

function problemsOf(text: string): readonly CatalogProblem[] {
  const r = verifyCatalog(text);
  expect(r.ok).toBe(false);
  return r.errors;
}

const paths = (text: string) => problemsOf(text).map((p) => p.path);

/** Sonnet 4.5 deprecated with Haiku 4.5 as its successor, plus aliases on both. */
function lifecycle(data: any): void {
  Object.assign(model(data, "claude-sonnet-4-5"), {
    deprecated_at: "2026-05-01",
    retires_at: "2026-11-30",
    successor: "claude-haiku-4-5",
    aliases: ["claude-sonnet-4-5-20250929", "claude-sonnet-4-5-latest"],
  });
  Object.assign(model(data, "gpt-4o"), {
    deprecated_at: null,
    retires_at: null,
    successor: null,
    aliases: ["gpt-4o-2024-08-06"],
  });
}

describe("lifecycle fields", () => {
  test("a deprecated model with a retirement date, a successor and aliases verifies and is carried", () => {
    const s = snapshotOf(mutated(lifecycle));
    const sonnet = getModel(s, "claude-sonnet-4-5")!;
    expect(sonnet.deprecatedAt).toBe("2026-05-01");
    expect(sonnet.retiresAt).toBe("2026-11-30");
    expect(sonnet.successor).toBe("claude-haiku-4-5");
    expect(sonnet.aliases).toEqual(["claude-sonnet-4-5-20250929", "claude-sonnet-4-5-latest"]);
    const opus = getModel(s, "claude-opus-4-6")!;
    expect([opus.deprecatedAt, opus.retiresAt, opus.successor, opus.aliases]).toEqual([null, null, null, []]);
  });

  test("aliases resolve bare, vendor-prefixed and case-insensitively", () => {
    const s = snapshotOf(mutated(lifecycle));
    expect(findModel(s, "claude-sonnet-4-5-20250929")?.id).toBe("claude-sonnet-4-5");
    expect(findModel(s, "anthropic/claude-sonnet-4-5-20250929")?.id).toBe("claude-sonnet-4-5");
    expect(findModel(s, "Claude-Sonnet-4-5-Latest")?.id).toBe("claude-sonnet-4-5");
    expect(findModel(s, "gpt-4o-2024-08-06")?.id).toBe("gpt-4o");
    // The vendor prefix is the model's own: another vendor's prefix is no alias.
    expect(findModel(s, "openai/claude-sonnet-4-5-20250929")).toBeUndefined();
  });

  test("refuses an impossible date, retirement before deprecation", () => {
    expect(paths(mutated((d) => (model(d, "gpt-4o").deprecated_at = "2026-02-30")))).toEqual([
      "models[1].deprecated_at",
    ]);
    expect(paths(mutated((d) => (model(d, "gpt-4o").retires_at = "2026-1-05")))).toEqual(["models[1].retires_at"]);
    const early = problemsOf(
      mutated((d) => Object.assign(model(d, "gpt-4o"), { deprecated_at: "2026-06-01", retires_at: "2026-05-31" })),
    );
    expect(early.map((p) => p.path)).toEqual(["models[1].retires_at"]);
    expect(early[0]!.message).toContain("before deprecated_at");
  });

  test("a retirement on the day of deprecation is accepted", () => {
    const s = snapshotOf(
      mutated((d) => Object.assign(model(d, "gpt-4o"), { deprecated_at: "2026-06-01", retires_at: "2026-06-01" })),
    );
    expect(getModel(s, "gpt-4o")!.retiresAt).toBe("2026-06-01");
  });

  test("a successor must be another active leaf of the same modality", () => {
    const bad: [string, string][] = [
      ["claude-opus-9", 'unknown model "claude-opus-9"'],
      ["gpt-4o", "cannot be its own successor"],
      ["perfect", "not an active text leaf"],
      ["pleum-smart", "not an active text leaf"],
      ["text-embedding-3-small", "not an active text leaf"],
    ];
    for (const [successor, message] of bad) {
      const found = problemsOf(mutated((d) => (model(d, "gpt-4o").successor = successor)));
      expect(found.map((p) => p.path)).toEqual(["models[1].successor"]);
      expect(found[0]!.message).toContain(message);
    }
    const inactive = problemsOf(
      mutated((d) => {
        model(d, "gpt-4o").successor = "gpt-4o-mini";
        model(d, "gpt-4o-mini").active = false;
      }),
    );
    expect(inactive.map((p) => p.message)).toContainEqual('"gpt-4o-mini" is not an active text leaf');
  });

  test("a successor must still be served when the model retires", () => {
    const retiresFirst = mutated((d) => {
      Object.assign(model(d, "gpt-4o"), { retires_at: "2026-12-01", successor: "gpt-4o-mini" });
      model(d, "gpt-4o-mini").retires_at = "2026-11-01";
    });
    expect(problemsOf(retiresFirst)[0]!.message).toContain("retires on 2026-11-01");
    const sameDay = mutated((d) => {
      Object.assign(model(d, "gpt-4o"), { retires_at: "2026-12-01", successor: "gpt-4o-mini" });
      model(d, "gpt-4o-mini").retires_at = "2026-12-01";
    });
    expect(paths(sameDay)).toEqual(["models[1].successor"]);
    const noDate = mutated((d) => {
      model(d, "gpt-4o").successor = "gpt-4o-mini";
      model(d, "gpt-4o-mini").retires_at = "2027-12-01";
    });
    expect(paths(noDate)).toEqual(["models[1].successor"]);
    const later = mutated((d) => {
      Object.assign(model(d, "gpt-4o"), { retires_at: "2026-12-01", successor: "gpt-4o-mini" });
      model(d, "gpt-4o-mini").retires_at = "2027-06-01";
    });
    expect(getModel(snapshotOf(later), "gpt-4o")!.successor).toBe("gpt-4o-mini");
  });

  test("lifecycle fields and aliases belong to leaves", () => {
    const found = problemsOf(
      mutated((d) => Object.assign(model(d, "perfect"), { deprecated_at: "2026-01-01", aliases: ["perfect-1"] })),
    );
    const at = JSON.parse(shippedText()).models.findIndex((m: any) => m.id === "perfect");
    expect(found.map((p) => p.path).sort()).toEqual([`models[${at}].aliases`, `models[${at}].deprecated_at`]);
  });

  test("an alias may not repeat an id, a vendor id or another alias", () => {
    const clashes: [(d: any) => void, string][] = [
      [(d) => (model(d, "gpt-4o").aliases = ["gpt-4o-mini"]), '"gpt-4o-mini" is already the model id of "gpt-4o-mini"'],
      [(d) => (model(d, "gpt-4o").aliases = ["x", "x"]), '"x" is already the alias of "gpt-4o"'],
      [
        (d) => {
          model(d, "gpt-4o").aliases = ["gpt-4o-latest"];
          model(d, "gpt-4o-mini").aliases = ["gpt-4o-latest"];
        },
        '"gpt-4o-latest" is already the alias of "gpt-4o-mini"',
      ],
    ];
    for (const [edit, message] of clashes) {
      const found = problemsOf(mutated(edit));
      expect(found.map((p) => p.kind)).toEqual(["duplicate"]);
      expect(found[0]!.message).toBe(message);
    }
    // An alias whose vendor-prefixed form is another model's vendor id.
    const d = JSON.parse(mutated(() => {}));
    model(d, "gpt-4o-mini").vendor_id = "openai/mini-latest";
    model(d, "gpt-4o").aliases = ["mini-latest"];
    expect(problemsOf(JSON.stringify(d))[0]!.message).toBe(
      '"openai/mini-latest" is already the vendor id of "gpt-4o-mini"',
    );
  });

  test("an alias has the short id's form (no vendor prefix, no @)", () => {
    expect(paths(mutated((d) => (model(d, "gpt-4o").aliases = ["openai/gpt-4o-2024-08-06"])))).toEqual([
      "models[1].aliases[0]",
    ]);
    expect(paths(mutated((d) => (model(d, "gpt-4o").aliases = ["gpt-4o@openai"])))).toEqual(["models[1].aliases[0]"]);
  });
});

describe("long-context tiers and web search prices", () => {
  test("are carried as integer micro-dollars", () => {
    const text = mutated((d) => {
      Object.assign(offering(d, "claude-sonnet-4-5").pricing, {
        tiers: [{ above_input_tokens: 200000, input: 6, output: 22.5, cached_input: 0.6, cache_write: 7.5 }],
        web_search_per_1k: 10,
      });
      offering(d, "gpt-4o").service_tiers.priority.web_search_per_1k = 25;
    });
    const s = snapshotOf(text);
    const sonnet = getOffering(s, "claude-sonnet-4-5", "anthropic")!.pricing!;
    expect(sonnet.tiers).toEqual([
      { aboveInputTokens: 200000, input: 6_000_000, output: 22_500_000, cachedInput: 600_000, cacheWrite: 7_500_000 },
    ]);
    expect(sonnet.webSearchPer1k).toBe(10_000_000);
    expect(getOffering(s, "gpt-4o", "openai")!.serviceTiers!.priority!.webSearchPer1k).toBe(25_000_000);
    expect(getOffering(s, "gpt-4o", "openai")!.pricing!.tiers).toBeUndefined();
  });

  test("refuses thresholds out of order, inexact prices and a tier against the caching case", () => {
    const tier = (above: number, extra: object = {}) => ({
      above_input_tokens: above,
      input: 6,
      output: 22.5,
      cached_input: 0.6,
      cache_write: 7.5,
      ...extra,
    });
    const idx = JSON.parse(mutated(() => {})).offerings.findIndex((o: any) => o.model === "claude-sonnet-4-5");
    const base = `offerings[${idx}].pricing`;
    expect(
      paths(mutated((d) => (offering(d, "claude-sonnet-4-5").pricing.tiers = [tier(200000), tier(200000)]))),
    ).toEqual([`${base}.tiers[1].above_input_tokens`]);
    expect(
      paths(mutated((d) => (offering(d, "claude-sonnet-4-5").pricing.tiers = [tier(200000, { input: 6.0000001 })]))),
    ).toEqual([`${base}.tiers[0].input`]);
    // Anthropic caching is explicit: a tier needs a cache-write price like the base price does.
    expect(
      paths(mutated((d) => (offering(d, "claude-sonnet-4-5").pricing.tiers = [tier(200000, { cache_write: null })]))),
    ).toEqual([`${base}.tiers[0].cache_write`]);
    expect(paths(mutated((d) => (offering(d, "claude-sonnet-4-5").pricing.tiers = [])))).toEqual([`${base}.tiers`]);
    expect(paths(mutated((d) => (offering(d, "claude-sonnet-4-5").pricing.web_search_per_1k = 10.0000001)))).toEqual([
      `${base}.web_search_per_1k`,
    ]);
  });
});

describe("source record", () => {
  test("is carried when present, null when absent", () => {
    expect(snapshotOf(mutated((d) => delete d.source)).source).toBeNull();
    const recorded = JSON.parse(shippedText()).source;
    expect(snapshotOf().source).toEqual({ name: recorded.name, version: recorded.version, builtAt: recorded.built_at });
    const s = snapshotOf(
      mutated((d) => (d.source = { name: "@pydantic/genai-prices", version: "0.1.8", built_at: "2026-11-28" })),
    );
    expect(s.source).toEqual({ name: "@pydantic/genai-prices", version: "0.1.8", builtAt: "2026-11-28" });
  });

  test("refuses a bad date or an unknown field", () => {
    expect(paths(mutated((d) => (d.source = { name: "x", version: "1", built_at: "2026-13-01" })))).toEqual([
      "source.built_at",
    ]);
    expect(paths(mutated((d) => (d.source = { name: "x", version: "1", built_at: "2026-11-28", url: "u" })))).toEqual([
      "source.url",
    ]);
  });
});
