/**
 * docs/ledger-functions.sql is generated from the migrations (scripts/ledger-sql.ts): it must
 * match what replaying drizzle/ gives, and it must hold every gw_* function a migration makes.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { LEDGER_SQL_PATH, ledgerSql } from "../../scripts/ledger-sql";

const DRIZZLE = join(import.meta.dir, "../../drizzle");
let generated = "";
beforeAll(async () => {
  generated = await ledgerSql();
}, 60_000);

/** The first line where two texts part, for a failure message a reader can act on. */
function firstDifference(expected: string, actual: string): string {
  const want = expected.split("\n");
  const have = actual.split("\n");
  const line = want.findIndex((text, at) => text !== have[at]);
  const at = line === -1 ? want.length : line;
  return `line ${at + 1}: migrations give ${JSON.stringify(want[at] ?? "<end>")}, file has ${JSON.stringify(have[at] ?? "<end>")}`;
}

describe("docs/ledger-functions.sql", () => {
  test("matches the migrations", () => {
    const committed = readFileSync(LEDGER_SQL_PATH, "utf8");
    if (committed !== generated) {
      throw new Error(
        `docs/ledger-functions.sql is stale: run npm run docs:ledger-sql (${firstDifference(generated, committed)})`,
      );
    }
  });

  test("holds every gw_* function the migrations create", () => {
    const created = new Set<string>();
    for (const file of readdirSync(DRIZZLE).filter((name) => name.endsWith(".sql"))) {
      const text = readFileSync(join(DRIZZLE, file), "utf8");
      for (const match of text.matchAll(/create\s+(?:or\s+replace\s+)?function\s+(?:public\.)?(gw_\w+)/gi)) {
        created.add(match[1]!);
      }
    }
    const defined = [...generated.matchAll(/^CREATE OR REPLACE FUNCTION public\.(gw_\w+)\(/gm)].map(
      (match) => match[1]!,
    );
    expect(created.size).toBeGreaterThan(0);
    expect([...new Set(defined)].sort()).toEqual([...created].sort());
  });

  test("lists the functions sorted by name and the ledger's tables", () => {
    const names = [...generated.matchAll(/^CREATE OR REPLACE FUNCTION public\.(\w+)\(/gm)].map((match) => match[1]!);
    expect(names).toEqual([...names].sort());
    for (const table of ["users", "holds", "ledger_entries", "key_monthly", "usage_events"]) {
      expect(generated).toContain(`CREATE TABLE public.${table} (`);
    }
  });
});
