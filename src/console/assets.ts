/**
 * Where the served console comes from: in the single binary, the bundle `npm run build` wrote
 * to dist/console/bundle.json, embedded by `--asset ./dist/console` as `console/bundle.json`
 * (the folder's last name is kept); from source (`npm start`, tests),
 * Bun.build in memory at the first request for a console page, once per process.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { bundleConsole, type ConsoleBundle, type ConsoleFile } from "./bundle";

/** The embedded folder, as `--asset` names it inside the binary. */
const EMBEDDED_DIR = "console";
export const EMBEDDED_FILE = "bundle.json";

type Variant = "plain" | "gzip" | "br";
const VARIANTS: Variant[] = ["plain", "gzip", "br"];

export function serializeBundle(b: ConsoleBundle): string {
  const files = Object.fromEntries(
    Object.entries(b.files).map(([name, f]) => [
      name,
      { type: f.type, ...Object.fromEntries(VARIANTS.map((v) => [v, Buffer.from(f[v]).toString("base64")])) },
    ]),
  );
  return JSON.stringify({ scripts: b.scripts, styles: b.styles, files });
}

export function parseBundle(text: string): ConsoleBundle {
  const raw = JSON.parse(text) as {
    scripts: string[];
    styles: string[];
    files: Record<string, Record<string, string>>;
  };
  const files: Record<string, ConsoleFile> = {};
  for (const [name, f] of Object.entries(raw.files)) {
    const bytes = (v: Variant) => new Uint8Array(Buffer.from(f[v]!, "base64"));
    files[name] = { type: f.type!, plain: bytes("plain"), gzip: bytes("gzip"), br: bytes("br") };
  }
  return { scripts: raw.scripts, styles: raw.styles, files };
}

let loading: Promise<ConsoleBundle> | null = null;

export function consoleBundle(): Promise<ConsoleBundle> {
  loading ??= (async () => {
    const embedded = join(import.meta.dir, EMBEDDED_DIR, EMBEDDED_FILE);
    if (Bun.isStandaloneExecutable && existsSync(embedded)) return parseBundle(readFileSync(embedded, "utf8"));
    return bundleConsole();
  })();
  // A failed build is tried again at the next request rather than cached.
  loading.catch(() => (loading = null));
  return loading;
}
