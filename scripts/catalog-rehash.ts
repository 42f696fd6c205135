/**
 * Rewrites the catalog's expected hash after an edit: `npm run catalog:rehash [catalog.json]`.
 * It refuses (exit 1) when the file has any other problem, so a broken catalog never gets a
 * matching hash. `--check` only compares (exit 1 on mismatch), for CI.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { formatProblem } from "../src/core/catalog/types";
import { catalogHash, formatHashFile, parseHashFile, verifyCatalog } from "../src/core/catalog/verify";

const args = process.argv.slice(2);
const check = args.includes("--check");
const catalogPath = args.find((a) => !a.startsWith("--")) ?? join(import.meta.dir, "../src/core/catalog/catalog.json");
const hashPath = join(dirname(catalogPath), basename(catalogPath).replace(/\.json$/i, "") + ".sha256");

const text = readFileSync(catalogPath, "utf8");
const result = verifyCatalog(text);
if (!result.ok) {
  console.error(`${catalogPath} has problems; not rehashing:`);
  for (const p of result.errors) console.error(`  ${formatProblem(p)}`);
  process.exit(1);
}

const hash = catalogHash(text);
let recorded: string | null = null;
try {
  recorded = parseHashFile(readFileSync(hashPath, "utf8"));
} catch {
  recorded = null;
}

if (check) {
  if (recorded === hash) {
    console.log(`${hashPath}: OK (${hash})`);
    process.exit(0);
  }
  console.error(`${hashPath}: expected ${recorded ?? "(missing)"}, file hashes to ${hash}`);
  process.exit(1);
}

writeFileSync(hashPath, formatHashFile(text, basename(catalogPath)));
console.log(recorded === hash ? `${hashPath}: unchanged (${hash})` : `${hashPath}: ${recorded ?? "(new)"} → ${hash}`);
