/**
 * `npm run catalog:sync [-- --date YYYY-MM-DD] [--out DIR] [--check] [--verbose]`: regenerates
 * the catalog from the project's overlay (src/core/catalog/overlay.json) and the pinned price
 * source (`@pydantic/genai-prices`, the version the overlay names, read from node_modules), then
 * rewrites the hash file and the generated price table (docs/catalog-models.md).
 *
 * Idempotent: when the generated facts equal those of the existing file, the existing file (and
 * its build day) is kept byte for byte. `--date` prices as of that day instead of today (UTC);
 * `--out` writes the three files into DIR (reading DIR/catalog.json as the previous build);
 * `--check` writes nothing and exits 1 when a file would change. A catalog that fails
 * verification is never written.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { findProvider, type Provider } from "@pydantic/genai-prices";
import { formatProblem } from "../src/core/catalog/types";
import { formatHashFile, verifyCatalog } from "../src/core/catalog/verify";
import { buildCatalog, type Overlay } from "./catalog-sync/build";
import { renderCatalog, renderTable } from "./catalog-sync/render";

const ROOT = join(import.meta.dir, "..");
const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const check = args.includes("--check");
const verbose = args.includes("--verbose");
const day = flag("--date") ?? new Date().toISOString().slice(0, 10);
if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) fail(`--date must be YYYY-MM-DD, got "${day}"`);
const outDir = flag("--out");
const catalogPath = outDir ? join(outDir, "catalog.json") : join(ROOT, "src/core/catalog/catalog.json");
const hashPath = catalogPath.replace(/\.json$/, ".sha256");
const tablePath = outDir ? join(outDir, "catalog-models.md") : join(ROOT, "docs/catalog-models.md");

function fail(message: string): never {
  console.error(`catalog:sync: ${message}`);
  process.exit(1);
}

const overlay = JSON.parse(readFileSync(join(ROOT, "src/core/catalog/overlay.json"), "utf8")) as Overlay;

// The installed source must be the version the overlay pins.
const pkgDir = join(dirname(fileURLToPath(import.meta.resolve(overlay.source.name))), "..");
const installed = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { name: string; version: string };
if (installed.name !== overlay.source.name || installed.version !== overlay.source.version)
  fail(
    `the overlay pins ${overlay.source.name}@${overlay.source.version}, node_modules has ${installed.name}@${installed.version}`,
  );

const source = new Map<string, Provider>();
for (const p of overlay.providers) {
  if (p.caching === "none") continue; // video providers: the overlay alone
  const found = findProvider({ providerId: p.id });
  if (!found) fail(`the source has no provider "${p.id}"`);
  source.set(p.id, found);
}

let built: ReturnType<typeof buildCatalog>;
try {
  built = buildCatalog(overlay, source, day);
} catch (e) {
  fail((e as Error).message);
}

// Keep the previous build (and its day) when only the day would change.
const previous = existsSync(catalogPath) ? readFileSync(catalogPath, "utf8") : null;
let text = renderCatalog(built.catalog);
const prevDay = previous ? (JSON.parse(previous).source?.built_at as string | undefined) : undefined;
if (previous && prevDay) {
  const same = renderCatalog({ ...built.catalog, source: { ...built.catalog.source!, built_at: prevDay } });
  if (same === previous) {
    text = previous;
    built.catalog.source!.built_at = prevDay;
  }
}

const verified = verifyCatalog(text);
if (!verified.ok) fail(`the generated catalog has problems:\n  ${verified.errors.map(formatProblem).join("\n  ")}`);

const files: [string, string][] = [
  [catalogPath, text],
  [hashPath, formatHashFile(text, "catalog.json")],
  [tablePath, renderTable(built.catalog, built.overlayPriced)],
];
const changed = files.filter(([path, content]) => !existsSync(path) || readFileSync(path, "utf8") !== content);

const perProvider = new Map<string, number>();
for (const o of built.catalog.offerings) perProvider.set(o.provider, (perProvider.get(o.provider) ?? 0) + 1);
const leaves = built.catalog.models.filter((m) => m.kind === "leaf");
console.log(
  `${overlay.source.name}@${overlay.source.version}, built ${built.catalog.source!.built_at}: ${leaves.length} leaf models, ` +
    `offerings ${[...perProvider].map(([p, n]) => `${p} ${n}`).join(", ")}; ${built.overlayPriced.size} overlay-priced`,
);
if (verbose) for (const n of built.notes) console.log(`  ${n}`);
else if (built.notes.length > 0) console.log(`  ${built.notes.length} notes (--verbose lists them)`);

if (check) {
  for (const [path] of changed) console.error(`out of date: ${path}`);
  process.exit(changed.length > 0 ? 1 : 0);
}
for (const [path, content] of changed) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}
console.log(changed.length > 0 ? `wrote ${changed.map(([p]) => p).join(", ")}` : "unchanged");
