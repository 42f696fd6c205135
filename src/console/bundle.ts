/**
 * Bundles the console (src/console/app, Preact + uPlot) with Bun.build into content-hashed
 * files, each kept plain, gzipped and brotli-compressed, plus the index page that loads them.
 * Runs in memory at the first request under `npm start`, and once at build time for the binary.
 */
import { brotliCompressSync, constants } from "node:zlib";
import { join } from "node:path";

/** The first page load may carry at most this much gzipped JavaScript. */
export const JS_BUDGET_GZIP_BYTES = 250 * 1024;

export interface ConsoleFile {
  type: string;
  plain: Uint8Array;
  gzip: Uint8Array;
  br: Uint8Array;
}

export interface ConsoleBundle {
  /** Hashed file name → contents (`main-1a2b3c4d.js`). */
  files: Record<string, ConsoleFile>;
  /** What index.html loads, in order. */
  scripts: string[];
  styles: string[];
}

const APP_ENTRY = join(import.meta.dir, "app", "main.tsx");

export function compressed(type: string, plain: Uint8Array): ConsoleFile {
  return {
    type,
    plain,
    gzip: Bun.gzipSync(plain as Uint8Array<ArrayBuffer>, { level: 9 }),
    br: new Uint8Array(brotliCompressSync(plain, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } })),
  };
}

export async function bundleConsole(): Promise<ConsoleBundle> {
  const result = await Bun.build({
    entrypoints: [APP_ENTRY],
    target: "browser",
    minify: true,
    naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
  });
  if (!result.success) throw new Error(`console build failed: ${result.logs.map(String).join("\n")}`);
  const bundle: ConsoleBundle = { files: {}, scripts: [], styles: [] };
  for (const out of result.outputs) {
    const name = out.path.replace(/^.*\//, "");
    bundle.files[name] = compressed(out.type, new Uint8Array(await out.arrayBuffer()));
    if (out.kind === "entry-point") bundle.scripts.push(name);
    else if (name.endsWith(".css")) bundle.styles.push(name);
  }
  return bundle;
}

/** Gzipped bytes of the JavaScript the first page load fetches. */
export function firstLoadJsGzip(b: ConsoleBundle): number {
  return b.scripts.reduce((n, s) => n + b.files[s]!.gzip.length, 0);
}
