/**
 * The statistics use-cases over real rollups, at fixed clocks: period boundaries, ISO weeks,
 * trend, Others, failed calls, cache hits and the privacy threshold. Each scenario lives in
 * its own year so that their windows never overlap in the shared database.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { RollupRepo } from "../../src/db/repos/rollups";
import { appsStats, modelsStats, rankings, runRollup, usageTimeseries, type StatsContext } from "../../src/core/stats";
import { insertEvents, type Ev } from "./helpers";

const HOUR = 3_600_000;
const keys = Array.from({ length: 6 }, () => crypto.randomUUID());
const accounts = Array.from({ length: 6 }, () => crypto.randomUUID());
const user = accounts[0]!;

function ev(at: Date | number, o: Partial<Ev> = {}): Ev {
  return {
    user,
    key: keys[0]!,
    model: "m",
    provider: "openai",
    maker: "openai",
    modality: "text",
    app: null,
    status: 200,
    prompt: 10,
    completion: 5,
    costMicro: 1000,
    cached: false,
    at: new Date(at),
    ...o,
  };
}

for (const kind of await dbKinds()) {
  describe(`statistics on ${kind}`, () => {
    let g: TestGateway;
    let repo: RollupRepo;
    const ctx = (now: Date, minAccounts = 1): StatsContext => ({ reader: repo, minAccounts, now });
    async function load(events: Ev[]) {
      await insertEvents(g.gw.deps.db, events);
      await runRollup(repo, { limit: 10_000, wait: true });
    }

    beforeAll(async () => {
      g = await startTestGateway({ db: kind, env: { STATS_ROLLUP_INTERVAL_MS: "0" } });
      // A clock long before every scenario: nothing is pruned.
      repo = new RollupRepo(g.gw.deps.db, { accountCap: 3, now: () => Date.parse("2000-01-01T00:00:00Z") });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("period boundaries: the window's first hour is in, the hour before it is the previous period", async () => {
      const now = new Date("2019-06-12T10:30:00Z");
      const dayStart = Date.parse("2019-06-11T11:00:00Z"); // daily = [11 Jun 11:00, 12 Jun 11:00)
      await load([
        ev(dayStart, { model: "edge-in" }),
        ev(dayStart - 1, { model: "edge-out" }), // 10:59:59.999, previous period
        ev(Date.parse("2019-06-12T10:29:59Z"), { model: "edge-in" }),
        ev(Date.parse("2019-06-05T11:00:00Z"), { model: "week-edge" }), // first hour of the weekly window
        ev(Date.parse("2019-06-05T10:59:59Z"), { model: "week-out" }),
        ev(Date.parse("2019-05-13T11:00:00Z"), { model: "month-edge" }), // first hour of 30 days
        ev(Date.parse("2019-05-13T10:59:59Z"), { model: "month-out" }),
      ]);
      const daily = await modelsStats(ctx(now), "daily");
      expect(daily.top_models).toEqual([{ model: "edge-in", calls: 2 }]);
      expect(daily.total_calls).toBe(2);
      const weekly = await modelsStats(ctx(now), "weekly");
      expect(weekly.top_models.map((m) => m.model).sort()).toEqual(["edge-in", "edge-out", "week-edge"]);
      const monthly = await modelsStats(ctx(now), "monthly");
      expect(monthly.top_models.map((m) => m.model).sort()).toEqual([
        "edge-in",
        "edge-out",
        "month-edge",
        "week-edge",
        "week-out",
      ]);
      // The event just before the window is the previous period's (another model): no trend.
      const r = await rankings(ctx(now), "daily");
      expect(r.leaderboard.map((x) => [x.model, x.trend_pct])).toEqual([["edge-in", null]]);
      const later = await rankings(ctx(new Date("2019-06-13T10:30:00Z")), "daily");
      expect(later.leaderboard).toEqual([]);
      expect(later.total_tokens).toBe(0);
    });

    test("ISO weeks: Sunday 23:59 belongs to the week of the Monday before, Monday 00:00 starts the next", async () => {
      const now = new Date("2020-03-04T12:00:00Z"); // Wednesday
      await load([
        ev(Date.parse("2020-03-01T23:59:59Z"), { model: "w", prompt: 100, completion: 0 }), // Sunday
        ev(Date.parse("2020-03-02T00:00:00Z"), { model: "w", prompt: 7, completion: 0 }), // Monday
        ev(Date.parse("2020-02-24T00:00:00Z"), { model: "w", prompt: 20, completion: 0 }), // Monday before
        ev(Date.parse("2019-12-30T08:00:00Z"), { model: "w", prompt: 3, completion: 0 }), // ISO week 1 of 2020 starts in 2019
      ]);
      const ts = await usageTimeseries(ctx(now), { range: "12w", granularity: "week", top: 8 });
      expect(ts.points.length).toBe(12);
      expect(ts.points.at(-1)!.t).toBe("2020-03-02");
      expect(ts.points[0]!.t).toBe("2019-12-16");
      const byT = Object.fromEntries(ts.points.map((p) => [p.t, p.total]));
      expect(byT["2020-03-02"]).toBe(7);
      expect(byT["2020-02-24"]).toBe(120);
      expect(byT["2019-12-30"]).toBe(3);
      expect(ts.total_tokens).toBe(130);
      const days = await usageTimeseries(ctx(now), { range: "30d", granularity: "day", top: 8 });
      expect(days.points.length).toBe(30);
      expect(days.points.find((p) => p.t === "2020-03-01")!.total).toBe(100);
      expect(days.points.find((p) => p.t === "2020-03-02")!.total).toBe(7);
      expect(days.total_tokens).toBe(127);
    });

    test("trend against the previous period; null without earlier data", async () => {
      const now = new Date("2021-06-10T12:00:00Z");
      const cur = Date.parse("2021-06-09T12:00:00Z");
      const prev = Date.parse("2021-06-02T12:00:00Z"); // inside the previous 7 days
      await load([
        ev(cur, { model: "grows", prompt: 150, completion: 0 }),
        ev(prev, { model: "grows", prompt: 100, completion: 0 }),
        ev(cur, { model: "shrinks", prompt: 25, completion: 0 }),
        ev(prev, { model: "shrinks", prompt: 75, completion: 0 }),
        ev(cur, { model: "new", prompt: 10, completion: 0 }),
        ev(prev, { model: "gone", prompt: 10, completion: 0 }),
      ]);
      const r = await rankings(ctx(now), "weekly");
      expect(r.leaderboard.map((x) => [x.rank, x.model, x.tokens, x.trend_pct])).toEqual([
        [1, "grows", 150, 50],
        [2, "shrinks", 25, -66.7],
        [3, "new", 10, null],
      ]);
    });

    test("Others: the rest summed per bucket; totals add up; every bucket present", async () => {
      const now = new Date("2022-01-20T12:00:00Z");
      const d = (day: number) => Date.parse(`2022-01-${String(day).padStart(2, "0")}T06:00:00Z`);
      await load([
        ev(d(18), { model: "a", prompt: 500 }),
        ev(d(19), { model: "b", prompt: 300 }),
        ev(d(19), { model: "c", prompt: 40 }),
        ev(d(20), { model: "d", prompt: 30 }),
        ev(d(20), { model: "c", prompt: 1 }),
        ev(d(20), { model: "e", modality: "image", prompt: 9999 }), // not text: not in the series
      ]);
      const ts = await usageTimeseries(ctx(now), { range: "30d", granularity: "day", top: 2 });
      expect(ts.series).toEqual(["a", "b", "Others"]);
      expect(ts.points.length).toBe(30);
      expect(ts.points.filter((p) => p.total === 0).length).toBe(27);
      for (const p of ts.points) {
        expect(Object.keys(p.tokens)).toEqual(ts.series);
        expect(p.total).toBe(Object.values(p.tokens).reduce((a, b) => a + b, 0));
      }
      const last = ts.points.at(-1)!;
      expect(last).toEqual({ t: "2022-01-20", tokens: { a: 0, b: 0, Others: 30 + 5 + 1 + 5 }, total: 41 });
      expect(ts.points.at(-2)!.tokens).toEqual({ a: 0, b: 305, Others: 45 });
      expect(ts.total_tokens).toBe(ts.points.reduce((a, p) => a + p.total, 0));
      expect(ts.total_tokens).toBe(505 + 305 + 45 + 41);
      // All models fit: no Others series.
      const all = await usageTimeseries(ctx(now), { range: "30d", granularity: "day", top: 20 });
      expect(all.series).toEqual(["a", "b", "c", "d"]);
    });

    test("failed calls (status ≥ 400) are not in the rankings; they are calls in /stats/models; cache hits have no tokens", async () => {
      const now = new Date("2023-05-10T12:00:00Z");
      const t = Date.parse("2023-05-10T08:00:00Z");
      await load([
        ev(t, { model: "ok", provider: "groq", prompt: 100, completion: 50 }),
        ev(t, { model: "ok", provider: "groq", status: 502, prompt: 1000, completion: 400 }), // partial stream, billed, failed
        ev(t, { model: "ok", provider: "groq", status: 429, prompt: 0, completion: 0 }),
        ev(t, { model: "ok", provider: "together", cached: true, prompt: 100, completion: 50 }),
        ev(t, { model: "broken", provider: "together", status: 503, prompt: 5000, completion: 5000 }),
        ev(t, { model: "broken", provider: null, status: 400, prompt: 0, completion: 0 }),
      ]);
      const r = await rankings(ctx(now), "daily");
      expect(r.leaderboard).toEqual([
        { rank: 1, model: "ok", provider: "groq", maker: "openai", tokens: 150, calls: 2, trend_pct: null },
      ]);
      expect(r.total_tokens).toBe(150);
      expect(r.market_share).toEqual([{ provider: "groq", tokens: 150, share_pct: 100 }]);
      const m = await modelsStats(ctx(now), "daily");
      expect(m.top_models).toEqual([
        { model: "ok", calls: 4 },
        { model: "broken", calls: 2 },
      ]);
      expect(m.total_calls).toBe(6);
      const ts = await usageTimeseries(ctx(now), { range: "30d", granularity: "day", top: 8 });
      expect(ts.total_tokens).toBe(150);
    });

    test("market share: top 12 providers, shares of their own total", async () => {
      const now = new Date("2024-02-10T12:00:00Z");
      const t = Date.parse("2024-02-10T03:00:00Z");
      const events = Array.from({ length: 14 }, (_, i) =>
        ev(t, { model: `s${i}`, provider: `p${String(i).padStart(2, "0")}`, prompt: (i + 1) * 10, completion: 0 }),
      );
      await load(events);
      const r = await rankings(ctx(now), "daily");
      expect(r.market_share.length).toBe(12);
      expect(r.market_share[0]).toEqual({ provider: "p13", tokens: 140, share_pct: expect.any(Number) });
      const top12 = (14 + 13 + 12 + 11 + 10 + 9 + 8 + 7 + 6 + 5 + 4 + 3) * 10;
      for (const s of r.market_share) expect(s.share_pct).toBe(Math.round((s.tokens / top12) * 10000) / 100);
      expect(r.leaderboard.length).toBe(14);
      expect(r.total_tokens).toBe(1050);
    });

    test("privacy: a model or app needs N distinct accounts in the period; hidden usage still counts in totals", async () => {
      const now = new Date("2025-08-20T12:00:00Z");
      const h = (i: number) => Date.parse("2025-08-20T00:00:00Z") + i * HOUR;
      const events: Ev[] = [
        // Two accounts, many calls and keys: hidden at N = 3.
        ...Array.from({ length: 20 }, (_, i) =>
          ev(h(i % 10), {
            model: "two-accounts",
            user: accounts[i % 2]!,
            key: keys[i % 6]!,
            app: "tiny-app",
            prompt: 1000,
          }),
        ),
        // Three accounts, each in a different hour: shown.
        ...[0, 1, 2].map((i) =>
          ev(h(i), { model: "three-accounts", user: accounts[i]!, key: keys[i]!, app: "big-app", prompt: 10 }),
        ),
        // Five accounts in one hour (more than the stored cap of 3): shown.
        ...[0, 1, 2, 3, 4].map((i) =>
          ev(h(5), { model: "five-accounts", user: accounts[i]!, key: keys[i]!, app: "big-app", prompt: 20 }),
        ),
        // One account, three calls without a key: one account.
        ...[0, 1, 2].map(() => ev(h(6), { model: "keyless", user: accounts[5]!, key: null, prompt: 30 })),
      ];
      await load(events);
      const m = await modelsStats(ctx(now, 3), "daily");
      expect(m.top_models.map((x) => x.model).sort()).toEqual(["five-accounts", "three-accounts"]);
      expect(m.total_calls).toBe(31);
      const r = await rankings(ctx(now, 3), "daily");
      expect(r.leaderboard.map((x) => x.model)).toEqual(["five-accounts", "three-accounts"]);
      expect(r.total_tokens).toBe(20 * 1005 + 3 * 15 + 5 * 25 + 3 * 35);
      const ts = await usageTimeseries(ctx(now, 3), { range: "30d", granularity: "day", top: 8 });
      expect(ts.series).toEqual(["five-accounts", "three-accounts", "Others"]);
      expect(ts.points.at(-1)!.tokens.Others).toBe(20 * 1005 + 3 * 35);
      const apps = await appsStats(ctx(now, 3), "daily");
      expect(apps.apps).toEqual([{ rank: 1, app: "big-app", tokens: 3 * 15 + 5 * 25, calls: 8 }]);
      expect(apps.total_tokens).toBe(20 * 1005 + 3 * 15 + 5 * 25);
      // In the weekly period the same names are judged on the week: still the same accounts.
      expect((await modelsStats(ctx(now, 3), "weekly")).top_models.map((x) => x.model).sort()).toEqual([
        "five-accounts",
        "three-accounts",
      ]);
      // At N = 1 (demo mode) everything shows, key-less calls too.
      expect((await modelsStats(ctx(now, 1), "daily")).top_models.map((x) => x.model).sort()).toEqual([
        "five-accounts",
        "keyless",
        "three-accounts",
        "two-accounts",
      ]);
      expect((await appsStats(ctx(now, 1), "daily")).apps.map((a) => a.app)).toEqual(["tiny-app", "big-app"]);
    });
  });
}
