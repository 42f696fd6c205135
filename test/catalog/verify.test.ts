import { describe, expect, test } from "bun:test";
import { catalogHash, formatHashFile, parseHashFile, verifyCatalog } from "../../src/core/catalog/verify";
import { getOffering, getOfferings, getModel, type CatalogProblem } from "../../src/core/catalog/types";
import { model, mutated, offering, shippedHashText, shippedText, snapshotOf } from "./helpers";

/** The index of a model's offering (on `provider`, else its first) in the shipped file. */
function at(modelId: string, provider?: string): number {
  return JSON.parse(shippedText()).offerings.findIndex(
    (o: any) => o.model === modelId && (provider === undefined || o.provider === provider),
  );
}

function problemsOf(text: string, expectedHash?: string): readonly CatalogProblem[] {
  const r = verifyCatalog(text, expectedHash);
  expect(r.ok).toBe(false);
  return r.errors;
}

describe("the shipped catalog", () => {
  test("verifies against its shipped hash", () => {
    const r = verifyCatalog(shippedText(), shippedHashText());
    if (!r.ok) throw new Error(JSON.stringify(r.errors, null, 2));
    expect(r.snapshot.hash).toBe(catalogHash(shippedText()));
    expect(parseHashFile(shippedHashText())).toBe(r.snapshot.hash);
  });

  test("holds every id of the catalog contract", () => {
    const s = snapshotOf();
    const contract: [string, string, string, string[]][] = [
      ["gpt-4o-mini", "openai/gpt-4o-mini", "openai", ["openai"]],
      ["gpt-4o", "openai/gpt-4o", "openai", ["openai"]],
      ["claude-sonnet-4-5", "anthropic/claude-sonnet-4-5", "anthropic", ["anthropic"]],
      ["claude-haiku-4-5", "anthropic/claude-haiku-4-5", "anthropic", ["anthropic"]],
      ["gemini-2.5-flash", "google/gemini-2.5-flash", "google", ["google"]],
      ["gemini-2.5-pro", "google/gemini-2.5-pro", "google", ["google"]],
      ["deepseek-v3", "deepseek/deepseek-v3", "deepseek", ["deepseek", "together"]],
      ["llama-3.3-70b", "meta-llama/llama-3.3-70b", "meta", ["together", "groq"]],
      ["text-embedding-3-small", "openai/text-embedding-3-small", "openai", ["openai"]],
    ];
    for (const [id, vendorId, maker, providers] of contract) {
      const m = getModel(s, id)!;
      expect(m).toBeDefined();
      expect(m.vendorId).toBe(vendorId);
      expect(m.maker).toBe(maker);
      expect(m.kind).toBe("leaf");
      expect(getOfferings(s, id).map((o) => o.providerId)).toEqual(providers);
    }
    expect(getModel(s, "text-embedding-3-small")!.modality).toBe("embedding");
    for (const id of ["benchmark_smart", "analytics_smart", "perfect"]) expect(getModel(s, id)!.kind).toBe("parent");
    for (const id of ["pleum-smart", "pleum-perfect"]) expect(getModel(s, id)!.kind).toBe("retired");
    const video: Record<string, string[]> = {
      kling: ["kling-v3", "kling-v3-turbo", "kling-v3-omni", "kling-v2-5-turbo", "kling-v2-6"],
      ltx: ["ltx-2-fast", "ltx-2-pro"],
      seedance: [
        "seedance-2-0",
        "seedance-2-0-fast",
        "seedance-2-0-mini",
        "seedance-1-5-pro",
        "seedance-1-0-pro",
        "seedance-1-0-pro-fast",
      ],
      veo: ["veo-3", "veo-3-omni"],
    };
    for (const [vendor, ids] of Object.entries(video)) {
      for (const id of ids) {
        const m = getModel(s, id)!;
        expect(m.modality).toBe("video");
        expect(m.vendorId).toBe(`${vendor}/${id}`);
        expect(getOfferings(s, id)[0]!.providerId).toBe(vendor);
      }
    }
    expect(getModel(s, "ltx-2-fast")!.family).toBe("L-fast");
    expect(getModel(s, "ltx-2-pro")!.family).toBe("L-pro");
    expect(getModel(s, "seedance-1-0-pro-fast")!.family).toBe("S-1.0-pro-fast");
    expect(getModel(s, "veo-3")!.family).toBe("G");
    expect(getModel(s, "veo-3-omni")!.family).toBe("G-omni");
    expect(getModel(s, "kling-v2-6")!.familyGroup).toBe("K");
  });

  test("providers: protocols, env names, training use and service_tier", () => {
    const s = snapshotOf();
    expect(s.providers.map((p) => p.id)).toEqual([
      "openai",
      "anthropic",
      "google",
      "deepseek",
      "together",
      "groq",
      "kling",
      "ltx",
      "seedance",
      "veo",
    ]);
    expect(s.providersById.openai!.credentialEnv).toBe("OPENAI_API_KEY");
    expect(s.providersById.groq!.baseUrlEnv).toBe("GROQ_BASE_URL");
    expect(s.providersById.groq!.baseUrl).toBe("https://api.groq.com/openai");
    expect(s.providersById.anthropic!.protocol).toBe("anthropic");
    expect(s.providersById.google!.protocol).toBe("gemini");
    expect(s.providersById.veo!.protocol).toBe("video-veo");
    expect(s.providers.filter((p) => p.trainsOnData).map((p) => p.id)).toEqual(["together"]);
    expect(s.providers.filter((p) => p.serviceTier).map((p) => p.id)).toEqual(["openai"]);
  });

  test("prices are integer micro-dollars per million tokens; caching follows the three cases", () => {
    const s = snapshotOf();
    expect(getOffering(s, "gpt-4o-mini", "openai")!.pricing).toEqual({
      input: 150_000,
      output: 600_000,
      cachedInput: 75_000,
      cacheWrite: null,
      webSearchPer1k: 10_000_000,
    });
    const sonnet = getOffering(s, "claude-sonnet-4-5", "anthropic")!.pricing!;
    expect(sonnet).toEqual({
      input: 3_000_000,
      output: 15_000_000,
      cachedInput: 300_000,
      cacheWrite: 3_750_000,
      cacheWrite1h: 6_000_000,
      tiers: [
        {
          aboveInputTokens: 200_000,
          input: 6_000_000,
          output: 22_500_000,
          cachedInput: 600_000,
          cacheWrite: 7_500_000,
        },
      ],
      webSearchPer1k: 10_000_000,
    });
    expect(getOffering(s, "gpt-4o", "openai")!.serviceTiers).toEqual({
      priority: { input: 4_250_000, output: 17_000_000, cachedInput: 2_125_000, cacheWrite: null },
    });
    const ds = getOffering(s, "deepseek-v3", "deepseek")!;
    expect(ds.upstreamId).toBe("deepseek-chat");
    expect(ds.pricing!.cachedInput).toBe(ds.pricing!.input);
    expect(getOffering(s, "deepseek-v3", "together")!.upstreamId).toBe("deepseek-ai/DeepSeek-V3");
    expect(getOffering(s, "llama-3.3-70b", "together")!.upstreamId).toBe("meta-llama/Llama-3.3-70B-Instruct-Turbo");
    expect(getOffering(s, "llama-3.3-70b", "groq")!.upstreamId).toBe("llama-3.3-70b-versatile");
    for (const o of s.offerings) {
      if (!o.pricing) continue;
      const { tiers, ...flat } = o.pricing;
      for (const row of [flat, ...(tiers ?? [])])
        for (const v of Object.values(row)) if (v !== null) expect(Number.isInteger(v)).toBe(true);
    }
  });

  test("video prices: KRW per second by resolution, Family G Omni per output token", () => {
    const s = snapshotOf();
    const veo = getOfferings(s, "veo-3")[0]!.videoPricing!;
    expect(veo.krwPerSecond!["720p"]).toBeGreaterThan(0);
    expect(Object.keys(veo.krwPerSecond!)).toEqual(["480p", "720p", "1080p", "1440p", "4k"]);
    const omni = getOfferings(s, "veo-3-omni")[0]!.videoPricing!;
    expect(omni.krwPerSecond).toBeNull();
    expect(Number.isInteger(omni.krwPer1kOutputTokens)).toBe(true);
    expect(omni.estOutputTokensPerSecond!["720p"]).toBeGreaterThan(0);
    expect(omni.maxSeconds).toBe(10);
    expect(Object.keys(getOfferings(s, "seedance-2-0-mini")[0]!.videoPricing!.krwPerSecond!)).toEqual(["480p", "720p"]);
  });

  test("reasoning_pro entries", () => {
    const s = snapshotOf();
    expect(getModel(s, "gemini-2.5-flash")!.reasoningPro).toEqual({ variant: "gemini-2.5-pro" });
    expect(getModel(s, "claude-sonnet-4-5")!.reasoningPro).toEqual({ effort: "max" });
    expect(getModel(s, "claude-haiku-4-5")!.reasoningPro).toEqual({ effort: "max" });
    expect(getModel(s, "gpt-4o-mini")!.reasoningPro).toBeNull();
  });

  test("the snapshot is deep-frozen and its indexes have no prototype", () => {
    const s = snapshotOf();
    expect(Object.isFrozen(s)).toBe(true);
    expect(Object.isFrozen(s.models[0]!.capabilities)).toBe(true);
    expect(Object.isFrozen(getOfferings(s, "deepseek-v3"))).toBe(true);
    expect(Object.isFrozen(getOffering(s, "gpt-4o", "openai")!.pricing)).toBe(true);
    expect(() => {
      (s.modelsById as any).extra = 1;
    }).toThrow();
    expect(getModel(s, "constructor")).toBeUndefined();
    expect(getModel(s, "__proto__")).toBeUndefined();
    expect(s.loadedAt).toBe("2026-01-01T00:00:00.000Z");
  });
});

describe("verification failures are reported", () => {
  test("not JSON", () => {
    const errors = problemsOf("{ nope");
    expect(errors.map((e) => e.kind)).toEqual(["parse"]);
  });

  test("schema: wrong types, unknown fields and bad enums, all listed", () => {
    const text = mutated((d) => {
      model(d, "gpt-4o").active = "yes";
      model(d, "gpt-4o-mini").colour = "blue";
      d.providers[0].protocol = "grpc";
      offering(d, "gpt-4o").pricing.input = -1;
    });
    const errors = problemsOf(text);
    expect(errors.every((e) => e.kind === "schema")).toBe(true);
    const paths = errors.map((e) => e.path);
    expect(paths).toContain("models[1].active");
    expect(paths).toContain("models[0].colour");
    expect(paths).toContain("providers[0].protocol");
    expect(paths).toContain("offerings[1].pricing.input");
  });

  test("dangling references", () => {
    const text = mutated((d) => {
      d.offerings.push({ ...offering(d, "gpt-4o"), model: "gpt-9" });
      d.offerings.push({ ...offering(d, "gpt-4o-mini"), provider: "mistral" });
      model(d, "perfect").candidates.push("claude-opus-9");
      model(d, "pleum-smart").replaced_by = ["gpt-4o"];
      model(d, "gemini-2.5-flash").reasoning_pro = { variant: "gemini-3-ultra" };
    });
    const errors = problemsOf(text);
    const refs = errors.filter((e) => e.kind === "reference").map((e) => e.message);
    expect(refs.some((m) => m.includes('unknown model "gpt-9"'))).toBe(true);
    expect(refs.some((m) => m.includes('unknown provider "mistral"'))).toBe(true);
    expect(refs.some((m) => m.includes('unknown model "claude-opus-9"'))).toBe(true);
    expect(refs.some((m) => m.includes('"gpt-4o" is not an active routing parent'))).toBe(true);
    expect(refs.some((m) => m.includes('"gemini-3-ultra"'))).toBe(true);
  });

  test("a parent candidate that is inactive or not a leaf", () => {
    const text = mutated((d) => {
      model(d, model(d, "analytics_smart").candidates[0]).active = false;
      model(d, "analytics_smart").candidates.push("perfect");
    });
    const first = model(JSON.parse(shippedText()), "analytics_smart").candidates[0];
    const errors = problemsOf(text).map((e) => e.message);
    expect(errors).toContain(`"${first}" is inactive`);
    expect(errors).toContain('"perfect" is not a text leaf');
  });

  test("an active text leaf without a priced offering", () => {
    const text = mutated((d) => {
      d.offerings = d.offerings.filter((o: any) => o.model !== "gpt-4o");
    });
    expect(problemsOf(text).map((e) => e.message)).toContain('active model "gpt-4o" has no priced offering');
  });

  test("hash mismatch, together with the other problems", () => {
    const text = shippedText().replace('"version": 1', '"version": 1 ');
    const errors = problemsOf(text, shippedHashText());
    expect(errors.map((e) => e.kind)).toEqual(["hash"]);
    expect(problemsOf(text, "not-a-hash")[0]!.kind).toBe("hash");
    const both = problemsOf(
      mutated((d) => (model(d, "gpt-4o").id = "gpt-4o-mini")),
      shippedHashText(),
    );
    expect(both.map((e) => e.kind)).toEqual(expect.arrayContaining(["duplicate", "hash"]));
  });

  test("duplicate ids: models, vendor ids, providers, offerings, env names", () => {
    const text = mutated((d) => {
      model(d, "gpt-4o").id = "gpt-4o-mini";
      model(d, "claude-haiku-4-5").vendor_id = "anthropic/claude-sonnet-4-5";
      d.providers.push({ ...d.providers[0], credential_env: "X_API_KEY", base_url_env: "X_BASE_URL" });
      d.offerings.push({ ...offering(d, "deepseek-v3", "together") });
      d.providers[1].credential_env = "OPENAI_API_KEY";
    });
    const dup = problemsOf(text)
      .filter((e) => e.kind === "duplicate")
      .map((e) => e.message);
    expect(dup).toContain('duplicate model id "gpt-4o-mini"');
    expect(dup).toContain('duplicate vendor id "anthropic/claude-sonnet-4-5"');
    expect(dup).toContain('duplicate provider id "openai"');
    expect(dup).toContain("duplicate offering deepseek-v3@together");
    expect(dup.some((m) => m.includes("OPENAI_API_KEY"))).toBe(true);
  });

  test("env names follow <PROVIDER>_API_KEY / <PROVIDER>_BASE_URL", () => {
    const text = mutated((d) => {
      d.providers[2].credential_env = "GEMINI_API_KEY";
    });
    const errors = problemsOf(text);
    expect(errors).toEqual([
      { kind: "schema", path: "providers[2].credential_env", message: "expected GOOGLE_API_KEY" },
    ]);
  });

  test("protocol consistency", () => {
    const text = mutated((d) => {
      d.offerings.push({ ...offering(d, "gpt-4o"), provider: "kling" });
      offering(d, "veo-3").provider = "kling";
      d.providers.find((p: any) => p.id === "anthropic").service_tier = true;
      offering(d, "text-embedding-3-small").provider = "anthropic";
    });
    const msgs = problemsOf(text)
      .filter((e) => e.kind === "protocol")
      .map((e) => e.message);
    expect(msgs.some((m) => m.includes('text model "gpt-4o" cannot be served by video provider "kling"'))).toBe(true);
    expect(msgs.some((m) => m.includes("family G needs protocol video-veo"))).toBe(true);
    expect(msgs.some((m) => m.includes("service_tier"))).toBe(true);
    expect(msgs.some((m) => m.includes("embeddings are served over the OpenAI or Gemini protocol"))).toBe(true);
  });

  test("caching prices must follow the provider's caching case", () => {
    const text = mutated((d) => {
      offering(d, "gpt-4o").pricing.cached_input = 2.5; // automatic: must be discounted
      offering(d, "claude-haiku-4-5").pricing.cache_write = null; // explicit: needs a write price
      offering(d, "deepseek-v3", "deepseek").pricing.cached_input = 0.028; // reported: no discount
      offering(d, "gpt-4o-mini").pricing.input = 0.1500001; // more than 6 decimals
    });
    const price = problemsOf(text)
      .filter((e) => e.kind === "price")
      .map((e) => e.path);
    expect(price).toEqual(
      expect.arrayContaining([
        `offerings[${at("gpt-4o")}].pricing.cached_input`,
        `offerings[${at("claude-haiku-4-5")}].pricing.cache_write`,
        `offerings[${at("deepseek-v3", "deepseek")}].pricing.cached_input`,
        `offerings[${at("gpt-4o-mini")}].pricing.input`,
      ]),
    );
  });

  test("service tier and one-hour cache prices: only where the provider has them, following its caching case", () => {
    const text = mutated((d) => {
      offering(d, "claude-haiku-4-5").service_tiers = {
        priority: { input: 2, output: 10, cached_input: 0.2, cache_write: 2.5 },
      }; // no service_tier
      offering(d, "gpt-4o").service_tiers.priority.cached_input = 5; // automatic: must be discounted
      offering(d, "gpt-4o-mini").pricing.cache_write_1h = 0.3; // automatic caching has no TTLs
      offering(d, "claude-sonnet-4-5").pricing.cache_write_1h = 3.5; // below the five-minute write
      offering(d, "gpt-4o").service_tiers.priority.output = 17.0000001;
    });
    const price = problemsOf(text)
      .filter((e) => e.kind === "price")
      .map((e) => e.path);
    expect(price).toEqual(
      expect.arrayContaining([
        `offerings[${at("claude-haiku-4-5")}].service_tiers`,
        `offerings[${at("gpt-4o")}].service_tiers.priority.cached_input`,
        `offerings[${at("gpt-4o-mini")}].pricing.cache_write_1h`,
        `offerings[${at("claude-sonnet-4-5")}].pricing.cache_write_1h`,
        `offerings[${at("gpt-4o")}].service_tiers.priority.output`,
      ]),
    );
  });

  test("video pricing rules", () => {
    const text = mutated((d) => {
      offering(d, "veo-3-omni").video_pricing = { default_resolution: "720p", krw_per_second: { "720p": 500 } };
      offering(d, "ltx-2-pro").video_pricing.default_resolution = "480p";
      offering(d, "kling-v3").pricing = { input: 1, output: 1, cached_input: null, cache_write: null };
    });
    const msgs = problemsOf(text).map((e) => e.message);
    expect(msgs).toContain("Family G Omni is billed per output token");
    expect(msgs).toContain("the default resolution 480p has no price");
    expect(msgs.some((m) => m.includes("pricing must be null"))).toBe(true);
  });
});

test("formatHashFile writes sha256sum format that parseHashFile reads", () => {
  const line = formatHashFile("abc");
  expect(line).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  catalog.json\n");
  expect(parseHashFile(line)).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  expect(parseHashFile("nothing here")).toBeNull();
});
