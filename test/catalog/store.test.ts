import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CatalogStore, SHIPPED_CATALOG_PATH } from "../../src/config/catalog-store";
import { formatHashFile } from "../../src/core/catalog/verify";
import { GatewayError } from "../../src/core/errors";
import { model, mutated, shippedText } from "./helpers";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "catalog-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes a catalog and (unless told otherwise) its matching hash file; returns the catalog path. */
function writeCatalog(name: string, text: string, hash: string | null = formatHashFile(text)): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, text);
  if (hash !== null) writeFileSync(join(dir, `${name}.sha256`), hash);
  return path;
}

describe("CatalogStore", () => {
  test("loads the shipped catalog by default", () => {
    const store = new CatalogStore({ env: {} });
    expect(store.lastErrors()).toEqual([]);
    expect(store.path).toBe(SHIPPED_CATALOG_PATH);
    expect(store.current().modelsById["gpt-4o-mini"]).toBeDefined();
  });

  test("CATALOG_PATH names another file; its hash file sits next to it", () => {
    const path = writeCatalog("env", shippedText());
    const store = new CatalogStore({ env: { CATALOG_PATH: path } });
    expect(store.hashPath).toBe(join(dir, "env.sha256"));
    expect(store.lastErrors()).toEqual([]);
    expect(store.current().hash).toHaveLength(64);
  });

  test("no verified snapshot: current() throws catalog_snapshot_stale (503)", () => {
    const store = new CatalogStore({ path: join(dir, "missing.json") });
    expect(store.peek()).toBeNull();
    expect(store.lastErrors()[0]!.kind).toBe("io");
    let caught: unknown;
    try {
      store.current();
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(GatewayError);
    expect((caught as GatewayError).errorCode).toBe("catalog_snapshot_stale");
    expect((caught as GatewayError).status).toBe(503);
  });

  test("a missing or wrong hash file fails verification", () => {
    const noHash = writeCatalog("nohash", shippedText(), null);
    const r1 = new CatalogStore({ path: noHash });
    expect(r1.peek()).toBeNull();
    expect(r1.lastErrors().map((e) => e.kind)).toEqual(["hash"]);

    const wrong = writeCatalog("wrong", shippedText(), formatHashFile("something else"));
    const r2 = new CatalogStore({ path: wrong });
    expect(r2.peek()).toBeNull();
    expect(r2.lastErrors().map((e) => e.kind)).toEqual(["hash"]);
  });

  test("a failed reload keeps the last good snapshot", () => {
    const path = writeCatalog("reload", shippedText());
    const store = new CatalogStore({ path });
    const good = store.current();

    // Edited without rehashing: hash mismatch.
    writeFileSync(
      path,
      mutated((d) => (model(d, "gpt-4o").name = "GPT-4o (edited)")),
    );
    const r1 = store.reload();
    expect(r1.ok).toBe(false);
    expect(r1.errors.map((e) => e.kind)).toEqual(["hash"]);
    expect(store.current()).toBe(good);

    // Rehashed but broken: dangling reference.
    writeCatalog(
      "reload",
      mutated((d) => model(d, "perfect").candidates.push("nope")),
    );
    const r2 = store.reload();
    expect(r2.ok).toBe(false);
    expect(r2.errors.map((e) => e.kind)).toEqual(["reference"]);
    expect(store.current()).toBe(good);
    expect(store.describeErrors()).toContain('unknown model "nope"');

    // A good edit replaces the snapshot.
    const edited = mutated((d) => (model(d, "gpt-4o").name = "GPT-4o (edited)"));
    writeCatalog("reload", edited);
    const r3 = store.reload();
    expect(r3).toEqual({ ok: true, errors: [] });
    expect(store.current()).not.toBe(good);
    expect(store.current().modelsById["gpt-4o"]!.name).toBe("GPT-4o (edited)");
    expect(store.lastErrors()).toEqual([]);
  });

  test("an explicit expectedHash overrides the hash file", () => {
    const path = writeCatalog("explicit", shippedText(), null);
    const store = new CatalogStore({ path, expectedHash: formatHashFile(shippedText()), now: () => new Date(0) });
    expect(store.current().loadedAt).toBe("1970-01-01T00:00:00.000Z");
  });
});
