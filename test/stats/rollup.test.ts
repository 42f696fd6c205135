/**
 * Rollup correctness: random traffic written straight into usage_events, folded by the
 * rollup use-case in small batches, compared with aggregates computed from the same events;
 * then the statistics use-cases over those rollups compared with the raw events, for fixed
 * windows. Late commits (holes), rolled-back ids and concurrent runners on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { RollupRepo } from "../../src/db/repos/rollups";
import {
  modelsStats,
  periodWindows,
  rankings,
  runRollup,
  seriesBuckets,
  usageTimeseries,
  type Period,
  type Window,
} from "../../src/core/stats";
import { startStatsRollup } from "../../src/jobs/stats-rollup";
import {
  appRows,
  dailyUsageRows,
  dayOf,
  expectedAppRows,
  expectedDailyUsage,
  expectedAccountSets,
  expectedModelRows,
  hourOf,
  insertEvents,
  accountRows,
  modelRows,
  randomEvents,
  rng,
  tokensOf,
  type Ev,
} from "./helpers";

const NOW = new Date("2026-03-04T10:30:00Z");
const DAY = 86_400_000;
const CAP = 3;

const inWindow = (e: Ev, w: Window) => e.at >= w.from && e.at < w.to;

async function expectRollupsMatch(g: TestGateway, events: Ev[]): Promise<void> {
  const db = g.gw.deps.db;
  expect(await modelRows(db, "stats_model_hourly")).toEqual(expectedModelRows(events, hourOf));
  expect(await modelRows(db, "stats_model_daily")).toEqual(expectedModelRows(events, dayOf));
  expect(await appRows(db, "stats_app_hourly")).toEqual(expectedAppRows(events, hourOf));
  expect(await appRows(db, "stats_app_daily")).toEqual(expectedAppRows(events, dayOf));
  expect(await dailyUsageRows(db)).toEqual(expectedDailyUsage(events));
  // Hourly account sets older than 32 days are pruned (once an hour, so some may come back from
  // later batches): compare the recent ones exactly, the older ones for consistency only.
  const recent = (k: string) => k >= new Date(NOW.getTime() - 32 * DAY).toISOString();
  for (const [table, bucketOf, exact] of [
    ["stats_hourly_accounts", hourOf, recent],
    ["stats_daily_accounts", dayOf, () => true],
  ] as const) {
    const want = expectedAccountSets(events, bucketOf);
    const got = await accountRows(db, table);
    expect([...got.keys()].filter(exact).sort()).toEqual([...want.keys()].filter(exact).sort());
    const wrong: string[] = [];
    for (const [k, have] of got) {
      const accounts = want.get(k);
      // Capped at CAP distinct accounts, each one an account that really used the name in that bucket.
      const size = Math.min(CAP, accounts?.size ?? 0);
      if (
        !accounts ||
        (exact(k) ? have.length !== size : have.length > size) ||
        new Set(have).size !== have.length ||
        have.some((id) => !accounts.has(id))
      )
        wrong.push(k);
    }
    expect(wrong).toEqual([]);
  }
}

function expectedCalls(events: Ev[], w: Window) {
  const m = new Map<string, number>();
  for (const e of events) if (inWindow(e, w)) m.set(e.model, (m.get(e.model) ?? 0) + 1);
  return m;
}

function expectedTokens(events: Ev[], w: Window) {
  const m = new Map<string, { tokens: number; calls: number; prov: Map<string, number> }>();
  for (const e of events) {
    if (!inWindow(e, w) || e.status >= 400) continue;
    const v = m.get(e.model) ?? { tokens: 0, calls: 0, prov: new Map() };
    v.tokens += tokensOf(e);
    v.calls += 1;
    if (e.provider) v.prov.set(e.provider, (v.prov.get(e.provider) ?? 0) + tokensOf(e));
    m.set(e.model, v);
  }
  return m;
}

for (const kind of await dbKinds()) {
  describe(`rollups on ${kind}`, () => {
    let g: TestGateway;
    let repo: RollupRepo;
    const r = rng(kind === "pg" ? 7 : 11);
    const users = Array.from({ length: 6 }, () => crypto.randomUUID());
    const keys = Array.from({ length: 9 }, () => crypto.randomUUID());
    const events: Ev[] = [];
    // PGlite (WASM) folds several times slower: less traffic there, the same shapes.
    const [N1, N2, LIMIT] = kind === "pg" ? [2500, 800, 300] : [900, 300, 200];

    beforeAll(async () => {
      g = await startTestGateway({ db: kind, env: { STATS_ROLLUP_INTERVAL_MS: "0" } });
      repo = new RollupRepo(g.gw.deps.db, { accountCap: CAP, now: () => NOW.getTime() });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("random traffic folded in small batches equals the aggregates of the raw events", async () => {
      const wave = randomEvents(N1, r, new Date(NOW.getTime() - 60 * DAY), NOW, { users, keys });
      events.push(...wave);
      await insertEvents(g.gw.deps.db, wave);
      const v0 = await repo.version();
      const run = await runRollup(repo, { limit: LIMIT, wait: true });
      expect(run.folded).toBe(N1);
      expect(run.batches).toBeGreaterThanOrEqual(Math.ceil(N1 / LIMIT));
      expect(await repo.version()).toBeGreaterThan(v0);
      await expectRollupsMatch(g, events);

      // A second wave lands in the same buckets: counters add up, nothing is folded twice.
      const more = randomEvents(N2, r, new Date(NOW.getTime() - 60 * DAY), NOW, { users, keys });
      events.push(...more);
      await insertEvents(g.gw.deps.db, more);
      expect((await runRollup(repo, { limit: 5000, wait: true })).folded).toBe(N2);
      await expectRollupsMatch(g, events);

      // Nothing new: nothing folded, the version stays.
      const v1 = await repo.version();
      expect((await runRollup(repo, { limit: 5000, wait: false })).folded).toBe(0);
      expect(await repo.version()).toBe(v1);
    }, 30_000);

    test("the statistics read from rollups equal the same figures computed from raw events", async () => {
      const c = { reader: repo, minAccounts: 1, now: NOW };
      for (const period of ["daily", "weekly", "monthly"] as Period[]) {
        const { current, previous } = periodWindows(period, NOW);
        const calls = expectedCalls(events, current);
        const m = await modelsStats(c, period);
        expect(m.total_calls).toBe([...calls.values()].reduce((a, b) => a + b, 0));
        expect(m.top_models).toEqual(
          [...calls].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([model, n]) => ({ model, calls: n })),
        );

        const cur = expectedTokens(events, current);
        const prev = expectedTokens(events, previous);
        const rk = await rankings(c, period);
        expect(rk.total_tokens).toBe([...cur.values()].reduce((a, v) => a + v.tokens, 0));
        expect(rk.leaderboard.length).toBe([...cur.values()].filter((v) => v.tokens > 0).length);
        for (const row of rk.leaderboard) {
          const want = cur.get(row.model)!;
          expect(row.tokens).toBe(want.tokens);
          expect(row.calls).toBe(want.calls);
          const top = Math.max(...want.prov.values());
          expect(want.prov.get(row.provider!)).toBe(top);
          const before = prev.get(row.model)?.tokens;
          expect(row.trend_pct).toBe(before ? Math.round(((want.tokens - before) / before) * 1000) / 10 : null);
        }
        expect(rk.leaderboard.map((x) => x.tokens)).toEqual(
          [...rk.leaderboard.map((x) => x.tokens)].sort((a, b) => b - a),
        );
        const shares = rk.market_share.reduce((a, s) => a + s.share_pct, 0);
        expect(Math.abs(shares - 100)).toBeLessThan(0.05);
      }

      for (const [range, granularity] of [
        ["30d", "day"],
        ["24w", "week"],
        ["12w", "day"],
      ] as const) {
        const ts = await usageTimeseries(c, { range, granularity, top: 3 });
        const { buckets, window } = seriesBuckets(range, granularity, NOW);
        expect(ts.points.map((p) => p.t)).toEqual(buckets.map((b) => b.toISOString().slice(0, 10)));
        const text = events.filter((e) => inWindow(e, window) && e.status < 400 && e.modality === "text");
        expect(ts.total_tokens).toBe(text.reduce((a, e) => a + tokensOf(e), 0));
        expect(ts.series.length).toBe(4);
        expect(ts.series[3]).toBe("Others");
        for (const [i, p] of ts.points.entries()) {
          const from = buckets[i]!.getTime();
          const to = buckets[i + 1]?.getTime() ?? window.to.getTime();
          const here = text.filter((e) => e.at.getTime() >= from && e.at.getTime() < to);
          expect(p.total).toBe(here.reduce((a, e) => a + tokensOf(e), 0));
          expect(p.total).toBe(Object.values(p.tokens).reduce((a, b) => a + b, 0));
          for (const s of ts.series.slice(0, 3))
            expect(p.tokens[s]).toBe(here.filter((e) => e.model === s).reduce((a, e) => a + tokensOf(e), 0));
        }
      }
    });

    test("an id burnt by a rolled-back insert is a hole until it expires", async () => {
      const db = g.gw.deps.db;
      await db.orm
        .transaction(async (tx) => {
          await tx.execute(
            sql`insert into usage_events (request_id, user_id, model, status) values (gen_random_uuid(), gen_random_uuid(), 'rolled-back', 200)`,
          );
          throw new Error("roll back");
        })
        .catch(() => {});
      const later = randomEvents(5, r, new Date(NOW.getTime() - DAY), NOW, { users, keys });
      events.push(...later);
      await insertEvents(db, later);
      let clock = NOW.getTime();
      const timed = new RollupRepo(db, { accountCap: CAP, now: () => clock });
      const first = await timed.runBatch({ limit: 100, wait: true });
      expect(first.folded).toBe(5);
      expect(first.holes).toBe(1);
      clock += 11 * 60_000;
      const second = await timed.runBatch({ limit: 100, wait: true });
      expect(second.folded).toBe(0);
      expect(second.holes).toBe(0);
      await expectRollupsMatch(g, events);
    }, 30_000);

    if (kind === "pg") {
      test("an event that commits after a later id was folded is picked up once (hole)", async () => {
        const db = g.gw.deps.db;
        const [early] = randomEvents(1, r, new Date(NOW.getTime() - DAY), NOW, { users, keys });
        const lateOnes = randomEvents(3, r, new Date(NOW.getTime() - DAY), NOW, { users, keys });
        let release = () => {};
        const gate = new Promise<void>((res) => (release = res));
        let inserted = () => {};
        const didInsert = new Promise<void>((res) => (inserted = res));
        // Takes its id now, commits only when released.
        const open = db.orm.transaction(async (tx) => {
          const e = early!;
          await tx.execute(sql`insert into usage_events (request_id, user_id, key_id, model, provider, maker, modality, app, status, prompt_tokens, completion_tokens, cost_micro, cached, created_at)
            values (gen_random_uuid(), ${e.user}, ${e.key}, ${e.model}, ${e.provider}, ${e.maker}, ${e.modality}, ${e.app}, ${e.status}, ${e.prompt}, ${e.completion},
              ${e.costMicro}, ${e.cached}, ${e.at.toISOString()})`);
          inserted();
          await gate;
        });
        await didInsert;
        await insertEvents(db, lateOnes);
        events.push(...lateOnes);
        const a = await repo.runBatch({ limit: 100, wait: true });
        expect(a.folded).toBe(3);
        expect(a.holes).toBe(1);
        release();
        await open;
        events.push(early!);
        const b = await repo.runBatch({ limit: 100, wait: true });
        expect(b.folded).toBe(1);
        expect(b.holes).toBe(0);
        await expectRollupsMatch(g, events);
      });

      test("concurrent runners never fold an event twice", async () => {
        const db = g.gw.deps.db;
        const wave = randomEvents(1500, r, new Date(NOW.getTime() - 10 * DAY), NOW, { users, keys });
        events.push(...wave);
        await insertEvents(db, wave);
        const other = new RollupRepo(db, { accountCap: CAP, now: () => NOW.getTime() });
        const runs = await Promise.all([
          runRollup(repo, { limit: 100, wait: true }),
          runRollup(other, { limit: 100, wait: true }),
          runRollup(other, { limit: 100, wait: false }),
          runRollup(repo, { limit: 100, wait: false }),
        ]);
        expect(runs.reduce((a, x) => a + x.folded, 0)).toBe(1500);
        await expectRollupsMatch(g, events);
      }, 30_000);
    }
  });
}

if ((await dbKinds()).includes("pg")) {
  test("the Worker job keeps the rollups fresh on PostgreSQL", async () => {
    const g = await startTestGateway({ db: "pg", env: { STATS_ROLLUP_INTERVAL_MS: "0" } });
    const name = (await g.gw.deps.db.query<{ d: string }>("select current_database() as d"))[0]!.d;
    const url = (process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres").replace(
      /\/[^/]*$/,
      `/${name}`,
    );
    const job = startStatsRollup({ db: g.gw.deps.db, url, intervalMs: 100, accountCap: CAP });
    try {
      expect(job.mode).toBe("worker");
      const r = rng(5);
      const events = randomEvents(200, r, new Date(Date.now() - 20 * DAY), new Date(), {
        users: [crypto.randomUUID()],
        keys: [crypto.randomUUID(), crypto.randomUUID()],
      });
      await insertEvents(g.gw.deps.db, events);
      const want = expectedDailyUsage(events).join();
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && (await dailyUsageRows(g.gw.deps.db)).join() !== want) await Bun.sleep(50);
      expect(await dailyUsageRows(g.gw.deps.db)).toEqual(expectedDailyUsage(events));
      expect(await modelRows(g.gw.deps.db, "stats_model_hourly")).toEqual(expectedModelRows(events, hourOf));
    } finally {
      await job.stop();
      await g.stop();
    }
  }, 30_000);
}
