/**
 * One set of variable names in three places: the schema (what the gateway reads), .env.example
 * (what an operator copies) and the README's configuration table (what it means). Provider
 * variables (`<PROVIDER>_API_KEY`, `<PROVIDER>_BASE_URL`) are read by pattern and documented
 * as such, so they are left out of the comparison.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { EnvSchema } from "../../src/config/schema";

const ROOT = resolve(import.meta.dir, "../..");
const PROVIDER = /^[A-Z][A-Z0-9]*_(API_KEY|BASE_URL)$/;

function schemaNames(): Set<string> {
  return new Set(Object.keys(EnvSchema.properties));
}

/** `NAME=` lines of .env.example, commented out or not. */
function envExampleNames(): Set<string> {
  const text = readFileSync(join(ROOT, ".env.example"), "utf8");
  return new Set([...text.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!).filter((n) => !PROVIDER.test(n)));
}

/** The names in the first column of the table under "## Configuration" in README.md. */
function readmeNames(): Set<string> {
  const text = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = text.indexOf("\n## Configuration");
  const end = text.indexOf("\n## ", start + 1);
  const rows = text
    .slice(start, end)
    .split("\n")
    .filter((l) => l.startsWith("| `"));
  const names = rows.flatMap((row) => [...row.split("|")[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!));
  return new Set(names.filter((n) => !PROVIDER.test(n)));
}

function differences(a: Set<string>, aName: string, b: Set<string>, bName: string): string[] {
  const out: string[] = [];
  const onlyA = [...a].filter((n) => !b.has(n)).sort();
  const onlyB = [...b].filter((n) => !a.has(n)).sort();
  if (onlyA.length) out.push(`in ${aName} but not in ${bName}: ${onlyA.join(", ")}`);
  if (onlyB.length) out.push(`in ${bName} but not in ${aName}: ${onlyB.join(", ")}`);
  return out;
}

describe("the configuration surface", () => {
  test("the parsers find the variables (a sanity check of this test itself)", () => {
    expect(schemaNames().size).toBeGreaterThan(40);
    expect(envExampleNames().has("PORT")).toBe(true);
    expect(readmeNames().has("HOST")).toBe(true);
  });

  test(".env.example lists every variable of the schema, and nothing else", () => {
    expect(differences(schemaNames(), "the schema (src/config/schema.ts)", envExampleNames(), ".env.example")).toEqual(
      [],
    );
  });

  test("the README configuration table documents every variable of the schema, and nothing else", () => {
    expect(
      differences(schemaNames(), "the schema (src/config/schema.ts)", readmeNames(), "the README configuration table"),
    ).toEqual([]);
  });
});
