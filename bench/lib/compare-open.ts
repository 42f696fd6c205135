/**
 * The open-loop comparison of bench/run.ts: per repeat, every target in a rotated order; each
 * cell the median over repeats of that repeat's percentile, and each target's added latency
 * over `direct` computed per repeat before the median (bench/README.md, "How to read").
 */
import { openLoop, type OpenLoopResult, type Target } from "./load";
import { dist, median, robust, type Dist, type Robust } from "./summary";

export type Metric = (r: OpenLoopResult) => number[];

export interface CompareContext {
  repeats: number;
  token: string;
  warmupMs: number;
  log: (...a: unknown[]) => void;
  /** Runs `fn` and measures the target process's CPU per request meanwhile. */
  cpuPerRequest<T extends { ok?: number; requests?: number }>(
    t: Target,
    fn: () => Promise<T>,
  ): Promise<{ r: T; cpuMsPerReq: number | null; mainMsPerReq: number | null }>;
}

/** Repeat r visits the targets in a rotated order, so no target always runs first or last. */
export const order = (ts: Target[], r: number) => ts.map((_, i) => ts[(i + r) % ts.length]!);

export async function compareOpenLoop(
  c: CompareContext,
  name: string,
  ts: Target[],
  o: { rate: number; ms: number; body: string; stream: boolean; metrics: Record<string, Metric> },
) {
  c.log(`${name}: warm-up`);
  // Long enough for the JIT to settle on every path the measured requests take (a 2 s warm-up
  // left the gateway's first repeat 0.3–0.5 ms slower than its later ones).
  for (const t of ts)
    await openLoop(t, { rate: o.rate, durationMs: c.warmupMs, body: o.body, token: c.token, stream: o.stream });
  type Cell = {
    metrics: Record<string, Dist>;
    errors: number;
    sent: number;
    firstError?: string;
    sendLag: Dist;
    cpuMsPerReq: number | null;
  };
  const runs: { repeat: number; order: string[]; byTarget: Record<string, Cell> }[] = [];
  for (let r = 0; r < c.repeats; r++) {
    const byTarget: Record<string, Cell> = {};
    const ord = order(ts, r);
    for (const t of ord) {
      const { r: res, cpuMsPerReq } = await c.cpuPerRequest(t, () =>
        openLoop(t, { rate: o.rate, durationMs: o.ms, body: o.body, token: c.token, stream: o.stream }),
      );
      const metrics: Record<string, Dist> = {};
      for (const [m, f] of Object.entries(o.metrics)) metrics[m] = dist(f(res));
      byTarget[t.name] = {
        metrics,
        errors: res.errors,
        sent: res.sent,
        firstError: res.firstError,
        sendLag: dist(res.sendLag),
        cpuMsPerReq,
      };
      c.log(
        `${name} #${r + 1} ${t.name.padEnd(10)} ${Object.entries(metrics)
          .map(([m, d]) => `${m} p50 ${d.p50.toFixed(2)} p99 ${d.p99.toFixed(2)}`)
          .join(" | ")} errors ${res.errors}${res.firstError ? ` (${res.firstError})` : ""}`,
      );
    }
    runs.push({ repeat: r + 1, order: ord.map((t) => t.name), byTarget });
  }
  const names = ts.map((t) => t.name);
  // Per metric and percentile: each target's median over repeats, and its paired difference over direct.
  const summary: Record<string, Record<string, Record<string, unknown>>> = {};
  for (const m of Object.keys(o.metrics)) {
    const s: Record<string, Record<string, unknown>> = {};
    for (const p of ["p50", "p90", "p99"] as const) {
      const v = (tn: string) => runs.map((run) => run.byTarget[tn]!.metrics[m]![p]);
      const diff = (a: string, b: string) =>
        runs.map((run) => run.byTarget[a]!.metrics[m]![p] - run.byTarget[b]!.metrics[m]![p]);
      const ratio = (a: string, b: string) =>
        median(runs.map((run) => run.byTarget[a]!.metrics[m]![p] / run.byTarget[b]!.metrics[m]![p]));
      const cell: Record<string, unknown> = {};
      const minusDirect: Record<string, Robust> = {};
      for (const tn of names) {
        cell[tn] = robust(v(tn));
        minusDirect[tn] = robust(diff(tn, "direct"));
      }
      s[p] = {
        ...cell,
        minusDirect,
        gatewayMinusDirect: minusDirect.gateway,
        gatewayMinusProxy: robust(diff("gateway", "proxy")),
        proxyMinusDirect: minusDirect.proxy,
        gatewayOverDirect: ratio("gateway", "direct"),
        gatewayOverProxy: ratio("gateway", "proxy"),
      };
    }
    summary[m] = s;
  }
  const cpu = Object.fromEntries(
    names
      .filter((tn) => tn !== "direct")
      .map((tn) => [tn, median(runs.map((run) => run.byTarget[tn]!.cpuMsPerReq ?? NaN))]),
  );
  const errors = Object.fromEntries(names.map((tn) => [tn, runs.reduce((a, run) => a + run.byTarget[tn]!.errors, 0)]));
  const sendLagP99 = median(runs.flatMap((run) => Object.values(run.byTarget).map((b) => b.sendLag.p99)));
  return {
    rate: o.rate,
    seconds: o.ms / 1000,
    repeats: c.repeats,
    targets: names,
    summary,
    cpuMsPerRequest: cpu,
    errors,
    proberSendLagP99Ms: sendLagP99,
    runs,
  };
}
