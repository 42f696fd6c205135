import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CatalogStore } from "../../src/config/catalog-store";
import { model, mutated, shippedText } from "./helpers";

const dir = mkdtempSync(join(tmpdir(), "rehash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rehash = (...args: string[]) =>
  Bun.spawnSync([process.execPath, join(import.meta.dir, "../../scripts/catalog-rehash.ts"), ...args], {
    stdout: "pipe",
    stderr: "pipe",
  });

test("rehash writes the hash of a valid catalog, refuses a broken one, and --check compares", () => {
  const path = join(dir, "catalog.json");
  const hashPath = join(dir, "catalog.sha256");
  writeFileSync(
    path,
    mutated((d) => (model(d, "gpt-4o").name = "GPT-4o renamed")),
  );

  expect(new CatalogStore({ path }).peek()).toBeNull(); // no hash file yet
  expect(rehash(path).exitCode).toBe(0);
  expect(readFileSync(hashPath, "utf8")).toMatch(/^[0-9a-f]{64}  catalog\.json\n$/);
  expect(new CatalogStore({ path }).current().modelsById["gpt-4o"]!.name).toBe("GPT-4o renamed");
  expect(rehash("--check", path).exitCode).toBe(0);

  const before = readFileSync(hashPath, "utf8");
  writeFileSync(
    path,
    mutated((d) => model(d, "perfect").candidates.push("nope")),
  );
  expect(rehash("--check", path).exitCode).toBe(1);
  const refused = rehash(path);
  expect(refused.exitCode).toBe(1);
  expect(refused.stderr.toString()).toContain('unknown model "nope"');
  expect(readFileSync(hashPath, "utf8")).toBe(before);
});

test("the shipped hash is current", () => {
  expect(rehash("--check").exitCode).toBe(0);
  expect(shippedText().length).toBeGreaterThan(0);
});
