/**
 * Unpacks a ustar archive of plain files and directories (what PGlite's dumpDataDir writes)
 * into a directory. Anything else (links, devices, paths leaving the directory) is refused.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, normalize, sep } from "node:path";

const BLOCK = 512;

function field(h: Uint8Array, at: number, len: number): string {
  const s = new TextDecoder().decode(h.subarray(at, at + len));
  const nul = s.indexOf("\0");
  return nul < 0 ? s : s.slice(0, nul);
}

function octal(h: Uint8Array, at: number, len: number): number {
  const s = field(h, at, len).trim();
  return s ? parseInt(s, 8) : 0;
}

export function untar(tar: Uint8Array, into: string): void {
  for (let at = 0; at + BLOCK <= tar.length; ) {
    const h = tar.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) break; // end of archive
    const prefix = field(h, 345, 155);
    const name = (prefix ? `${prefix}/` : "") + field(h, 0, 100);
    const size = octal(h, 124, 12);
    const mode = octal(h, 100, 8) & 0o777;
    const type = String.fromCharCode(h[156]!);
    const rel = normalize(name.replace(/^\/+/, ""));
    if (rel === ".." || rel.startsWith(`..${sep}`)) throw new Error(`tar entry outside the target: ${name}`);
    const path = join(into, rel);
    at += BLOCK;
    if (type === "5") mkdirSync(path, { recursive: true, mode: mode || 0o700 });
    else if (type === "0" || type === "\0") {
      mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
      writeFileSync(path, tar.subarray(at, at + size), { mode: mode || 0o600 });
      at += Math.ceil(size / BLOCK) * BLOCK;
    } else throw new Error(`unsupported tar entry type ${JSON.stringify(type)} for ${name}`);
  }
}
