/**
 * Where the machine's CPU goes at saturation: `bun bench/cpu-split.ts [--seconds=6] [--conns=50]`.
 * Runs wrk against the bare proxy and the gateway (instant upstream, the same body as
 * `npm run bench`), and reads, for each run, the CPU time of the target process, the
 * simulator, every PostgreSQL process, and the whole machine (/proc/stat), so that
 * "CPU ms per request" can be compared component by component. The remainder of the machine
 * is wrk, this runner and everything else on the host. Prints a markdown table.
 */
import { readFileSync } from "node:fs";
import { wrk, type Target } from "./lib/load";
import { cpuMs, postgresMs } from "./lib/procs";
import { checkPostgres, startStack } from "./lib/stack";

const arg = (name: string, d: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? d);
const seconds = arg("seconds", 6);
const conns = arg("conns", 50);
const pg = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const TICK_MS = 1000 / 100; // USER_HZ

/** Busy CPU ms of the whole machine (all cores). */
function machineMs(): number {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3]! + f[4]!;
  return (f.reduce((a, b) => a + b, 0) - idle) * TICK_MS;
}

await checkPostgres(pg);
const stack = await startStack({
  serverUrl: pg,
  targetCore: null,
  loadCore: null,
  gatewayBunFlags: [],
  gatewayEnv: {},
  accounts: 1,
});
const body = JSON.stringify({
  model: "gpt-4o-mini",
  messages: [{ role: "user", content: "Say hello in one short sentence." }],
  max_tokens: 16,
});
const rows: string[] = [];
try {
  for (const [name, url, child] of [
    ["proxy", stack.proxyUrl, stack.proxy],
    ["gateway", stack.gatewayUrl, stack.gateway],
  ] as const) {
    const target: Target = { name, url: `${url}/v1/chat/completions` } as Target;
    await wrk(target, { connections: conns, seconds: 2, body, token: stack.token, core: null }); // warm-up
    const before = { t: cpuMs(child.pid)!, s: cpuMs(stack.sim.pid)!, p: postgresMs(), m: machineMs() };
    const r = await wrk(target, { connections: conns, seconds, body, token: stack.token, core: null });
    const after = { t: cpuMs(child.pid)!, s: cpuMs(stack.sim.pid)!, p: postgresMs(), m: machineMs() };
    const per = (a: number, b: number) => ((a - b) / r.requests).toFixed(3);
    const rest = after.m - before.m - (after.t - before.t) - (after.s - before.s) - (after.p - before.p);
    rows.push(
      `| ${name} | ${Math.round(r.rps)} | ${per(after.t, before.t)} | ${per(after.s, before.s)} | ${per(after.p, before.p)} | ${(rest / r.requests).toFixed(3)} | ${per(after.m, before.m)} | ${((after.m - before.m) / (seconds * 1000)).toFixed(2)} |`,
    );
  }
} finally {
  await stack.stop();
}
console.log(`wrk -c${conns}, ${seconds} s, instant upstream; CPU ms per request by process\n`);
console.log("| target | req/s | target process | simulator | PostgreSQL | wrk + rest | machine | cores busy |");
console.log("|---|---|---|---|---|---|---|---|");
for (const r of rows) console.log(r);
