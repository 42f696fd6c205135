/**
 * The public statistics' privacy threshold counts distinct accounts, not keys: keys are free
 * to mint, so one account with many keys must not be enough to name its model or app. Real
 * chat calls over HTTP, the gateway's own rollup job, on PostgreSQL and PGlite.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate as migratePg } from "drizzle-orm/postgres-js/migrator";
import { migrate as migrateLite } from "drizzle-orm/pglite/migrator";
import { dbKinds, freshPostgres, startTestGateway, type TestGateway } from "../harness";
import { loadConfig } from "../../src/config";
import { openDatabase, type Database } from "../../src/db/client";
import { migrationsFolder, runMigrations } from "../../src/db/migrate";
import { statsSettings } from "../../src/jobs/stats-rollup";
import { chat, fastUser, user } from "../support/chat";

const MODEL = "gpt-4o-mini";
const THRESHOLD = 3;

describe("privacy threshold settings", () => {
  test("STATS_MIN_DISTINCT_ACCOUNTS sets it; the old STATS_MIN_DISTINCT_KEYS still does when the new one is unset", () => {
    expect(statsSettings(loadConfig({ DEMO_MODE: "false" })).minAccounts).toBe(3);
    expect(statsSettings(loadConfig({ DEMO_MODE: "true" })).minAccounts).toBe(1);
    expect(statsSettings(loadConfig({ DEMO_MODE: "false", STATS_MIN_DISTINCT_ACCOUNTS: "7" })).minAccounts).toBe(7);
    expect(statsSettings(loadConfig({ DEMO_MODE: "false", STATS_MIN_DISTINCT_KEYS: "5" })).minAccounts).toBe(5);
    expect(
      statsSettings(loadConfig({ DEMO_MODE: "false", STATS_MIN_DISTINCT_KEYS: "5", STATS_MIN_DISTINCT_ACCOUNTS: "2" }))
        .minAccounts,
    ).toBe(2);
  });
});

for (const kind of await dbKinds()) {
  describe(`public stats privacy threshold on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({
        db: kind,
        // Counting only: exact figures, and accounts count from their first call (sybils.test.ts has the defaults).
        env: {
          STATS_MIN_DISTINCT_ACCOUNTS: String(THRESHOLD),
          STATS_MIN_ACCOUNT_AGE_HOURS: "0",
          STATS_NOISE: "off",
          STATS_ROLLUP_INTERVAL_MS: "100",
        },
      });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    /** Waits until the rollups hold `calls` calls in the daily period. */
    async function rolledUp(calls: number): Promise<void> {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const r = await g.call("GET", "/v1/stats/models");
        if (r.body.total_calls === calls) return;
        if (Date.now() > deadline) throw new Error(`rollups stuck at ${r.body.total_calls} calls, want ${calls}`);
        await Bun.sleep(100);
      }
    }

    const named = async () => {
      const models = (await g.call("GET", "/v1/stats/models")).body.top_models.map((m: any) => m.model);
      const board = (await g.call("GET", "/v1/stats/rankings?period=daily")).body.leaderboard.map((m: any) => m.model);
      const series = (await g.call("GET", "/v1/stats/usage-timeseries")).body.series;
      const apps = (await g.call("GET", "/v1/stats/apps?period=daily")).body.apps.map((a: any) => a.app);
      return { models, board, series, apps };
    };

    test("one account with many keys stays hidden; the same traffic from enough accounts is named", async () => {
      const app = `privacy-${crypto.randomUUID().slice(0, 8)}`;
      const call = async (key: string) => {
        const r = await chat(
          g,
          key,
          { model: MODEL, messages: user("who is counted"), max_tokens: 8 },
          { "X-Title": app },
        );
        expect(r.status).toBe(200);
      };

      // One account, more keys than the threshold, one call each.
      const solo = await fastUser(g, { creditKrw: 1000 });
      for (let i = 0; i < THRESHOLD + 1; i++) await call((await g.newKey(solo, { name: `k${i}` })).key);
      await rolledUp(THRESHOLD + 1);
      const hidden = await named();
      expect(hidden.models).not.toContain(MODEL);
      expect(hidden.board).not.toContain(MODEL);
      expect(hidden.series).not.toContain(MODEL);
      expect(hidden.series).toContain("Others"); // the tokens still count, unnamed
      expect(hidden.apps).not.toContain(app);

      // Two more accounts bring it to the threshold: now it is named.
      for (let i = 0; i < THRESHOLD - 1; i++) {
        const other = await fastUser(g, { creditKrw: 1000 });
        await call((await g.newKey(other)).key);
      }
      await rolledUp(THRESHOLD + 1 + THRESHOLD - 1);
      const shown = await named();
      expect(shown.models).toEqual([MODEL]);
      expect(shown.board).toEqual([MODEL]);
      expect(shown.series).toEqual([MODEL]);
      expect(shown.apps).toEqual([app]);
      expect((await g.call("GET", "/v1/stats/models")).body.top_models).toEqual([
        { model: MODEL, calls: 2 * THRESHOLD },
      ]);
    }, 60_000);
  });
}

/** The migrations before 0014 (a copy of drizzle/ whose journal stops short of it). */
function migrationsBefore0014(): { folder: string; drop: () => void } {
  const folder = mkdtempSync(join(tmpdir(), "gw-mig-"));
  cpSync(migrationsFolder(), folder, { recursive: true });
  const journal = JSON.parse(readFileSync(join(folder, "meta/_journal.json"), "utf8"));
  journal.entries = journal.entries.filter((e: { tag: string }) => e.tag < "0014");
  writeFileSync(join(folder, "meta/_journal.json"), JSON.stringify(journal));
  return { folder, drop: () => rmSync(folder, { recursive: true, force: true }) };
}

for (const kind of await dbKinds()) {
  test(`migration 0014 on ${kind}: the key sets become account sets through each key's owner`, async () => {
    const fresh = kind === "pg" ? await freshPostgres() : null;
    const db: Database = await openDatabase(fresh ? { url: fresh.url, max: 2 } : {});
    const old = migrationsBefore0014();
    try {
      if (db.kind === "postgres") await migratePg(db.orm as never, { migrationsFolder: old.folder });
      else await migrateLite(db.orm as never, { migrationsFolder: old.folder });
      const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
      for (const u of [a, b])
        await db.query("insert into users (id, email, password_hash) values ($1, $2, 'x')", [u, `${u}@test.example`]);
      const keys = [a, a, a, b].map((u) => ({ id: crypto.randomUUID(), u }));
      for (const k of keys)
        await db.query("insert into api_keys (id, user_id, key_hash, key_prefix) values ($1, $2, $3, 'sk-gw-x')", [
          k.id,
          k.u,
          k.id,
        ]);
      const bucket = "2026-01-05T10:00:00Z";
      // Three keys of one account used model-a (a full key set at 3); keys of both used app-b.
      for (const k of keys.slice(0, 3))
        await db.query("insert into stats_hourly_keys values ($1, 'model', 'model-a', $2)", [bucket, k.id]);
      for (const k of keys.slice(2))
        await db.query("insert into stats_daily_keys values ($1, 'app', 'app-b', $2)", ["2026-01-05T00:00:00Z", k.id]);

      await runMigrations(db);
      const rows = async (t: string) =>
        (await db.query<{ r: string }>(`select dim || '|' || name || '|' || account_id as r from ${t} order by 1`)).map(
          (x) => x.r,
        );
      expect(await rows("stats_hourly_accounts")).toEqual([`model|model-a|${a}`]);
      expect(await rows("stats_daily_accounts")).toEqual([`app|app-b|${a}`, `app|app-b|${b}`].sort());
      const left = await db.query(
        "select 1 from information_schema.tables where table_name in ('stats_hourly_keys', 'stats_daily_keys')",
      );
      expect(left).toEqual([]);
    } finally {
      old.drop();
      await db.close();
      await fresh?.drop();
    }
  }, 60_000);
}
