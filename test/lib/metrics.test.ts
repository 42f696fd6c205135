import { describe, expect, test } from "bun:test";
import { Counter, CounterFn, Gauge, GaugeSet, Histogram, Registry } from "../../src/lib/metrics";

describe("metrics registry", () => {
  test("counters keep one series per label set, labels sorted and escaped", () => {
    const c = new Counter("reqs_total", "Requests");
    c.inc({ status: 200, route: "/a" });
    c.inc({ route: "/a", status: 200 });
    c.inc({ route: "/b", status: 500 }, 3);
    c.inc({ route: 'we"ird\\path\nx', status: 400 });
    expect(c.get({ status: 200, route: "/a" })).toBe(2);
    expect(c.get({ route: "/b", status: 500 })).toBe(3);
    expect(c.get({ route: "/none" })).toBe(0);
    const text = c.render();
    expect(text.split("\n")).toEqual([
      "# HELP reqs_total Requests",
      "# TYPE reqs_total counter",
      'reqs_total{route="/a",status="200"} 2',
      'reqs_total{route="/b",status="500"} 3',
      'reqs_total{route="we\\"ird\\\\path\\nx",status="400"} 1',
    ]);
    const bare = new Counter("plain_total", "No labels");
    bare.inc();
    expect(bare.render()).toEndWith("\nplain_total 1");
  });

  test('a label set and a longer one that starts with it are two series; 200 and "200" are one', () => {
    const c = new Counter("calls_total", "Calls");
    c.inc({ route: "/a" });
    c.inc({ route: "/a", status: 200 });
    c.inc({ route: "/a", status: "200" });
    c.inc({ status: 200, route: "/a", method: "POST" });
    expect(c.render().split("\n").slice(2)).toEqual([
      'calls_total{route="/a"} 1',
      'calls_total{route="/a",status="200"} 2',
      'calls_total{method="POST",route="/a",status="200"} 1',
    ]);
  });

  test("gauges are read at scrape time", () => {
    let v = 1;
    const g = new Gauge("open", "Open things", () => v);
    expect(g.render()).toEndWith("\nopen 1");
    v = 7;
    expect(g.render()).toEndWith("\nopen 7");
  });

  test("histograms render cumulative buckets, +Inf, sum and count", () => {
    const h = new Histogram("lat_seconds", "Latency", [0.125, 1]);
    h.observe(0.0625, { route: "/x" });
    h.observe(0.5, { route: "/x" });
    h.observe(4, { route: "/x" });
    h.observe(0.125, { route: "/x" }); // on a bound: counted in it
    expect(h.render().split("\n")).toEqual([
      "# HELP lat_seconds Latency",
      "# TYPE lat_seconds histogram",
      'lat_seconds_bucket{le="0.125",route="/x"} 2',
      'lat_seconds_bucket{le="1",route="/x"} 3',
      'lat_seconds_bucket{le="+Inf",route="/x"} 4',
      'lat_seconds_sum{route="/x"} 4.6875',
      'lat_seconds_count{route="/x"} 4',
    ]);
  });

  test("the registry renders every metric, newline-terminated", () => {
    const r = new Registry();
    r.add(new Counter("a_total", "A")).inc();
    r.add(new Gauge("b", "B", () => 2));
    const text = r.render();
    expect(text).toBe("# HELP a_total A\n# TYPE a_total counter\na_total 1\n# HELP b B\n# TYPE b gauge\nb 2\n");
  });

  test("a gauge set renders the rows its collector last put, replacing the earlier ones", () => {
    const g = new GaugeSet("jobs", "Jobs");
    g.replace([
      { labels: { family: "K-v3" }, value: 2 },
      { labels: { family: "G" }, value: 1 },
    ]);
    expect(g.render().split("\n").slice(2)).toEqual(['jobs{family="K-v3"} 2', 'jobs{family="G"} 1']);
    g.replace([]);
    expect(g.render().split("\n")).toEqual(["# HELP jobs Jobs", "# TYPE jobs gauge"]);
    expect(new CounterFn("cpu_total", "CPU", () => 1.5).render()).toContain("# TYPE cpu_total counter\ncpu_total 1.5");
  });

  test("collectors run once per window unless forced; a hanging one holds a scrape a second at most", async () => {
    const r = new Registry(10_000);
    let runs = 0;
    r.collect(async () => {
      runs++;
    });
    await r.refresh();
    await Promise.all([r.refresh(), r.refresh()]);
    expect(runs).toBe(1);
    await r.refresh({ force: true });
    expect(runs).toBe(2);
    r.collect(() => new Promise(() => {})); // a database that never answers
    const t0 = performance.now();
    await r.refresh({ force: true });
    expect(performance.now() - t0).toBeLessThan(1500);
    expect(runs).toBe(3);
  });
});
