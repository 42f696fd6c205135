/** Pure parts of the statistics: windows, ISO weeks, ranking arithmetic, rollup state, queries. */
import { describe, expect, test } from "bun:test";
import { ValidationFailure } from "../../src/core/errors";
import {
  isoWeekStart,
  nextRollupState,
  parsePeriodQuery,
  parseReportQuery,
  parseTimeseriesQuery,
  periodWindows,
  seriesBuckets,
  sharePct,
  splitWindow,
  topBy,
  trendPct,
  decodeHoles,
  encodeHoles,
} from "../../src/core/stats";

const at = (s: string) => new Date(s);
const iso = (d: Date) => d.toISOString();

function issuesOf(f: () => unknown): { loc: (string | number)[]; msg: string }[] {
  try {
    f();
  } catch (e) {
    if (e instanceof ValidationFailure) return e.issues;
    throw e;
  }
  throw new Error("expected a validation failure");
}

describe("period windows", () => {
  test("rolling windows end with the current hour's bucket; the previous one is just before", () => {
    const now = at("2026-03-04T10:30:00Z");
    const d = periodWindows("daily", now);
    expect(iso(d.current.from)).toBe("2026-03-03T11:00:00.000Z");
    expect(iso(d.current.to)).toBe("2026-03-04T11:00:00.000Z");
    expect(iso(d.previous.from)).toBe("2026-03-02T11:00:00.000Z");
    expect(iso(d.previous.to)).toBe("2026-03-03T11:00:00.000Z");
    const w = periodWindows("weekly", now);
    expect(iso(w.current.from)).toBe("2026-02-25T11:00:00.000Z");
    const m = periodWindows("monthly", now);
    expect(iso(m.current.from)).toBe("2026-02-02T11:00:00.000Z");
    expect(iso(m.previous.from)).toBe("2026-01-03T11:00:00.000Z");
  });

  test("on an exact hour boundary the new hour's bucket is already in", () => {
    const d = periodWindows("daily", at("2026-03-04T10:00:00Z"));
    expect(iso(d.current.to)).toBe("2026-03-04T11:00:00.000Z");
    const e = periodWindows("daily", at("2026-03-04T09:59:59.999Z"));
    expect(iso(e.current.to)).toBe("2026-03-04T10:00:00.000Z");
  });
});

describe("ISO weeks", () => {
  test("weeks start on Monday, also across a year boundary", () => {
    expect(iso(isoWeekStart(at("2026-03-02T00:00:00Z")))).toBe("2026-03-02T00:00:00.000Z"); // Monday
    expect(iso(isoWeekStart(at("2026-03-08T23:59:59Z")))).toBe("2026-03-02T00:00:00.000Z"); // Sunday
    expect(iso(isoWeekStart(at("2026-03-09T00:00:00Z")))).toBe("2026-03-09T00:00:00.000Z");
    expect(iso(isoWeekStart(at("2021-01-03T12:00:00Z")))).toBe("2020-12-28T00:00:00.000Z"); // ISO week 53 of 2020
    expect(iso(isoWeekStart(at("2025-01-01T00:00:00Z")))).toBe("2024-12-30T00:00:00.000Z");
  });

  test("series buckets: every day or every Monday, ending with the current one", () => {
    const now = at("2026-03-04T10:30:00Z"); // a Wednesday
    const day = seriesBuckets("30d", "day", now);
    expect(day.buckets.length).toBe(30);
    expect(iso(day.buckets[0]!)).toBe("2026-02-03T00:00:00.000Z");
    expect(iso(day.buckets[29]!)).toBe("2026-03-04T00:00:00.000Z");
    expect(iso(day.window.to)).toBe("2026-03-05T00:00:00.000Z");

    const w12 = seriesBuckets("12w", "week", now);
    expect(w12.buckets.length).toBe(12);
    expect(w12.buckets.every((b) => b.getUTCDay() === 1)).toBe(true);
    expect(iso(w12.buckets[11]!)).toBe("2026-03-02T00:00:00.000Z");
    expect(iso(w12.window.to)).toBe("2026-03-09T00:00:00.000Z");
    expect(iso(w12.buckets[0]!)).toBe("2025-12-15T00:00:00.000Z");
    expect(seriesBuckets("24w", "week", now).buckets.length).toBe(24);
    // By day, 12 weeks run from that first Monday to today (Wednesday of the 12th week).
    const d12 = seriesBuckets("12w", "day", now);
    expect(d12.buckets.length).toBe(11 * 7 + 3);
    expect(iso(d12.buckets[0]!)).toBe("2025-12-15T00:00:00.000Z");
    expect(iso(d12.window.to)).toBe("2026-03-05T00:00:00.000Z");

    // 30 days by week: the first week is widened to its Monday (2026-02-03 is a Tuesday).
    const w30 = seriesBuckets("30d", "week", now);
    expect(iso(w30.buckets[0]!)).toBe("2026-02-02T00:00:00.000Z");
    expect(w30.buckets.length).toBe(5);
    // On a Monday, 12 weeks still ends with the week that starts today.
    const mon = seriesBuckets("12w", "week", at("2026-03-09T00:00:01Z"));
    expect(iso(mon.buckets[11]!)).toBe("2026-03-09T00:00:00.000Z");
    expect(iso(mon.buckets[0]!)).toBe("2025-12-22T00:00:00.000Z");
    expect(mon.buckets.length).toBe(12);
  });
});

describe("window split", () => {
  test("days inside, hours at the edges", () => {
    const s = splitWindow({ from: at("2026-03-01T11:00:00Z"), to: at("2026-03-04T11:00:00Z") });
    expect(s.days && [iso(s.days.from), iso(s.days.to)]).toEqual([
      "2026-03-02T00:00:00.000Z",
      "2026-03-04T00:00:00.000Z",
    ]);
    expect(s.hours.map((h) => [iso(h.from), iso(h.to)])).toEqual([
      ["2026-03-01T11:00:00.000Z", "2026-03-02T00:00:00.000Z"],
      ["2026-03-04T00:00:00.000Z", "2026-03-04T11:00:00.000Z"],
    ]);
  });
  test("a window within one or two days is hours only; whole days are days only", () => {
    const a = splitWindow({ from: at("2026-03-03T11:00:00Z"), to: at("2026-03-04T11:00:00Z") });
    expect(a.days).toBeNull();
    expect(a.hours.length).toBe(1);
    const b = splitWindow({ from: at("2026-03-01T00:00:00Z"), to: at("2026-03-04T00:00:00Z") });
    expect(b.hours).toEqual([]);
    expect(b.days && iso(b.days.from)).toBe("2026-03-01T00:00:00.000Z");
  });
});

describe("ranking arithmetic", () => {
  test("trend is null without earlier data", () => {
    expect(trendPct(100, undefined)).toBeNull();
    expect(trendPct(100, 0)).toBeNull();
    expect(trendPct(150, 100)).toBe(50);
    expect(trendPct(50, 100)).toBe(-50);
    expect(trendPct(1, 3)).toBe(-66.7);
    expect(trendPct(0, 10)).toBe(-100);
  });
  test("share in percent, two decimals", () => {
    expect(sharePct(1, 3)).toBe(33.33);
    expect(sharePct(2, 3)).toBe(66.67);
    expect(sharePct(5, 0)).toBe(0);
  });
  test("top-N orders by score, then by tie-breaker, then by name", () => {
    const rows = [
      { n: "b", s: 5, c: 1 },
      { n: "a", s: 5, c: 1 },
      { n: "z", s: 5, c: 9 },
      { n: "c", s: 9, c: 0 },
      { n: "d", s: 1, c: 0 },
    ];
    expect(
      topBy(
        rows,
        3,
        (r) => r.s,
        (r) => r.n,
        (r) => r.c,
      ).map((r) => r.n),
    ).toEqual(["c", "z", "a"]);
    expect(
      topBy(
        rows,
        10,
        (r) => r.s,
        (r) => r.n,
      ).map((r) => r.n),
    ).toEqual(["c", "a", "b", "z", "d"]);
  });
});

describe("rollup state", () => {
  test("missing ids become holes; found ones leave; old ones expire; the watermark only grows", () => {
    let s = nextRollupState({ watermark: 10, holes: [] }, { upper: 20, missing: [12, 15], found: [] }, 1000);
    expect(s).toEqual({
      watermark: 20,
      holes: [
        { id: 12, seen: 1000 },
        { id: 15, seen: 1000 },
      ],
    });
    s = nextRollupState(s, { upper: null, missing: [], found: [15] }, 2000);
    expect(s).toEqual({ watermark: 20, holes: [{ id: 12, seen: 1000 }] });
    s = nextRollupState(s, { upper: 25, missing: [21], found: [] }, 1000 + 600_000);
    expect(s).toEqual({ watermark: 25, holes: [{ id: 21, seen: 601_000 }] });
    // Ids at or below the old watermark are never re-added as holes.
    expect(nextRollupState({ watermark: 30, holes: [] }, { upper: null, missing: [5], found: [] }, 0).holes).toEqual(
      [],
    );
  });
  test("the number of holes is bounded, the newest ids kept", () => {
    const s = nextRollupState(
      { watermark: 0, holes: [] },
      { upper: 100, missing: [1, 2, 3, 4, 5], found: [] },
      0,
      1000,
      3,
    );
    expect(s.holes.map((h) => h.id)).toEqual([3, 4, 5]);
  });
  test("holes round-trip through their stored form; junk is ignored", () => {
    const h = [{ id: 7, seen: 123 }];
    expect(decodeHoles(JSON.parse(JSON.stringify(encodeHoles(h))))).toEqual(h);
    expect(decodeHoles("nope")).toEqual([]);
    expect(
      decodeHoles([
        [1.5, 1],
        ["x", 2],
        [3, 4],
      ]),
    ).toEqual([{ id: 3, seen: 4 }]);
  });
});

describe("query validation", () => {
  test("period: default and allowed values; anything else names the field", () => {
    expect(parsePeriodQuery({}, "daily")).toEqual({ period: "daily" });
    expect(parsePeriodQuery({ period: "monthly" }, "daily")).toEqual({ period: "monthly" });
    expect(issuesOf(() => parsePeriodQuery({ period: "hourly" }, "weekly"))[0]!.loc).toEqual(["query", "period"]);
    expect(issuesOf(() => parsePeriodQuery({ period: ["daily", "weekly"] }, "weekly"))[0]!.loc).toEqual([
      "query",
      "period",
    ]);
  });
  test("timeseries: defaults; top 1..20 integers only; every bad field is listed", () => {
    expect(parseTimeseriesQuery({})).toEqual({ range: "30d", granularity: "day", top: 8 });
    expect(parseTimeseriesQuery({ range: "24w", granularity: "week", top: "20" })).toEqual({
      range: "24w",
      granularity: "week",
      top: 20,
    });
    expect(parseTimeseriesQuery({ top: "1" }).top).toBe(1);
    for (const top of ["0", "21", "-1", "2.5", "abc", "", "1e1"]) {
      expect(issuesOf(() => parseTimeseriesQuery({ top })).map((i) => i.loc)).toEqual([["query", "top"]]);
    }
    const all = issuesOf(() => parseTimeseriesQuery({ range: "7d", granularity: "month", top: "99" }));
    expect(all.map((i) => i.loc)).toEqual([
      ["query", "range"],
      ["query", "granularity"],
      ["query", "top"],
    ]);
  });
  test("report dates: defaults, lone from, bounds and calendar validity", () => {
    const now = at("2026-03-04T10:30:00Z");
    expect(parseReportQuery({}, now)).toEqual({ from: "2026-02-03", to: "2026-03-04" });
    expect(parseReportQuery({ to: "2026-01-31" }, now)).toEqual({ from: "2026-01-02", to: "2026-01-31" });
    expect(parseReportQuery({ from: "2026-03-01" }, now)).toEqual({ from: "2026-03-01", to: "2026-03-04" });
    expect(parseReportQuery({ from: "2024-01-01" }, now)).toEqual({ from: "2024-01-01", to: "2024-12-31" });
    expect(parseReportQuery({ from: "2026-05-01" }, now)).toEqual({ from: "2026-05-01", to: "2026-05-01" });
    expect(parseReportQuery({ from: "2025-03-04", to: "2026-03-04" }, now)).toEqual({
      from: "2025-03-04",
      to: "2026-03-04",
    }); // 366 days
    expect(issuesOf(() => parseReportQuery({ from: "2025-03-03", to: "2026-03-04" }, now))[0]!.loc).toEqual([
      "query",
      "from",
    ]);
    expect(issuesOf(() => parseReportQuery({ from: "2026-03-05", to: "2026-03-04" }, now))[0]!.loc).toEqual([
      "query",
      "from",
    ]);
    expect(issuesOf(() => parseReportQuery({ from: "2026-02-30" }, now))[0]!.loc).toEqual(["query", "from"]);
    expect(issuesOf(() => parseReportQuery({ to: "03/04/2026" }, now))[0]!.loc).toEqual(["query", "to"]);
  });
});
