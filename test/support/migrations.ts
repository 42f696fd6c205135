/** The committed migrations cut short, for tests of what one migration does to older data. */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrationsFolder } from "../../src/db/migrate";

const dirs: string[] = [];

/** A folder holding the committed migrations up to (without) `tag`. */
export function migrationsBefore(tag: string): string {
  const dir = mkdtempSync(join(tmpdir(), "mig-"));
  dirs.push(dir);
  cpSync(migrationsFolder(), dir, { recursive: true });
  const path = join(dir, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(path, "utf8"));
  const at = journal.entries.findIndex((e: { tag: string }) => e.tag === tag);
  if (at < 0) throw new Error(`no migration ${tag}`);
  journal.entries = journal.entries.slice(0, at);
  writeFileSync(path, JSON.stringify(journal));
  return dir;
}

/** Removes the folders `migrationsBefore` made (call from afterAll). */
export function removeMigrationCopies(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}
