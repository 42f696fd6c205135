/**
 * New PGlite data directories come from the shipped initdb result (src/db/pglite-template.ts):
 * it must fit the installed PGlite, open as a working, migratable database, persist across a
 * reopen, never overwrite a directory with something in it, and the unpacker must refuse
 * entries that leave the target or are not plain files and directories.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { pgliteBuildDigest, seedFromTemplate, templateDigest } from "../../src/db/pglite-template";
import { untar } from "../../src/db/tar";

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "gw-tpl-"));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** One ustar header block (plus content) for `name`. */
function entry(name: string, type: string, content = ""): Uint8Array {
  const h = new Uint8Array(512);
  const put = (at: number, s: string) => h.set(new TextEncoder().encode(s), at);
  put(0, name);
  put(100, "0000644\0");
  put(124, content.length.toString(8).padStart(11, "0") + "\0");
  put(156, type);
  put(257, "ustar\0");
  const body = new Uint8Array(Math.ceil(content.length / 512) * 512);
  body.set(new TextEncoder().encode(content));
  return new Uint8Array([...h, ...body]);
}
const archive = (...parts: Uint8Array[]) => new Uint8Array([...parts.flatMap((p) => [...p]), ...new Uint8Array(1024)]);

describe("PGlite data directory template", () => {
  test("fits the installed PGlite build (else run: bun .ci/pglite-template.ts)", async () => {
    expect(await pgliteBuildDigest()).toBe(templateDigest);
  });

  test("a fresh DATA_DIR is unpacked from it, migrates, runs with 16 MB of shared buffers and keeps its data", async () => {
    const dir = tmp();
    const db = await openDatabase({ dataDir: dir });
    expect(existsSync(join(dir, "pglite", "PG_VERSION"))).toBe(true);
    await runMigrations(db);
    expect(await db.query("show shared_buffers")).toEqual([{ shared_buffers: "16MB" }]);
    await db.query("create table kept (v text)");
    await db.query("insert into kept values ($1)", ["across a restart"]);
    await db.close();

    expect(await seedFromTemplate(join(dir, "pglite"))).toBe(false);
    const again = await openDatabase({ dataDir: dir });
    expect(await again.query("select v from kept")).toEqual([{ v: "across a restart" }]);
    const [{ n }] = await again.query<{ n: number }>("select count(*)::int as n from drizzle.__drizzle_migrations");
    expect(n).toBeGreaterThan(10);
    await again.close();
  }, 60_000);

  test("what an interrupted unpacking left is removed", async () => {
    const dir = tmp();
    mkdirSync(join(dir, "pglite.unpacking-999999", "base"), { recursive: true });
    expect(await seedFromTemplate(join(dir, "pglite"))).toBe(true);
    expect(existsSync(join(dir, "pglite.unpacking-999999"))).toBe(false);
    expect(existsSync(join(dir, "pglite", "PG_VERSION"))).toBe(true);
  });

  test("a directory that already holds something is left alone", async () => {
    const pgdir = join(tmp(), "pglite");
    mkdirSync(pgdir);
    writeFileSync(join(pgdir, "notes.txt"), "mine");
    expect(await seedFromTemplate(pgdir)).toBe(false);
    expect(readFileSync(join(pgdir, "notes.txt"), "utf8")).toBe("mine");
    expect(existsSync(join(pgdir, "PG_VERSION"))).toBe(false);
  });

  test("the unpacker writes files and directories and refuses escapes and links", () => {
    const into = tmp();
    untar(archive(entry("/base", "5"), entry("/base/1", "0", "x".repeat(600))), into);
    expect(readFileSync(join(into, "base", "1"), "utf8")).toBe("x".repeat(600));
    expect(() => untar(archive(entry("../outside", "0", "no")), tmp())).toThrow("outside the target");
    expect(() => untar(archive(entry("a/../../outside", "0", "no")), tmp())).toThrow("outside the target");
    expect(() => untar(archive(entry("link", "2")), tmp())).toThrow("unsupported tar entry");
  });
});
