/**
 * A new PGlite data directory is unpacked from a shipped initdb result instead of running
 * PGlite's initdb. That initdb starts a second PostgreSQL instance next to the gateway's, keeps
 * a copy of its 128 MB heap and passes the result through an in-memory tar: the first start
 * peaks above 900 MB for it, a restart at 230 MB. Unpacked, a first start is a restart.
 *
 * The template is only valid for the PGlite build that made it (the catalog version must
 * match), so it carries a digest of that build's files; after a PGlite upgrade that has not
 * regenerated it (`bun .ci/pglite-template.ts`), PGlite's own initdb makes the directory.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import templateTar from "./pglite-template.tar.gz" with { type: "file" };
import template from "./pglite-template.json" with { type: "json" };
import { pgliteFiles } from "./pglite-assets";
import { untar } from "./tar";

/** SHA-256 over PGlite's WebAssembly and data bundle: what the template must match. */
export async function pgliteBuildDigest(): Promise<string> {
  const h = new Bun.CryptoHasher("sha256");
  for (const f of pgliteFiles) h.update(await Bun.file(f).bytes());
  return h.digest("hex");
}

export const templateDigest: string = template.pglite_build_sha256;

let fits: Promise<boolean> | null = null;
/** Whether the shipped template was made by this PGlite build (checked once per process). */
function templateFits(): Promise<boolean> {
  return (fits ??= pgliteBuildDigest().then((d) => d === templateDigest));
}

/** The template as a dump PGlite loads itself (an in-memory database starts from it). */
export async function templateDump(): Promise<Blob | undefined> {
  return (await templateFits()) ? Bun.file(templateTar, { type: "application/gzip" }) : undefined;
}

/**
 * Makes `pgdir` from the template when it does not exist yet (or is empty). True when it did;
 * false when the directory exists or the template does not fit this PGlite build.
 */
export async function seedFromTemplate(pgdir: string): Promise<boolean> {
  if (existsSync(pgdir) && readdirSync(pgdir).length > 0) return false;
  if (!(await templateFits())) return false;
  // Unpacked beside it and renamed into place: a start killed halfway leaves no half directory.
  // What such a start left is removed (the caller holds the data directory's lock).
  const parent = dirname(pgdir);
  const prefix = `${basename(pgdir)}.unpacking-`;
  for (const d of readdirSync(parent)) if (d.startsWith(prefix)) rmSync(join(parent, d), { recursive: true, force: true });
  const tmp = join(parent, `${prefix}${process.pid}`);
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  try {
    untar(Bun.gunzipSync(await Bun.file(templateTar).bytes()), tmp);
    rmSync(pgdir, { recursive: true, force: true });
    renameSync(tmp, pgdir);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  return true;
}
