/**
 * Where the saturated tail comes from: `bun bench/tail.ts [--seconds=6] [--repeats=3] [--conns=64]`.
 * Runs wrk against the bare proxy and the gateway under several ledger and logging settings
 * (each a fresh stack), alternating proxy and gateway within each repeat so that machine noise
 * moves both alike, and reads from the gateway's /metrics how long calls waited for their hold
 * and settle (gateway_ledger_wait_seconds) and how late its event loop ran. CPU per request of
 * the gateway and of PostgreSQL comes from /proc, the gateway's and the proxy's also per thread:
 * the JavaScript thread runs everything but the sockets of `fetch`, so 1 / its CPU per request
 * is the most this process could answer were the machine its own (the main-thread ceiling).
 * The gateway runs with JavaScriptCore's GC log on (lib/gc-log.ts): how often it collected, how
 * long each pause held its JavaScript thread, and how much each request allocated.
 * A run with any error answer stops the script. Prints a markdown table; medians over repeats.
 */
import { wrk, type Target } from "./lib/load";
import { gcLogOffset, readGcWindow } from "./lib/gc-log";
import { databaseCpu } from "./lib/pg-cpu";
import { cpuMs, threadCpuMs } from "./lib/procs";
import { ADMIN_TOKEN, checkPostgres, startStack } from "./lib/stack";

const arg = (name: string, d: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? d);
const seconds = arg("seconds", 6);
const repeats = arg("repeats", 3);
const conns = arg("conns", 64);
const only = process.argv
  .find((a) => a.startsWith("--only="))
  ?.split("=")[1]
  ?.split(",");
const pg = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

const VARIANTS: { name: string; env: Record<string, string> }[] = [
  { name: "defaults", env: {} },
  { name: "no leases", env: { LEDGER_LEASES: "off" } },
  { name: "no request log", env: { LOG_REQUESTS: "off" } },
  { name: "settle behind answer", env: { LEDGER_SETTLE: "behind_answer" } },
  { name: "async commit", env: { LEDGER_COMMIT: "async" } },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A histogram's cumulative buckets (le → count) for the series whose labels include `match`. */
function buckets(text: string, name: string, match: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}_bucket{`) || !line.includes(match)) continue;
    const le = line.match(/le="([^"]+)"/)![1]!;
    out.set(le === "+Inf" ? Infinity : Number(le), Number(line.slice(line.lastIndexOf(" ") + 1)));
  }
  return out;
}

/** The upper bound (ms) of the bucket holding quantile `q` of what was observed between two scrapes. */
function quantileMs(before: Map<number, number>, after: Map<number, number>, q: number): number {
  const les = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Infinity) ?? 0) - (before.get(Infinity) ?? 0);
  if (!total) return NaN;
  for (const le of les) if ((after.get(le)! - (before.get(le) ?? 0)) / total >= q) return le * 1000;
  return Infinity;
}

const metrics = async (url: string) =>
  (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();

await checkPostgres(pg);
const body = JSON.stringify({
  model: "gpt-4o-mini",
  messages: [{ role: "user", content: "Say hello in one short sentence." }],
  max_tokens: 16,
});
const rows: string[] = [];
for (const variant of VARIANTS.filter((v) => !only || only.includes(v.name))) {
  const stack = await startStack({
    serverUrl: pg,
    targetCore: null,
    loadCore: null,
    gatewayBunFlags: [],
    gatewayEnv: variant.env,
    accounts: 1,
    gcLog: true,
  });
  const proxy: Target = { name: "proxy", url: `${stack.proxyUrl}/openai/v1/chat/completions` };
  const gateway: Target = { name: "gateway", url: `${stack.gatewayUrl}/v1/chat/completions` };
  const runs: Record<string, number>[] = [];
  // The gateway database's own backends: other databases on a shared server do not count.
  const pgCpu = databaseCpu(pg, stack.dbName);
  try {
    for (const t of [proxy, gateway])
      await wrk(t, { connections: conns, seconds: 3, body, token: stack.token, core: null });
    for (let r = 0; r < repeats; r++) {
      const proxyBefore = threadCpuMs(stack.proxy.pid);
      const p = await wrk(proxy, { connections: conns, seconds, body, token: stack.token, core: null });
      const proxyAfter = threadCpuMs(stack.proxy.pid);
      const snapshot = async () => ({
        text: await metrics(stack.gatewayUrl),
        gw: cpuMs(stack.gateway.pid)!,
        threads: threadCpuMs(stack.gateway.pid),
        pg: await pgCpu.ms(),
        gc: gcLogOffset(stack.gatewayGcLog!),
      });
      const before = await snapshot();
      const g = await wrk(gateway, { connections: conns, seconds, body, token: stack.token, core: null });
      const after = await snapshot();
      const gc = readGcWindow(stack.gatewayGcLog!, before.gc, after.gc);
      // A run that measured error answers (a wrong path, a refused key) measures nothing.
      for (const [name, res] of [
        ["proxy", p],
        ["gateway", g],
      ] as const)
        if (res.errors) throw new Error(`${variant.name}: ${res.errors} of ${name}'s answers were errors`);
      const wait = (step: string, q: number) =>
        quantileMs(
          buckets(before.text, "gateway_ledger_wait_seconds", `step="${step}"`),
          buckets(after.text, "gateway_ledger_wait_seconds", `step="${step}"`),
          q,
        );
      const lag = (q: number) =>
        quantileMs(
          buckets(before.text, "gateway_event_loop_lag_seconds", ""),
          buckets(after.text, "gateway_event_loop_lag_seconds", ""),
          q,
        );
      runs.push({
        proxyRps: p.rps,
        proxyP99: p.latencyMs.p99,
        rps: g.rps,
        p50: g.latencyMs.p50,
        p99: g.latencyMs.p99,
        holdP50: wait("hold", 0.5),
        holdP99: wait("hold", 0.99),
        settleP50: wait("settle", 0.5),
        settleP99: wait("settle", 0.99),
        lagP99: lag(0.99),
        gwCpu: (after.gw - before.gw) / g.requests,
        gwMain: (after.threads.main - before.threads.main) / g.requests,
        gwHttp: (after.threads.httpClient - before.threads.httpClient) / g.requests,
        proxyMain: (proxyAfter.main - proxyBefore.main) / p.requests,
        proxyHttp: (proxyAfter.httpClient - proxyBefore.httpClient) / p.requests,
        gcPerS: gc.collections / seconds,
        gcPauseP50: gc.pausesMs.length ? median(gc.pausesMs) : 0,
        gcPauseMax: Math.max(0, ...gc.pausesMs),
        gcShare: gc.pausesMs.reduce((a, b) => a + b, 0) / (seconds * 1000),
        allocKiB: gc.allocatedKiB / g.requests,
        pgCpu: (after.pg - before.pg) / g.requests,
      });
      console.error(
        `${variant.name} #${r + 1}: gateway ${g.rps.toFixed(0)} req/s p99 ${g.latencyMs.p99.toFixed(2)} ms; proxy ${p.rps.toFixed(0)} req/s p99 ${p.latencyMs.p99.toFixed(2)} ms`,
      );
    }
  } finally {
    await pgCpu.end();
    await stack.stop();
  }
  const m = (k: string) => median(runs.map((r) => r[k]!));
  const ratio = (a: string, b: string) => median(runs.map((r) => r[a]! / r[b]!));
  const ms = (v: number) => (Number.isFinite(v) ? (v < 1 ? `≤ ${v.toFixed(1)}` : `≤ ${v.toFixed(0)}`) : "–");
  rows.push(
    `| ${variant.name} | ${m("rps").toFixed(0)} | ${(ratio("rps", "proxyRps") * 100).toFixed(1)} % | ${m("p50").toFixed(2)} | ${m("p99").toFixed(2)} | ${ratio("p99", "proxyP99").toFixed(2)} × | ${ms(m("holdP50"))} / ${ms(m("holdP99"))} | ${ms(m("settleP50"))} / ${ms(m("settleP99"))} | ${ms(m("lagP99"))} | ${m("gwCpu").toFixed(3)} | ${m("gwMain").toFixed(3)} / ${m("gwHttp").toFixed(3)} | ${m("proxyMain").toFixed(3)} / ${m("proxyHttp").toFixed(3)} | ${(1 / m("gwMain")).toFixed(1)}k | ${m("pgCpu").toFixed(3)} | ${m("gcPerS").toFixed(0)} | ${m("gcPauseP50").toFixed(1)} / ${m("gcPauseMax").toFixed(1)} | ${(m("gcShare") * 100).toFixed(1)} % | ${m("allocKiB").toFixed(0)} |`,
  );
}
console.log(
  `wrk -c${conns}, ${seconds} s × ${repeats} per variant (each beside a proxy run), instant upstream; medians over repeats\n`,
);
console.log(
  "| variant | gateway req/s | ÷ proxy | p50 ms | p99 ms | p99 ÷ proxy p99 | hold wait p50 / p99 ms | settle wait p50 / p99 ms | event-loop lag p99 ms | gateway CPU ms/req | gateway main / HTTP-client thread ms/req | proxy main / HTTP-client thread ms/req | main-thread ceiling req/s | PostgreSQL CPU ms/req | GCs/s | GC pause p50 / max ms | GC pauses ÷ wall time | KiB allocated/req |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of rows) console.log(r);
