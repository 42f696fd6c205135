/**
 * `bun bench/pair.ts --pair=processes|settle`: two configurations of the gateway measured in one
 * run, alternating, beside the upstream called directly and the bare proxy (bench/README.md,
 * "Two configurations in one run"). Both gateways run at once on the same fresh PostgreSQL
 * database (the second started once the first has migrated it) and serve the same account and
 * key; only one target is loaded at a time, and each repeat visits the targets in a rotated order.
 *
 *   --pair=processes   `PROCESSES=1` (target `gateway`) against `PROCESSES=2` (`gateway-2p`: a
 *                      supervisor and two gateway processes on one port), both with REDIS_URL
 *                      (a redis-server of the run's own), saturated with wrk: JSON and SSE
 *                      req/s, wrk's p50/p99, CPU per call of each process tree (all threads, and
 *                      the JavaScript threads summed) and of the database's PostgreSQL backends
 *   --pair=tree        this tree (`gateway`) against another checkout's (`gateway-base`, `--base=DIR`,
 *                      e.g. a `git worktree` of an earlier commit with this node_modules linked),
 *                      both with the defaults, saturated with wrk as for `processes` (no Redis):
 *                      one sitting, alternating, for a change's before and after
 *   --pair=settle      the defaults (`gateway`, the settle before the answer) against
 *                      `LEDGER_SETTLE=behind_answer` (`gateway-behind`), open loop: JSON at
 *                      `--rate` a second against a 20 ms upstream (added p50/p99 over direct) and
 *                      50 streams a second (time to first byte)
 *   --accounts=N       processes: both gateways also run with N funded accounts in round robin
 *                      (default 8; 1 turns it off), each key's calls one account's
 *   --repeats=N        repeats (default 3)     --seconds=S   per target and repeat (default 6 / 8)
 *   --rate=N           open-loop rate (default 200)           --conns=N     wrk connections (default 64)
 *   --pg=URL           PostgreSQL server (default 127.0.0.1:5432, user postgres)
 *   --out=NAME         results file (default issue30-<pair>): bench/results/NAME.{json,md}
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { compareOpenLoop, type CompareContext } from "./lib/compare-open";
import type { Target } from "./lib/load";
import { databaseCpu } from "./lib/pg-cpu";
import { pgFloor, type PgFloor } from "./lib/pg-floor";
import { freePort, processTree, spawnChild, treeCpuMs, waitReady, type Child } from "./lib/procs";
import { saturation } from "./lib/saturation";
import { checkPostgres, startStack } from "./lib/stack";
import { chatTargets, INSTANT_BODY, INSTANT_STREAM_BODY, NONSTREAM_BODY, STREAM_BODY } from "./lib/targets";
import { robust, type Robust } from "./lib/summary";

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? undefined;
const pair = arg("pair");
if (pair !== "processes" && pair !== "settle" && pair !== "tree") {
  console.error("usage: bun bench/pair.ts --pair=processes|settle|tree [--repeats=N] [--seconds=S] (see its header)");
  process.exit(2);
}
const baseRoot = arg("base");
if (pair === "tree" && !baseRoot) {
  console.error(
    "--pair=tree needs --base=DIR: a checkout of the commit to compare with (its node_modules installed or linked)",
  );
  process.exit(2);
}
/** Saturated with wrk (processes, tree), or open loop (settle). */
const saturated = pair !== "settle";
const repeats = Number(arg("repeats") ?? 3);
const seconds = Number(arg("seconds") ?? (pair === "settle" ? 8 : 6));
const rate = Number(arg("rate") ?? 200);
const conns = Number(arg("conns") ?? 64);
const nAccounts = Math.max(1, Number(arg("accounts") ?? 8));
const pgServer = arg("pg") ?? process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const outName = arg("out") ?? `issue30-${pair}`;
const log = (...a: unknown[]) => console.log(`[${new Date().toISOString().slice(11, 19)}]`, ...a);
for (const k of ["LEDGER_SETTLE", "PROCESSES"])
  if (process.env[k]) {
    console.error(`${k} is set in the environment; bench/pair.ts sets it per gateway itself`);
    process.exit(2);
  }
if (saturated && !Bun.which("wrk")) {
  console.error("--pair=processes and --pair=tree need wrk (apt-get install -y wrk)");
  process.exit(2);
}
if (pair === "processes" && !Bun.which("redis-server")) {
  console.error("--pair=processes needs wrk and redis-server (apt-get install -y wrk redis-server)");
  process.exit(2);
}
await checkPostgres(pgServer);

const second = pair === "processes" ? "gateway-2p" : pair === "tree" ? "gateway-base" : "gateway-behind";
let redis: Child | null = null;
const baseEnv: Record<string, string> = {};
if (pair === "processes") {
  // A redis-server of this run's own: several processes need one, and nobody else's keys count.
  const port = await freePort();
  redis = spawnChild(
    "redis",
    ["redis-server", "--port", String(port), "--save", "", "--appendonly", "no"],
    { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    null,
  );
  await Bun.sleep(300);
  baseEnv.REDIS_URL = `redis://127.0.0.1:${port}`;
  baseEnv.PROCESSES = "1";
}
log(`starting simulator, gateway, ${second} and bare proxy`);
const stack = await startStack({
  serverUrl: pgServer,
  targetCore: null,
  loadCore: null,
  gatewayBunFlags: [],
  gatewayEnv: baseEnv,
  accounts: saturated ? nAccounts : 1,
  extraGateways: [
    pair === "tree"
      ? { name: second, env: {}, root: baseRoot }
      : { name: second, env: pair === "processes" ? { PROCESSES: "2" } : { LEDGER_SETTLE: "behind_answer" } },
  ],
}).catch(async (e) => {
  await redis?.stop();
  throw e;
});

const targets: Target[] = [
  ...chatTargets(stack),
  { name: second, url: `${stack.extra[second]!.url}/v1/chat/completions` },
];
const pidOf: Record<string, number> = {
  direct: stack.sim.pid,
  proxy: stack.proxy.pid,
  gateway: stack.gateway.pid,
  [second]: stack.extra[second]!.child.pid,
};
const treeAtStart = Object.fromEntries(Object.entries(pidOf).map(([n, p]) => [n, processTree(p)]));

/** The machine's busy CPU ticks (every core, all but idle and I/O wait) so far, from /proc/stat. */
const busyTicks = () => {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  return f.reduce((a, b) => a + b, 0) - f[3]! - f[4]!;
};
/** Per target, each measured window's busy cores (of all of the machine's): is the machine the limit? */
const machineBusy: Record<string, number[]> = {};

const ctx: CompareContext = {
  repeats,
  token: stack.token,
  warmupMs: 5000,
  log,
  // CPU of the target's whole process tree: a supervisor and its gateway processes for PROCESSES=2.
  async cpuPerRequest(t, fn) {
    const pid = pidOf[t.name]!;
    const before = treeCpuMs(pid);
    const [b0, t0] = [busyTicks(), performance.now()];
    const r = await fn();
    const after = treeCpuMs(pid);
    (machineBusy[t.name] ??= []).push((busyTicks() - b0) / 100 / ((performance.now() - t0) / 1000));
    const n = r.ok ?? r.requests ?? 0;
    return {
      r,
      cpuMsPerReq: n ? (after.total - before.total) / n : null,
      mainMsPerReq: n ? (after.main - before.main) / n : null,
    };
  },
};

const loadSamples: number[] = [];
const loadAvg = () => Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
const loadAtStart = loadAvg();
const loadTimer = setInterval(() => loadSamples.push(loadAvg()), 5000);
const started = Date.now();
const results: Record<string, any> = {};
try {
  if (saturated) {
    const pg = databaseCpu(pgServer, stack.dbName);
    results.saturation = await saturation(ctx, targets, {
      postgresMs: pg.ms,
      conns,
      seconds,
      warmupSeconds: 2,
      jsonBody: INSTANT_BODY,
      sseBody: INSTANT_STREAM_BODY,
      tokens: nAccounts > 1 ? stack.tokens : [],
      accountsTargets: ["gateway", second],
      core: null,
      gcLogs: {},
    }).finally(pg.end);
  } else {
    results.nonstream = await compareOpenLoop(ctx, "non-streaming", targets, {
      rate,
      ms: seconds * 1000,
      body: NONSTREAM_BODY,
      stream: false,
      metrics: { latency: (r) => r.latency },
    });
    results.stream = await compareOpenLoop(ctx, "streaming", targets, {
      rate: 50,
      ms: Math.max(3, Math.round(seconds * 0.6)) * 1000,
      body: STREAM_BODY,
      stream: true,
      metrics: { ttfb: (r) => r.ttfb },
    });
    // The floor under the settle: the same server's statements at the same pace, on the run's database.
    log("PostgreSQL's own cost per statement at the open loop's pace");
    results.pgFloor = await pgFloor(stack.dbUrl, rate);
  }
} finally {
  clearInterval(loadTimer);
  results.machineBusyCores = Object.fromEntries(Object.entries(machineBusy).map(([n, v]) => [n, robust(v)]));
  // A process that died and was started again mid-run would have dropped out of the CPU sums.
  results.processTrees = Object.fromEntries(
    Object.entries(pidOf).map(([n, p]) => [
      n,
      { atStart: treeAtStart[n]!.length, atEnd: processTree(p).length, sameProcesses: sameTree(n, p) },
    ]),
  );
  log("stopping");
  await stack.stop();
  await redis?.stop();
}

function sameTree(name: string, pid: number): boolean {
  const now = processTree(pid);
  return now.length === treeAtStart[name]!.length && now.every((p) => treeAtStart[name]!.includes(p));
}

const meta = {
  pair,
  date: new Date().toISOString(),
  durationSeconds: Math.round((Date.now() - started) / 1000),
  commit: (await Bun.$`git -C ${join(import.meta.dir, "..")} rev-parse --short HEAD`.nothrow().quiet().text()).trim(),
  bun: Bun.version,
  cpu: cpus()[0]?.model ?? "?",
  cores: cpus().length,
  layout: "no pinning: the gateways, simulator, bare proxy, this runner, wrk, PostgreSQL (and Redis) share every core",
  gateways:
    pair === "processes"
      ? { gateway: "PROCESSES=1, REDIS_URL", [second]: "PROCESSES=2, REDIS_URL" }
      : pair === "tree"
        ? { gateway: "this tree, defaults", [second]: `${baseRoot} at ${await commitOf(baseRoot!)}, defaults` }
        : { gateway: "defaults (settle before the answer)", [second]: "LEDGER_SETTLE=behind_answer" },
  options: { repeats, seconds, rate, conns },
  machineLoad: {
    atStart: loadAtStart,
    meanDuringRun: loadSamples.length ? loadSamples.reduce((a, b) => a + b, 0) / loadSamples.length : null,
    maxDuringRun: loadSamples.length ? Math.max(...loadSamples) : null,
  },
};

async function commitOf(dir: string): Promise<string> {
  return (await Bun.$`git -C ${dir} rev-parse --short HEAD`.nothrow().quiet().text()).trim() || "?";
}

const f = (x: number | null | undefined, d = 2) =>
  x === null || x === undefined || !Number.isFinite(x)
    ? "–"
    : x.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
const rb = (r: Robust | undefined, d = 2) => (r ? `${f(r.median, d)} (${f(r.min, d)}…${f(r.max, d)})` : "–");
const ratio = (a: number[], b: number[]) => a.map((x, i) => x / b[i]!);

const md: string[] = [
  `# ${pair === "processes" ? "PROCESSES=1 against PROCESSES=2" : pair === "tree" ? `This tree against ${meta.gateways[second]}` : "The settle before the answer, with and without"} (bench/pair.ts --pair=${pair})`,
  "",
  `${meta.date}, commit ${meta.commit}, Bun ${meta.bun}, ${meta.cores} × ${meta.cpu}; ${meta.layout}.`,
  `Load average (1 min) at start ${f(meta.machineLoad.atStart)}, mean ${f(meta.machineLoad.meanDuringRun)}, max ${f(meta.machineLoad.maxDuringRun)} during the run (${meta.durationSeconds} s). ${repeats} repeats, targets in rotated order; cells are medians over repeats (min…max).`,
  "",
];
if (pair === "processes") {
  const s = results.saturation;
  const rps = (tn: string) => s.runs.map((r: any) => r.json[tn].rps as number);
  const sse = (tn: string) => s.runs.map((r: any) => r.sse[tn].rps as number);
  const p99 = (tn: string) => s.runs.map((r: any) => r.json[tn].latencyMs.p99 as number);
  md.push(
    `wrk -c${conns}, ${seconds} s per target and kind, instant upstream, one account (rows "${nAccounts} accounts": JSON, keys of ${nAccounts} accounts in round robin). CPU per call is of the target's process tree (for PROCESSES=2 the supervisor and its two gateway processes) and, for the gateways, of their database's PostgreSQL backends; wrk, the simulator and PostgreSQL run on the same 2 cores, so a second gateway process competes with them for CPU.`,
    "",
    "| target | JSON req/s | p50 ms | p99 ms | SSE req/s | CPU ms/call (tree) | JS threads ms/call | PostgreSQL ms/call | SSE CPU ms/call |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
  );
  const label = (tn: string) =>
    tn
      .replace(/^gateway-2p/, "gateway, PROCESSES=2")
      .replace(/^gateway(?!,)/, "gateway, PROCESSES=1")
      .replace(/Accounts$/, `, ${nAccounts} accounts`);
  for (const tn of s.targets as string[])
    md.push(
      `| ${label(tn)} | ${rb(s.rps[tn], 0)} | ${rb(s.latencyP50Ms[tn])} | ${rb(s.latencyP99Ms[tn])} | ${rb(s.sseRps[tn], 0)} | ${f(s.cpuMsPerRequest[tn], 3)} | ${f(s.mainThreadMsPerRequest[tn], 3)} | ${f(s.postgresMsPerRequest[tn], 3)} | ${f(s.sseCpuMsPerRequest[tn], 3)} |`,
    );
  const rows: [string, Robust][] = [
    ["JSON req/s, PROCESSES=2 ÷ PROCESSES=1", robust(ratio(rps(second), rps("gateway")))],
    ["SSE req/s, PROCESSES=2 ÷ PROCESSES=1", robust(ratio(sse(second), sse("gateway")))],
    ["JSON p99, PROCESSES=2 ÷ PROCESSES=1", robust(ratio(p99(second), p99("gateway")))],
    ...(nAccounts > 1
      ? ([
          [
            `JSON req/s, ${nAccounts} accounts, PROCESSES=2 ÷ PROCESSES=1`,
            robust(ratio(rps(`${second}Accounts`), rps("gatewayAccounts"))),
          ],
        ] as [string, Robust][])
      : []),
    ["JSON req/s, PROCESSES=1 ÷ bare proxy", robust(ratio(rps("gateway"), rps("proxy")))],
    ["JSON req/s, PROCESSES=2 ÷ bare proxy", robust(ratio(rps(second), rps("proxy")))],
    ["JSON p99, PROCESSES=1 ÷ bare proxy", robust(ratio(p99("gateway"), p99("proxy")))],
    ["JSON p99, PROCESSES=2 ÷ bare proxy", robust(ratio(p99(second), p99("proxy")))],
  ];
  results.ratios = Object.fromEntries(rows);
  md.push("", "Ratios within each repeat, then the median (min…max):", "", "| ratio | value |", "|---|---:|");
  for (const [k, v] of rows) md.push(`| ${k} | ${rb(v)} |`);
  md.push("", `Errors (non-2xx or socket) per target: ${JSON.stringify(s.errors)}.`);
} else if (pair === "tree") {
  const s = results.saturation;
  const per = (kind: "json" | "sse", tn: string, k: string) => s.runs.map((r: any) => r[kind][tn][k] as number);
  md.push(
    `wrk -c${conns}, ${seconds} s per target and kind, instant upstream, one account (rows "Accounts": JSON, keys of ${nAccounts} accounts in round robin). Both gateways run at once on one database with the defaults; only one is loaded at a time. CPU per call is of the target's process and, for the gateways, of their database's PostgreSQL backends.`,
    "",
    "| target | JSON req/s | p50 ms | p99 ms | SSE req/s | CPU ms/call | JS thread ms/call | PostgreSQL ms/call | SSE CPU ms/call |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
  );
  for (const tn of s.targets as string[])
    md.push(
      `| ${tn} | ${rb(s.rps[tn], 0)} | ${rb(s.latencyP50Ms[tn])} | ${rb(s.latencyP99Ms[tn])} | ${rb(s.sseRps[tn], 0)} | ${f(s.cpuMsPerRequest[tn], 3)} | ${f(s.mainThreadMsPerRequest[tn], 3)} | ${f(s.postgresMsPerRequest[tn], 3)} | ${f(s.sseCpuMsPerRequest[tn], 3)} |`,
    );
  const rows: [string, Robust][] = [
    ["JSON req/s, this tree ÷ base", robust(ratio(per("json", "gateway", "rps"), per("json", second, "rps")))],
    ["SSE req/s, this tree ÷ base", robust(ratio(per("sse", "gateway", "rps"), per("sse", second, "rps")))],
    [
      "JS thread ms/call, this tree ÷ base",
      robust(ratio(per("json", "gateway", "mainMsPerReq"), per("json", second, "mainMsPerReq"))),
    ],
    [
      "CPU ms/call, this tree ÷ base",
      robust(ratio(per("json", "gateway", "cpuMsPerReq"), per("json", second, "cpuMsPerReq"))),
    ],
    ["JSON req/s, this tree ÷ bare proxy", robust(ratio(per("json", "gateway", "rps"), per("json", "proxy", "rps")))],
    ["JSON req/s, base ÷ bare proxy", robust(ratio(per("json", second, "rps"), per("json", "proxy", "rps")))],
  ];
  results.ratios = Object.fromEntries(rows);
  md.push("", "Ratios within each repeat, then the median (min…max):", "", "| ratio | value |", "|---|---:|");
  for (const [k, v] of rows) md.push(`| ${k} | ${rb(v)} |`);
  md.push("", `Errors (non-2xx or socket) per target: ${JSON.stringify(s.errors)}.`);
} else {
  const lat = results.nonstream.summary.latency;
  const ttfb = results.stream.summary.ttfb;
  // defaults − behind_answer within each repeat: what the settle before the answer costs.
  const cost = (res: any, metric: string, p: string) =>
    robust(res.runs.map((r: any) => r.byTarget.gateway.metrics[metric][p] - r.byTarget[second].metrics[metric][p]));
  md.push(
    `Open loop: JSON at ${rate} req/s for ${seconds} s per target and repeat against a 20 ms upstream, latency from the scheduled send; streams at 50 a second (20 ms to the first chunk, 5 ms between chunks), time to first byte. Added = target − direct within each repeat, then the median.`,
    "",
    "| target | JSON p50 ms | JSON p99 ms | added p50 | added p99 | stream TTFB p50 | TTFB added p50 | CPU ms/call (JSON) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
  );
  for (const tn of results.nonstream.targets as string[])
    md.push(
      `| ${tn === "gateway" ? "gateway, defaults (settle before the answer)" : tn === second ? "gateway, LEDGER_SETTLE=behind_answer" : tn} | ${rb(lat.p50[tn])} | ${rb(lat.p99[tn])} | ${rb(lat.p50.minusDirect[tn])} | ${rb(lat.p99.minusDirect[tn])} | ${rb(ttfb.p50[tn])} | ${rb(ttfb.p50.minusDirect[tn])} | ${f(results.nonstream.cpuMsPerRequest[tn], 3)} |`,
    );
  const rows: [string, Robust][] = [
    [
      "JSON p50: defaults − behind_answer (what the settle before the answer costs)",
      cost(results.nonstream, "latency", "p50"),
    ],
    ["JSON p99: defaults − behind_answer", cost(results.nonstream, "latency", "p99")],
    ["stream TTFB p50: defaults − behind_answer", cost(results.stream, "ttfb", "p50")],
  ];
  results.settleCost = Object.fromEntries(rows);
  md.push("", "Paired within each repeat, then the median (min…max), ms:", "", "| difference | ms |", "|---|---:|");
  for (const [k, v] of rows) md.push(`| ${k} | ${rb(v)} |`);
  const floor = results.pgFloor as PgFloor;
  md.push(
    "",
    `The floor under the settle (bench/lib/pg-floor.ts): one statement every ${f(1000 / rate)} ms on one connection to the run's database, after the JSON runs, ${floor.perKind} of each kind in turn; ms from send to answer:`,
    "",
    "| statement | p50 | p90 | p99 |",
    "|---|---:|---:|---:|",
    ...(
      [
        ["`select 1` (a round trip)", floor.select1],
        ["one-row insert, durable commit (the settle's kind of statement)", floor.insertDurable],
        ["one-row insert, `synchronous_commit = off`", floor.insertAsync],
      ] as const
    ).map(([k, d]) => `| ${k} | ${f(d.p50)} | ${f(d.p90)} | ${f(d.p99)} |`),
  );
  md.push(
    "",
    `Errors per target: JSON ${JSON.stringify(results.nonstream.errors)}, streams ${JSON.stringify(results.stream.errors)}; prober send lag p99 ${f(results.nonstream.proberSendLagP99Ms)} ms.`,
  );
}
md.push(
  `Busy cores of the machine's ${meta.cores} while each target was measured (every measured window, median (min…max); the warm-ups not counted): ${Object.entries(
    results.machineBusyCores as Record<string, Robust>,
  )
    .map(([n, v]) => `${n} ${rb(v)}`)
    .join(", ")}.`,
);
md.push(`Process trees (start → end, same pids): ${JSON.stringify(results.processTrees)}.`, "");

const dir = join(import.meta.dir, "results");
mkdirSync(dir, { recursive: true });
writeFileSync(
  join(dir, `${outName}.json`),
  JSON.stringify(
    { meta, results },
    (_, v) => (typeof v === "number" ? (Number.isFinite(v) ? Math.round(v * 1000) / 1000 : null) : v),
    2,
  ) + "\n",
);
writeFileSync(join(dir, `${outName}.md`), md.join("\n"));
log(`wrote bench/results/${outName}.json and .md`);
console.log("\n" + md.join("\n"));
