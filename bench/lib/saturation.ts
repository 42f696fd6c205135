/**
 * The closed-loop saturation scenario of bench/run.ts: wrk against every target in rotated
 * order, JSON and then SSE, instant upstream; per target its requests/s, wrk's p50/p99, and the
 * CPU per call of its process (all threads, and the JavaScript thread alone); from the GC log of
 * each target that has one (lib/gc-log.ts) the KiB allocated per call and the longest collection
 * pause. For the gateway also PostgreSQL's CPU per call (its database's backends, lib/pg-cpu.ts).
 */
import { gcLogOffset, readGcWindow } from "./gc-log";
import { order, type CompareContext } from "./compare-open";
import { wrk, type Target, type WrkResult } from "./load";
import type { RollupLag } from "./rollup-lag";
import { median, robust } from "./summary";

export interface SaturationOptions {
  conns: number;
  seconds: number;
  warmupSeconds: number;
  jsonBody: string;
  sseBody: string;
  /** Keys of several funded accounts: the gateway runs once more with them in round robin. */
  tokens: string[];
  /** The targets run once more with `tokens` (default the gateway); each reported as `<name>Accounts`. */
  accountsTargets?: string[];
  core: number | null;
  /** Target name → its GC log (BUN_JSC_logGC on its stderr); targets without one get no GC figures. */
  gcLogs: Record<string, string>;
  /** Samples the stats rollup's lag while the gateway's JSON runs (lib/rollup-lag.ts). */
  rollupLag?: () => { stop(): Promise<RollupLag> };
  /** CPU ms so far of the gateway database's PostgreSQL backends. */
  postgresMs: () => Promise<number>;
}

type Cell = WrkResult & {
  cpuMsPerReq: number | null;
  mainMsPerReq: number | null;
  pgMsPerReq?: number;
  allocKiBPerReq?: number;
  gcPauseMaxMs?: number;
  gcPerS?: number;
  rollupLag?: RollupLag;
};

const maxOf = (xs: number[]) => (xs.length ? Math.max(...xs) : NaN);

export async function saturation(c: CompareContext, ts: Target[], o: SaturationOptions) {
  const run = async (t: Target, body: string, token: string | string[], seconds: number): Promise<Cell> => {
    // Every gateway configuration of the run (bench/pair.ts names them gateway-…) gets its
    // database's CPU.
    const gateway = t.name.startsWith("gateway");
    const gcLog = o.gcLogs[t.name] ?? null;
    const pg0 = gateway ? await o.postgresMs() : 0;
    const gc0 = gcLog ? gcLogOffset(gcLog) : 0;
    const lag = t.name === "gateway" && body === o.jsonBody ? (o.rollupLag?.() ?? null) : null;
    const { r, cpuMsPerReq, mainMsPerReq } = await c.cpuPerRequest(t, () =>
      wrk(t, { connections: o.conns, seconds, body, token, core: o.core }),
    );
    const cell: Cell = { ...r, cpuMsPerReq, mainMsPerReq };
    if (lag) cell.rollupLag = await lag.stop();
    if (gateway && r.requests) cell.pgMsPerReq = ((await o.postgresMs()) - pg0) / r.requests;
    if (gcLog && r.requests) {
      const gc = readGcWindow(gcLog, gc0, gcLogOffset(gcLog));
      cell.allocKiBPerReq = gc.allocatedKiB / r.requests;
      cell.gcPauseMaxMs = Math.max(0, ...gc.pausesMs);
      cell.gcPerS = gc.collections / seconds;
    }
    return cell;
  };
  const accountsTargets = (o.accountsTargets ?? ["gateway"]).map((n) => ts.find((t) => t.name === n)!);
  c.log(`saturation: wrk -c${o.conns}, instant upstream; warm-up`);
  for (const t of ts) await run(t, o.jsonBody, c.token, o.warmupSeconds);
  const runs: { repeat: number; order: string[]; json: Record<string, Cell>; sse: Record<string, Cell> }[] = [];
  for (let r = 0; r < c.repeats; r++) {
    const json: Record<string, Cell> = {};
    const sse: Record<string, Cell> = {};
    const ord = order(ts, r);
    for (const t of ord) {
      json[t.name] = await run(t, o.jsonBody, c.token, o.seconds);
      sse[t.name] = await run(t, o.sseBody, c.token, o.seconds);
      const j = json[t.name]!;
      c.log(
        `saturation #${r + 1} ${t.name.padEnd(10)} JSON ${j.rps.toFixed(0)} req/s p99 ${j.latencyMs.p99.toFixed(2)} ms, CPU ${(1000 * (j.cpuMsPerReq ?? NaN)).toFixed(0)} µs/call; SSE ${sse[t.name]!.rps.toFixed(0)} req/s; errors ${j.errors}/${sse[t.name]!.errors}`,
      );
    }
    if (o.tokens.length > 1)
      for (const gw of order(accountsTargets, r)) {
        const cell = (json[`${gw.name}Accounts`] = await run(gw, o.jsonBody, o.tokens, o.seconds));
        c.log(
          `saturation #${r + 1} ${gw.name}, ${o.tokens.length} accounts ${cell.rps.toFixed(0)} req/s p99 ${cell.latencyMs.p99.toFixed(2)} ms`,
        );
      }
    runs.push({ repeat: r + 1, order: ord.map((t) => t.name), json, sse });
  }
  const names = [
    ...ts.map((t) => t.name),
    ...(o.tokens.length > 1 ? accountsTargets.map((t) => `${t.name}Accounts`) : []),
  ];
  const per = <T>(f: (tn: string) => T) => Object.fromEntries(names.map((tn) => [tn, f(tn)]));
  const med = (kind: "json" | "sse", tn: string, f: (x: Cell) => number | null | undefined) =>
    median(runs.map((run) => (run[kind][tn] ? (f(run[kind][tn]!) ?? NaN) : NaN)));
  const rb = (kind: "json" | "sse", tn: string, f: (x: Cell) => number) =>
    robust(runs.filter((run) => run[kind][tn]).map((run) => f(run[kind][tn]!)));
  const overProxy = (tn: string, f: (x: Cell) => number) =>
    robust(runs.map((run) => f(run.json[tn]!) / f(run.json.proxy!)));
  const gw = (f: (x: Cell) => number | undefined) => med("json", "gateway", f);
  return {
    connections: o.conns,
    seconds: o.seconds,
    repeats: c.repeats,
    targets: names,
    accounts: o.tokens.length,
    rps: per((tn) => rb("json", tn, (x) => x.rps)),
    sseRps: per((tn) => rb("sse", tn, (x) => x.rps)),
    latencyP50Ms: per((tn) => rb("json", tn, (x) => x.latencyMs.p50)),
    latencyP99Ms: per((tn) => rb("json", tn, (x) => x.latencyMs.p99)),
    overProxy: per((tn) => overProxy(tn, (x) => x.rps)),
    p99OverProxy: per((tn) => overProxy(tn, (x) => x.latencyMs.p99)),
    gatewayOverProxy: overProxy("gateway", (x) => x.rps),
    ...(o.tokens.length > 1 && { gatewayAccountsOverProxy: overProxy("gatewayAccounts", (x) => x.rps) }),
    gatewayOverDirect: robust(runs.map((run) => run.json.gateway!.rps / run.json.direct!.rps)),
    gatewayP99OverProxy: overProxy("gateway", (x) => x.latencyMs.p99),
    ...(names.includes("portkey") && {
      gatewayOverPortkey: robust(runs.map((run) => run.json.gateway!.rps / run.json.portkey!.rps)),
    }),
    cpuMsPerRequest: per((tn) => med("json", tn, (x) => x.cpuMsPerReq)),
    // One JavaScript thread answers at most 1 / its CPU per request (bench/README.md, "The tail at saturation").
    mainThreadMsPerRequest: per((tn) => med("json", tn, (x) => x.mainMsPerReq)),
    sseCpuMsPerRequest: per((tn) => med("sse", tn, (x) => x.cpuMsPerReq)),
    postgresMsPerRequest: per((tn) => med("json", tn, (x) => x.pgMsPerReq)),
    allocatedKiBPerRequest: per((tn) => med("json", tn, (x) => x.allocKiBPerReq)),
    gcPauseMaxMs: per((tn) => med("json", tn, (x) => x.gcPauseMaxMs)),
    // The gateway's KiB per call and longest pause are in the per-target maps above; results
    // written before 7 December 2026 carried them here only (report-peers.ts reads both).
    gateway: {
      postgresMsPerRequest: gw((x) => x.pgMsPerReq),
      // The worst lag any saturated JSON run saw: the rollup keeps up if it stays near its interval.
      rollupLagMaxSeconds: maxOf(runs.flatMap((run) => run.json.gateway?.rollupLag?.seconds.max ?? [])),
      rollupLagMaxEvents: maxOf(runs.flatMap((run) => run.json.gateway?.rollupLag?.events.max ?? [])),
      gcPerSecond: gw((x) => x.gcPerS),
    },
    errors: per((tn) => runs.reduce((a, run) => a + (run.json[tn]?.errors ?? 0) + (run.sse[tn]?.errors ?? 0), 0)),
    runs,
  };
}
