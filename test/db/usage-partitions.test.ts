/**
 * Usage events by month (drizzle/0027_usage_events_by_month, docs/scaling.md "Usage events by
 * month"): the migration moves existing events into monthly partitions with their ids; the
 * upkeep makes the months ahead, moves what reached the DEFAULT partition into a month made
 * later, and drops the months past retention only once the stats rollup has folded them. On
 * PostgreSQL and PGlite, through the SQL functions every instance runs.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { migrate } from "drizzle-orm/pglite/migrator";
import { openDatabase, type Database } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { UsagePartitions } from "../../src/db/repos/usage-partitions";
import { dbKinds, freshPostgres, type DbKind } from "../harness";
import { migrationsBefore, removeMigrationCopies } from "../support/migrations";

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0)) await c();
  removeMigrationCopies();
});

async function migrated(kind: DbKind): Promise<Database> {
  let db: Database;
  if (kind === "pg") {
    const fresh = await freshPostgres();
    db = await openDatabase({ url: fresh.url });
    cleanups.push(async () => {
      await db.close();
      await fresh.drop();
    });
  } else {
    db = await openDatabase({});
    cleanups.push(() => db.close());
  }
  await runMigrations(db);
  return db;
}

/** The UTC month `delta` months from now, as `YYYY-MM`. */
function month(delta: number): string {
  const d = new Date();
  const m = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + delta, 1));
  return m.toISOString().slice(0, 7);
}
const partitionOf = (m: string) => `usage_events_y${m.slice(0, 4)}m${m.slice(5, 7)}`;
const midMonth = (m: string) => `${m}-15T12:00:00Z`;

async function insertEvent(db: Database, at: string): Promise<number> {
  const [r] = await db.query<{ id: string }>(
    `insert into usage_events (request_id, user_id, model, status, cost_micro, created_at)
     values (gen_random_uuid(), gen_random_uuid(), 'gpt-5-mini', 200, 7, $1::timestamptz) returning id`,
    [at],
  );
  return Number(r!.id);
}

/** The partition each event id lives in. */
async function homes(db: Database): Promise<Map<number, string>> {
  const rows = await db.query<{ id: string; part: string }>(
    "select id, tableoid::regclass::text as part from usage_events order by id",
  );
  return new Map(rows.map((r) => [Number(r.id), r.part]));
}

async function partitions(db: Database): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'usage_events'::regclass order by 1`,
  );
  return rows.map((r) => r.name);
}

describe("migration 0027_usage_events_by_month", () => {
  test("existing events keep their ids and land in their months; new ids follow them", async () => {
    const db = await openDatabase({});
    cleanups.push(() => db.close());
    await migrate(db.orm as never, { migrationsFolder: migrationsBefore("0027_usage_events_by_month") });
    const old = ["2025-03", month(-1), month(0)];
    const ids: number[] = [];
    for (const m of old) ids.push(await insertEvent(db, midMonth(m)));
    await runMigrations(db);

    const where = await homes(db);
    expect(old.map((m, i) => where.get(ids[i]!))).toEqual(old.map(partitionOf));
    expect(await partitions(db)).toEqual(
      expect.arrayContaining([...old, month(1), month(2)].map(partitionOf).concat("usage_events_default")),
    );
    const next = await insertEvent(db, new Date().toISOString());
    expect(next).toBeGreaterThan(Math.max(...ids));
    const [{ n }] = (await db.query<{ n: number }>("select count(*)::int as n from usage_events")) as [{ n: number }];
    expect(n).toBe(4);
  });
});

for (const kind of await dbKinds()) {
  describe(`usage partitions upkeep (${kind})`, () => {
    test("the months ahead exist; a month made later takes its events from DEFAULT", async () => {
      const db = await migrated(kind);
      expect(await partitions(db)).toEqual(
        expect.arrayContaining([month(0), month(1), month(2)].map(partitionOf).concat("usage_events_default")),
      );
      const far = month(6);
      const id = await insertEvent(db, midMonth(far));
      expect((await homes(db)).get(id)).toBe("usage_events_default");
      await db.query("select gw_usage_partition($1::timestamptz)", [midMonth(far)]);
      expect((await homes(db)).get(id)).toBe(partitionOf(far));
      // A second instance doing the same finds it made.
      const [again] = await db.query<{ made: boolean }>("select gw_usage_partition($1::timestamptz) as made", [
        midMonth(far),
      ]);
      expect(again!.made).toBe(false);
    });

    test("retention drops whole months the rollup has folded, never the newer ones", async () => {
      const db = await migrated(kind);
      const months = [month(-5), month(-4), month(-3), month(-2)];
      for (const m of months) await db.query("select gw_usage_partition($1::timestamptz)", [midMonth(m)]);
      const ids = new Map<string, number>();
      for (const m of months) ids.set(m, await insertEvent(db, midMonth(m)));
      const recent = await insertEvent(db, new Date().toISOString());
      const veryOld = await insertEvent(db, "2020-01-10T00:00:00Z"); // in DEFAULT: no partition that far back

      // The rollup has folded only up to month(-5)'s event: month(-4) must wait for it.
      await db.query(
        "insert into stats_rollup_state (id, watermark) values (1, $1) on conflict (id) do update set watermark = excluded.watermark",
        [ids.get(month(-5))],
      );
      const parts = new UsagePartitions(db, 2);
      const first = await parts.upkeep();
      expect(first.dropped).toEqual([partitionOf(month(-5))]);
      expect(first.waiting_for_rollup).toEqual([partitionOf(month(-4)), partitionOf(month(-3))]);

      await db.query("update stats_rollup_state set watermark = $1", [Math.max(recent, veryOld)]);
      const second = await parts.upkeep();
      expect(second.dropped).toEqual([partitionOf(month(-4)), partitionOf(month(-3))]);
      const left = await homes(db);
      expect([...left.keys()].sort((a, b) => a - b)).toEqual([ids.get(month(-2))!, recent]);
      expect(await partitions(db)).toContain(partitionOf(month(-2)));
    });

    test("retention 0 keeps every month", async () => {
      const db = await migrated(kind);
      await db.query("select gw_usage_partition($1::timestamptz)", [midMonth(month(-30))]);
      const id = await insertEvent(db, midMonth(month(-30)));
      const r = await new UsagePartitions(db, 0).upkeep();
      expect(r.dropped).toEqual([]);
      expect((await homes(db)).get(id)).toBe(partitionOf(month(-30)));
    });
  });
}
