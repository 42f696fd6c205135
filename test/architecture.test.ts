/**
 * Keeps the layer arrows of the architecture honest: core imports only lib and TypeBox;
 * surfaces and providers import core and lib (surfaces never the chat service: they encode); the simulator imports only lib; lib imports
 * nothing of the app; db implements core ports; http and jobs sit on top (and never on each
 * other). Inside the core, folders import only downward (CORE_TIERS), so no two of them
 * import each other, not even for a type.
 */
import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { dirname, join, relative, resolve } from "node:path";
import { coreImports, coreNode, cycles, importSpecs } from "../scripts/core-imports";

const ROOT = resolve(import.meta.dir, "..");

const RULES: Record<string, { internal: string[]; external: RegExp }> = {
  "src/core": { internal: ["src/core", "src/lib"], external: /^(@sinclair\/typebox(\/.*)?|node:crypto)$/ },
  "src/surfaces": {
    internal: ["src/surfaces", "src/core", "src/lib"],
    external: /^(elysia|@sinclair\/typebox(\/.*)?)$/,
  },
  // Providers describe the vendor answers they check with TypeBox (providers/common/wire-check.ts);
  // the Stripe adapter uses Stripe's official SDK (its webhook signature verifier above all).
  "src/providers": {
    internal: ["src/providers", "src/core", "src/lib"],
    external: /^(node:.*|@sinclair\/typebox(\/.*)?|stripe)$/,
  },
  "src/sim": { internal: ["src/sim", "src/lib"], external: /^(bun|node:.*)$/ },
  "src/lib": { internal: ["src/lib"], external: /^(bun|node:.*)$/ },
  // The HTTP layer wires surfaces to the core and reads repositories; it never calls a vendor
  // adapter or a background job itself.
  "src/http": {
    internal: ["src/http", "src/core", "src/surfaces", "src/db", "src/lib", "src/config"],
    external: /^(bun|node:.*|elysia|@sinclair\/typebox(\/.*)?|@opentelemetry\/.*|swagger-ui-dist(\/.*)?)$/,
  },
  // Repositories implement core ports over SQL; nothing above them.
  "src/db": {
    internal: ["src/db", "src/core", "src/lib"],
    external: /^(bun|node:.*|postgres|drizzle-orm(\/.*)?|@electric-sql\/pglite(\/.*)?)$/,
  },
  // Jobs compose core use cases with repositories and adapters; no HTTP.
  "src/jobs": {
    internal: ["src/jobs", "src/core", "src/db", "src/providers", "src/lib", "src/config"],
    external: /^(bun|node:.*)$/,
  },
};

function importsOf(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']/gm)) out.push(m[1]!);
  for (const m of source.matchAll(/^\s*import\s+["']([^"']+)["']/gm)) out.push(m[1]!);
  for (const m of source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) out.push(m[1]!);
  return out;
}

describe("import direction", () => {
  for (const [layer, rule] of Object.entries(RULES)) {
    test(`${layer} imports only what it may`, async () => {
      const bad: string[] = [];
      let files = 0;
      for await (const file of new Glob(`${layer}/**/*.ts`).scan(ROOT)) {
        if (file.endsWith(".d.ts")) continue;
        files++;
        const text = await Bun.file(join(ROOT, file)).text();
        for (const spec of importsOf(text)) {
          if (spec.startsWith(".")) {
            const target = relative(ROOT, resolve(ROOT, dirname(file), spec));
            if (!rule.internal.some((p) => target === p || target.startsWith(p + "/"))) bad.push(`${file} → ${spec}`);
          } else if (!rule.external.test(spec)) bad.push(`${file} → ${spec}`);
        }
      }
      expect(files).toBeGreaterThan(0);
      expect(bad).toEqual([]);
    });
  }

  // A surface encodes what the core hands it (a JSON answer, a stream's events and its final
  // event); the call itself, its stream end and its bill, are the chat service's alone.
  test("src/surfaces never imports the chat service", async () => {
    const bad: string[] = [];
    for await (const file of new Glob("src/surfaces/**/*.ts").scan(ROOT)) {
      const text = await Bun.file(join(ROOT, file)).text();
      for (const spec of importsOf(text))
        if (relative(ROOT, resolve(ROOT, dirname(file), spec)) === "src/core/chat/service")
          bad.push(`${file} → ${spec}`);
    }
    expect(bad).toEqual([]);
  });

  test("the scanner sees every import form", () => {
    const src = `import a from "./x";\nimport type { B } from "../core/y";\nexport * from "elysia";\nimport "./side";\nconst m = await import("postgres");`;
    expect(importsOf(src)).toEqual(["./x", "../core/y", "elysia", "./side", "postgres"]);
  });
});

/**
 * The core's floor plan, lowest first: a node imports only nodes of a lower tier. `model` is
 * the vocabulary every folder speaks (request, result, usage, stream events, the provider,
 * raw-relay and trace ports); the use cases at the top never import each other, except
 * SIDEWAYS. A folder added to src/core fails here until it is given a tier.
 */
const CORE_TIERS: string[][] = [
  ["error-messages-en.ts"],
  ["errors.ts"],
  // What a call to the outside is made of: an upstream's failure and warnings, the key that
  // calls, the health gate of a provider.
  ["upstream", "auth", "health"],
  ["model"],
  ["catalog"],
  ["billing"],
  ["routing"],
  // The use cases; cache, policies, stats and calls serve the HTTP layer and the chat
  // service's ports, and payments buys credits; no core folder imports them.
  ["chat", "embeddings", "video", "cache", "policies", "stats", "calls", "payments"],
];

/**
 * Embeddings run on the chat call's machinery (its attempts loop, hold, estimate, the call's
 * model lifecycle and allowed-models check) rather than a copy of it; chat never imports them.
 */
const SIDEWAYS = new Set(["embeddings→chat"]);

describe("the core's folders import only downward", () => {
  const tierOf = new Map(CORE_TIERS.flatMap((nodes, tier) => nodes.map((n) => [n, tier] as const)));

  test("every node of src/core has a tier", async () => {
    const unplaced = new Set<string>();
    for await (const file of new Glob("src/core/**/*.ts").scan(ROOT)) {
      const node = coreNode(file)!;
      if (!tierOf.has(node)) unplaced.add(node);
    }
    expect([...unplaced]).toEqual([]);
  });

  test("no import points up or sideways, type-only ones included", async () => {
    const bad = (await coreImports(ROOT))
      .filter((i) => !SIDEWAYS.has(`${i.from}→${i.to}`) && !(tierOf.get(i.from)! > tierOf.get(i.to)!))
      .map((i) => `${i.file} → ${i.spec}${i.typeOnly ? " (type)" : ""}`);
    expect(bad).toEqual([]);
  });

  test("no loop between the core's nodes", async () => {
    const edges = new Set((await coreImports(ROOT)).map((i) => `${i.from}→${i.to}`));
    expect(cycles(edges)).toEqual([]);
  });

  test("the core scanner tells type-only imports apart", () => {
    const src = `import type { A } from "./a";\nimport { type B, type C } from "./b";\nimport { type D, e } from "./d";\nexport type { F } from "./f";\nexport * from "./g";`;
    expect(importSpecs(src).map((i) => [i.spec, i.typeOnly])).toEqual([
      ["./a", true],
      ["./b", true],
      ["./d", false],
      ["./f", true],
      ["./g", false],
    ]);
    expect(cycles(["a→b", "b→c", "c→a", "b→a"]).sort((x, y) => x.length - y.length)).toEqual([
      ["a", "b"],
      ["a", "b", "c"],
    ]);
  });
});
