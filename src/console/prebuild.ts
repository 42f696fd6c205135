/**
 * `npm run build` step: bundles the console into dist/console/bundle.json (embedded in the
 * binary), prints each file's size plain, gzipped and brotli, and fails when the first page
 * load's gzipped JavaScript is over the budget.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bundleConsole, firstLoadJsGzip, JS_BUDGET_GZIP_BYTES } from "./bundle";
import { EMBEDDED_FILE, serializeBundle } from "./assets";

const outDir = process.argv[2] ?? "dist/console";
const b = await bundleConsole();
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
for (const [name, f] of Object.entries(b.files))
  console.log(`console ${name}: ${kb(f.plain.length)}, gzip ${kb(f.gzip.length)}, brotli ${kb(f.br.length)}`);
const js = firstLoadJsGzip(b);
console.log(`console first load: ${kb(js)} of gzipped JavaScript (budget ${kb(JS_BUDGET_GZIP_BYTES)})`);
if (js > JS_BUDGET_GZIP_BYTES) {
  console.error(`console JavaScript over budget by ${kb(js - JS_BUDGET_GZIP_BYTES)}`);
  process.exit(1);
}
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, EMBEDDED_FILE), serializeBundle(b));
