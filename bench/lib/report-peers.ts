/**
 * The headline of a results file: every target of one run side by side (the figures issue 30
 * asks for), and the targets of its points 1–3 with what was measured. Read by report.ts.
 */

type R = { median: number; min: number; max: number } | undefined;
const f = (x: number | null | undefined, d = 2) =>
  x === null || x === undefined || !Number.isFinite(x) ? "–" : x.toFixed(d);
const m = (r: R) => r?.median;
/** A difference with its sign (+0.42, −0.10). */
const sd = (x: number | null | undefined) =>
  x === null || x === undefined || !Number.isFinite(x) ? "–" : x < 0 ? `−${f(-x)}` : `+${f(x)}`;
const mark = (ok: boolean) => (ok ? "✅" : "❌");

const LABEL: Record<string, string> = {
  proxy: "bare Bun proxy",
  essentials: "Bun proxy doing the essentials",
  portkey: "Portkey 1.15.2 on Bun (bills nothing)",
  gateway: "**this gateway** on PostgreSQL (its settings: the header)",
};

/** The GC log's upper bound of a target's KiB per call at saturation (older results: the gateway's, in sat.gateway). */
const gcLogKiB = (sat: any, t: string): number =>
  sat?.allocatedKiBPerRequest?.[t] ?? (t === "gateway" ? sat?.gateway?.allocatedKiBPerRequest : NaN);
/** A target's longest GC pause at saturation (older results: the gateway's, in sat.gateway). */
const gcPause = (sat: any, t: string): number =>
  sat?.gcPauseMaxMs?.[t] ?? (t === "gateway" ? sat?.gateway?.gcPauseMaxMs : NaN);

/** KiB a call allocates: the alloc scenario's (collector off) when the run has it, else the GC log's upper bound. */
function allocatedKiB(results: any, t: string): number {
  return results.alloc?.kibPerCall?.[t]?.median ?? gcLogKiB(results.saturation, t);
}

/** The side-by-side table; empty when the run had neither latency nor saturation figures. */
export function peersTable(results: any): string[] {
  const ns = results.nonstream?.summary?.latency;
  const st = results.stream?.summary?.ttfb;
  const sat = results.saturation;
  const alloc = results.alloc;
  if (!ns && !sat && !alloc) return [];
  const names: string[] = (
    sat?.targets ??
    results.nonstream?.targets ??
    alloc?.targets ?? ["direct", "proxy", "gateway"]
  ).filter((t: string) => t !== "direct" && t !== "gatewayAccounts");
  const out = [
    "## Side by side (one run)",
    "",
    "| target | added p50 / p99 @ open loop, JSON (ms) | SSE TTFB added p50 (ms) | sat. JSON req/s (p99 ms) | sat. SSE req/s | process CPU µs/call (sat. JSON) | JS thread µs/call | KiB allocated/call | longest GC pause ms |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const t of names) {
    const added = ns ? `${sd(m(ns.p50.minusDirect?.[t]))} / ${sd(m(ns.p99.minusDirect?.[t]))}` : "–";
    const ttfb = st ? sd(m(st.p50.minusDirect?.[t])) : "–";
    const rps = sat ? `${f(m(sat.rps[t]), 0)} (${f(m(sat.latencyP99Ms[t]), 1)})` : "–";
    const sse = sat?.sseRps ? f(m(sat.sseRps[t]), 0) : "–";
    const cpu = sat ? f(1000 * (sat.cpuMsPerRequest[t] ?? NaN), 1) : "–";
    const main = sat ? f(1000 * (sat.mainThreadMsPerRequest?.[t] ?? NaN), 1) : "–";
    const kib = f(allocatedKiB(results, t), 1);
    const pause = f(gcPause(sat, t), 1);
    out.push(`| ${LABEL[t] ?? t} | ${added} | ${ttfb} | ${rps} | ${sse} | ${cpu} | ${main} | ${kib} | ${pause} |`);
  }
  out.push(
    "",
    alloc
      ? `KiB allocated per call: bench/alloc.ts, each target with the collector off (${alloc.repeats} × ${alloc.seconds} s of saturated JSON; median).`
      : "KiB allocated per call: this run had no alloc scenario; the figures are the GC log's reading, an upper bound (bench/lib/gc-log.ts).",
  );
  if (sat && !names.includes("portkey"))
    out.push("", "Portkey on Bun was not measured in this run (not installed; see bench/README.md, `--portkey=DIR`).");
  if (sat?.gateway) {
    const g = sat.gateway;
    out.push(
      "",
      `Gateway at saturation (JSON, one account): PostgreSQL ${f(g.postgresMsPerRequest, 3)} ms CPU per call (its database's backends), at most ${f(gcLogKiB(sat, "gateway"), 1)} KiB allocated per call by the GC log's reading, ${f(g.gcPerSecond, 0)} collections/s, longest GC pause ${f(gcPause(sat, "gateway"), 1)} ms. Stats rollup lag during those runs at most ${f(g.rollupLagMaxSeconds, 1)} s (${f(g.rollupLagMaxEvents, 0)} events behind; it folds every STATS_ROLLUP_INTERVAL_MS, 5 s by default).`,
    );
  }
  out.push("");
  return out;
}

/** Rows of the targets table for points 1–3 of issue 30. */
export function issueTargets(results: any): string[] {
  const rows: string[] = [];
  const ns = results.nonstream?.summary?.latency;
  if (ns) {
    rows.push(
      `| JSON added p50 ≤ 0.8 ms | ${f(m(ns.p50.gatewayMinusDirect))} ms | ${mark(m(ns.p50.gatewayMinusDirect)! <= 0.8)} |`,
    );
    rows.push(
      // Below zero, direct's own p99 was the run's worst: the figure measures the machine, not the gateway.
      `| JSON added p99 ≤ 2.5 ms | ${f(m(ns.p99.gatewayMinusDirect))} ms | ${m(ns.p99.gatewayMinusDirect)! < 0 ? "– (noise: direct's p99 above the gateway's)" : mark(m(ns.p99.gatewayMinusDirect)! <= 2.5)} |`,
    );
  }
  const st = results.stream?.summary?.ttfb;
  if (st)
    rows.push(
      `| stream TTFB added p50 ≤ 0.8 ms | ${f(m(st.p50.gatewayMinusDirect))} ms | ${mark(m(st.p50.gatewayMinusDirect)! <= 0.8)} |`,
    );
  const sat = results.saturation;
  if (sat?.mainThreadMsPerRequest) {
    const js = sat.mainThreadMsPerRequest.gateway;
    rows.push(`| JavaScript thread ≤ 0.07 ms per call (saturated) | ${f(js, 3)} ms | ${mark(js <= 0.07)} |`);
  }
  if (sat?.gateway) {
    const g = sat.gateway;
    if (Number.isFinite(g.postgresMsPerRequest))
      rows.push(
        `| PostgreSQL ≤ 0.04 ms CPU per call | ${f(g.postgresMsPerRequest, 3)} ms | ${mark(g.postgresMsPerRequest <= 0.04)} |`,
      );
    const kib = allocatedKiB(results, "gateway");
    if (Number.isFinite(kib))
      rows.push(
        `| ≤ 15 KiB allocated per call | ${f(kib, 1)} KiB${results.alloc ? "" : " (GC log, upper bound)"} | ${mark(kib <= 15)} |`,
      );
    const pause = gcPause(sat, "gateway");
    if (Number.isFinite(pause)) rows.push(`| no GC pause over 5 ms | ${f(pause, 1)} ms | ${mark(pause <= 5)} |`);
  }
  if (sat?.gatewayOverPortkey)
    rows.push(
      `| saturated JSON throughput ≥ Portkey on Bun's | ${f(m(sat.gatewayOverPortkey), 2)} × | ${mark(m(sat.gatewayOverPortkey)! >= 1)} |`,
    );
  return rows;
}
