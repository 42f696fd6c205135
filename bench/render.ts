/**
 * Re-renders a results file's markdown from its JSON: `bun bench/render.ts [name]` (default
 * latest) → bench/results/<name>.md. For when the report's wording changes after a run.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderMarkdown } from "./lib/report";

const name = process.argv[2] ?? "latest";
const dir = join(import.meta.dir, "results");
writeFileSync(join(dir, `${name}.md`), renderMarkdown(JSON.parse(readFileSync(join(dir, `${name}.json`), "utf8"))));
console.log(`wrote bench/results/${name}.md`);
