/**
 * The import graph between the folders of src/core: which folder imports which, by value or by
 * type only, and the loops in that graph. test/architecture.test.ts uses it to hold the core's
 * folders to their downward order; run directly it prints the graph and its loops, the figure
 * the floor plan is measured by.
 *
 *   ./node_modules/.bin/bun scripts/core-imports.ts
 *
 * A top-level file of src/core (errors.ts, error-messages-en.ts) is a node of its own, named
 * after the file. An import is type-only when it is `import type`/`export type`, or when every
 * name it brings is marked `type`; a folder pair counts as a value edge as soon as one import
 * between them is a value import.
 */
import { Glob } from "bun";
import { dirname, join, relative, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "..");
const CORE = "src/core";

/** One import statement of a file: where it points and whether it brings only types. */
export interface ImportSpec {
  spec: string;
  typeOnly: boolean;
}

/** Every import and re-export of a source text, static and dynamic. */
export function importSpecs(source: string): ImportSpec[] {
  const out: ImportSpec[] = [];
  for (const m of source.matchAll(/^\s*(import|export)\s([^;]*?)from\s+["']([^"']+)["']/gm)) {
    const clause = m[2]!.trim();
    out.push({ spec: m[3]!, typeOnly: isTypeOnly(clause) });
  }
  for (const m of source.matchAll(/^\s*import\s+["']([^"']+)["']/gm)) out.push({ spec: m[1]!, typeOnly: false });
  for (const m of source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) out.push({ spec: m[1]!, typeOnly: false });
  return out;
}

function isTypeOnly(clause: string): boolean {
  if (/^type\s/.test(clause)) return true;
  const braces = clause.match(/^\{([^}]*)\}\s*$/);
  if (!braces) return false;
  const names = braces[1]!
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean);
  return names.length > 0 && names.every((n) => n.startsWith("type "));
}

/** The core node a repository path belongs to, or null when it lies outside src/core. */
export function coreNode(path: string): string | null {
  if (!path.startsWith(CORE + "/")) return null;
  const rest = path.slice(CORE.length + 1);
  const slash = rest.indexOf("/");
  if (slash >= 0) return rest.slice(0, slash);
  return rest.endsWith(".ts") ? rest : rest + ".ts";
}

/** One import of one core file into another core node. */
export interface CoreImport {
  file: string;
  spec: string;
  from: string;
  to: string;
  typeOnly: boolean;
}

/** Every import from one core node into another (imports inside a node are left out). */
export async function coreImports(root = ROOT): Promise<CoreImport[]> {
  const out: CoreImport[] = [];
  for await (const file of new Glob(`${CORE}/**/*.ts`).scan(root)) {
    if (file.endsWith(".d.ts")) continue;
    const from = coreNode(file)!;
    const text = await Bun.file(join(root, file)).text();
    for (const { spec, typeOnly } of importSpecs(text)) {
      if (!spec.startsWith(".")) continue;
      const to = coreNode(relative(root, resolve(root, dirname(file), spec)));
      if (to && to !== from) out.push({ file, spec, from, to, typeOnly });
    }
  }
  return out;
}

/** Folder edges "from→to" with how many imports of each kind make them. */
export function edges(imports: CoreImport[]): Map<string, { value: number; type: number }> {
  const out = new Map<string, { value: number; type: number }>();
  for (const i of imports) {
    const key = `${i.from}→${i.to}`;
    const e = out.get(key) ?? { value: 0, type: 0 };
    if (i.typeOnly) e.type++;
    else e.value++;
    out.set(key, e);
  }
  return out;
}

/** Pairs of nodes that import each other (each pair once, sorted). */
export function mutualPairs(edgeKeys: Iterable<string>): string[] {
  const set = new Set(edgeKeys);
  const out: string[] = [];
  for (const key of set) {
    const [a, b] = key.split("→") as [string, string];
    if (a < b && set.has(`${b}→${a}`)) out.push(`${a} ⇄ ${b}`);
  }
  return out.sort();
}

/** Strongly connected groups of more than one node: each is at least one loop. */
export function loops(edgeKeys: Iterable<string>): string[][] {
  const next = new Map<string, string[]>();
  for (const key of edgeKeys) {
    const [a, b] = key.split("→") as [string, string];
    next.set(a, [...(next.get(a) ?? []), b]);
    if (!next.has(b)) next.set(b, []);
  }
  // Tarjan's algorithm; the graph has a dozen nodes, recursion depth is no concern.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return groups;
}

/** Elementary cycles of the graph (each once, starting at its smallest node), up to `cap`. */
export function cycles(edgeKeys: Iterable<string>, cap = 10_000): string[][] {
  const next = new Map<string, string[]>();
  for (const key of edgeKeys) {
    const [a, b] = key.split("→") as [string, string];
    next.set(a, [...(next.get(a) ?? []), b]);
  }
  const out: string[][] = [];
  const nodes = [...new Set([...next.keys()])].sort();
  for (const start of nodes) {
    const path = [start];
    const walk = (v: string) => {
      for (const w of next.get(v) ?? []) {
        if (out.length >= cap) return;
        if (w === start) out.push([...path]);
        else if (w > start && !path.includes(w)) {
          path.push(w);
          walk(w);
          path.pop();
        }
      }
    };
    walk(start);
  }
  return out;
}

if (import.meta.main) {
  const imports = await coreImports();
  const all = edges(imports);
  const valueKeys = [...all].filter(([, e]) => e.value > 0).map(([k]) => k);
  const typeOnlyKeys = [...all].filter(([, e]) => e.value === 0).map(([k]) => k);
  console.log(`${imports.length} imports between the nodes of src/core`);
  for (const [k, e] of [...all].sort(([a], [b]) => a.localeCompare(b)))
    console.log(`  ${k.padEnd(44)} value ${String(e.value).padStart(3)}  type ${String(e.type).padStart(3)}`);
  console.log(`edges: ${all.size} (${valueKeys.length} with a value import, ${typeOnlyKeys.length} type-only)`);
  console.log(`value graph: mutual pairs ${mutualPairs(valueKeys).length}, cycles ${cycles(valueKeys).length}`);
  for (const p of mutualPairs(valueKeys)) console.log(`  ${p}`);
  for (const g of loops(valueKeys)) console.log(`  loop group: ${g.join(", ")}`);
  const allKeys = [...all.keys()];
  console.log(`with type-only: mutual pairs ${mutualPairs(allKeys).length}, cycles ${cycles(allKeys).length}`);
  for (const p of mutualPairs(allKeys)) console.log(`  ${p}`);
  for (const g of loops(allKeys)) console.log(`  loop group: ${g.join(", ")}`);
  let chatFiles = 0;
  for await (const _ of new Glob(`${CORE}/chat/**/*.ts`).scan(ROOT)) chatFiles++;
  console.log(`src/core/chat files: ${chatFiles}`);
}
