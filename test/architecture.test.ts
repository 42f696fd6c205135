/**
 * Keeps the layer arrows of the architecture honest: core imports only lib and TypeBox;
 * surfaces and providers import core and lib (surfaces never the chat service: they encode); the simulator imports only lib; lib imports
 * nothing of the app; db implements core ports; http and jobs sit on top (and never on each
 * other).
 */
import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { dirname, join, relative, resolve } from "node:path";

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
