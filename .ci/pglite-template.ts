/**
 * Regenerates src/db/pglite-template.tar.gz, the initdb result new PGlite data directories are
 * unpacked from (see src/db/pglite-template.ts). Run after every PGlite upgrade:
 *   ./node_modules/.bin/bun .ci/pglite-template.ts
 * It runs PGlite's own initdb (about 900 MB of memory for a few seconds).
 */
import { PGlite } from "@electric-sql/pglite";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pgliteMemory } from "../src/db/pglite-memory";
import { pgliteBuildDigest } from "../src/db/pglite-template";

const dir = join(import.meta.dir, "..", "src", "db");
const pg = await PGlite.create("memory://", pgliteMemory);
// A checkpoint first: the first start then replays no WAL.
await pg.query("checkpoint");
const tar = new Uint8Array(await (await pg.dumpDataDir("none")).arrayBuffer());
await pg.close();
writeFileSync(join(dir, "pglite-template.tar.gz"), Bun.gzipSync(tar, { level: 9 }));
const digest = await pgliteBuildDigest();
writeFileSync(join(dir, "pglite-template.json"), JSON.stringify({ pglite_build_sha256: digest }, null, 2) + "\n");
console.log(
  `wrote src/db/pglite-template.tar.gz (${tar.length} bytes unpacked) for PGlite build ${digest.slice(0, 12)}`,
);
