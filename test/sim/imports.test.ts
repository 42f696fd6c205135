/**
 * The simulator must not share code with the adapters it tests: src/sim may import only
 * itself, src/lib and runtime built-ins. This reads the import lines and fails on anything
 * else.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const SIM = resolve(import.meta.dir, "..", "..", "src", "sim");
const LIB = resolve(SIM, "..", "lib");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

describe("src/sim import boundary", () => {
  test("imports only src/sim, src/lib, bun and node built-ins", () => {
    const bad: string[] = [];
    let checked = 0;
    for (const file of files(SIM)) {
      const source = readFileSync(file, "utf8");
      for (const m of source.matchAll(
        /(?:^|\n)\s*(?:import|export)[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g,
      )) {
        const spec = m[1] ?? m[2]!;
        checked++;
        if (spec === "bun" || spec.startsWith("bun:") || spec.startsWith("node:")) continue;
        const target = spec.startsWith(".") ? resolve(dirname(file), spec) : undefined;
        if (target && (target.startsWith(SIM) || target.startsWith(LIB))) continue;
        bad.push(`${relative(SIM, file)} → ${spec}`);
      }
    }
    expect(checked).toBeGreaterThan(40); // the scan really saw the import lines
    expect(bad).toEqual([]);
  });
});
