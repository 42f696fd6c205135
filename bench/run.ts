/**
 * `npm run bench` (= `bun bench/run.ts`): what the gateway adds, measured side by side with
 * the upstream simulator called directly, a bare Bun `fetch` proxy, a Bun proxy doing the
 * essentials (bench/essentials-proxy.ts) and Portkey's gateway on Bun when installed, in one run.
 * See bench/README.md for how to read the output (bench/results/<out>.{json,md}).
 *
 * Flags:
 *   --only=nonstream,stream,messages,saturation,sweep,streams,memory,alloc,stats   scenarios to run (default: all but stats)
 *                      memory: bench/memory.ts, `npm start` on PGlite (fresh DATA_DIR, then a
 *                      restart) with 300 chat calls each; runs first, before the PostgreSQL stack
 *                      alloc: bench/alloc.ts, KiB allocated per call with the collector off, on a
 *                      stack of its own; runs next
 *   --stats            also run the stats scenario (bench/stats.ts: a million usage events, ~2 minutes)
 *   --quick            halve every duration (about 2.5 minutes; the default run takes about 5)
 *   --scale=F          multiply every duration by F
 *   --repeats=N        repeats of each compared scenario (default 3), targets alternating
 *   --rate=N           open-loop rate for the non-streaming scenario (default 200/s)
 *   --conns=N          wrk connections for the saturation scenario (default 64)
 *   --streams=N        concurrent streams in the memory scenario (default 500)
 *   --accounts=N       saturation also runs the gateway with N funded accounts in round robin
 *                      (default 8; 1 turns it off): one busy account is PostgreSQL's worst case
 *   --pin              pin with taskset: target on core 0; simulator, prober and wrk on core 1
 *                      (default off: on a shared 2-core machine other work lands on core 0 too,
 *                      and the pinned target cannot move away from it; see bench/README.md)
 *   --profile          run the gateway under `bun --cpu-prof-md` (profile in bench/results/profile/)
 *   --pg=URL           PostgreSQL server to create the throwaway database on
 *   --out=NAME         results file name (default: latest)
 *   --label=TEXT       free text stored with the results (e.g. "before")
 *   --otel             export the gateway's traces to an OTLP sink (bench/otlp-sink.ts)
 *   --portkey=DIR      an `npm install --prefix DIR @portkey-ai/gateway@1.15.2` outside the repository
 *                      (or BENCH_PORTKEY_DIR): Portkey on Bun is measured beside the others; skipped when absent
 *
 * BENCH_GATEWAY_ROOT=DIR measures the gateway of another checkout under this harness (before/after pairs).
 *
 * The gateway runs with a deployment's logging defaults (LOG_LEVEL=info, a JSON line per
 * request, written to a file); LOG_REQUESTS=off or LOG_LEVEL=warn in the environment turn it off.
 */
import postgres from "postgres";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { compareOpenLoop, order, type CompareContext } from "./lib/compare-open";
import { openStreams, wrk, type Target, type WrkResult } from "./lib/load";
import { startPeers, type Peer } from "./lib/peers";
import { databaseCpu } from "./lib/pg-cpu";
import { sampleRollupLag } from "./lib/rollup-lag";
import { saturation } from "./lib/saturation";
import { cpuMs, rssMiB, taskset, threadCpuMs } from "./lib/procs";
import { heapReading } from "./lib/heap-probe";
import { checkPostgres, startStack, type Stack } from "./lib/stack";
import { r2 } from "./lib/summary";
import {
  chatTargets,
  INSTANT_BODY,
  INSTANT_STREAM_BODY,
  LONG_STREAM_BODY,
  MESSAGES_STREAM_BODY,
  messagesTargets,
  NONSTREAM_BODY,
  STREAM_BODY,
  withPeers,
} from "./lib/targets";
import { renderMarkdown } from "./lib/report";
import { memoryScenario, type MemoryResult } from "./memory";
import { allocScenario } from "./alloc";
import { observability } from "./lib/observability";

const ALL = ["nonstream", "stream", "messages", "saturation", "sweep", "streams", "memory", "alloc", "stats"] as const;
type Scenario = (typeof ALL)[number];

function flag(name: string): string | undefined {
  const a = process.argv.find((x) => x === `--${name}` || x.startsWith(`--${name}=`));
  if (!a) return undefined;
  return a.includes("=") ? a.slice(a.indexOf("=") + 1) : "true";
}

const unknown = process.argv
  .slice(2)
  .filter(
    (a) =>
      !/^--(only|stats|quick|scale|repeats|rate|conns|streams|accounts|pin|no-pin|profile|pg|out|label|otel|portkey)(=.*)?$/.test(
        a,
      ),
  );
if (unknown.length || flag("help")) {
  console.error(`unknown argument(s): ${unknown.join(" ")}\nsee the header of bench/run.ts for the flags`);
  process.exit(2);
}

const only = new Set<Scenario>(
  (flag("only")?.split(",") as Scenario[] | undefined) ?? ALL.filter((x) => x !== "stats"),
);
if (flag("stats")) only.add("stats");
for (const s of only) if (!ALL.includes(s)) throw new Error(`unknown scenario ${s}; known: ${ALL.join(", ")}`);
const scale = Number(flag("scale") ?? (flag("quick") ? 0.5 : 1));
const repeats = Number(flag("repeats") ?? 3);
const rate = Number(flag("rate") ?? 200);
const conns = Number(flag("conns") ?? 64);
const nStreams = Number(flag("streams") ?? 500);
const nAccounts = Math.max(1, Number(flag("accounts") ?? 8));
const pin = !!flag("pin") && !flag("no-pin") && taskset() !== null && cpus().length >= 2;
const profile = !!flag("profile");
const otel = !!flag("otel");
const portkeyDir = flag("portkey") ?? process.env.BENCH_PORTKEY_DIR;
const pgServer = flag("pg") ?? process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const outName = flag("out") ?? "latest";
const label = flag("label") ?? "";
const sec = (s: number) => Math.max(1, Math.round(s * scale * 1000));

// The load generators run in this process: it must be allowed more than Bun's default 256
// concurrent fetches (the streams scenario), and it belongs on the load core. Re-exec once.
const TARGET_CORE = pin ? 0 : null;
const LOAD_CORE = pin ? 1 : null;
if (!process.env.BENCH_CHILD) {
  const argv = [process.execPath, ...process.argv.slice(1)];
  const ts = taskset();
  const p = Bun.spawn(pin && ts ? [ts, "-c", String(LOAD_CORE), ...argv] : argv, {
    env: { ...process.env, BENCH_CHILD: "1", BUN_CONFIG_MAX_HTTP_REQUESTS: "4096" },
    stdio: ["inherit", "inherit", "inherit"],
  });
  for (const s of ["SIGINT", "SIGTERM"] as const) process.on(s, () => p.kill(s));
  process.exit(await p.exited);
}

const log = (...a: unknown[]) => console.log(`[${new Date().toISOString().slice(11, 19)}]`, ...a);

if ((only.has("saturation") || only.has("sweep") || only.has("alloc")) && !Bun.which("wrk")) {
  console.error(
    "wrk is not installed. Install it (Debian/Ubuntu: apt-get update && apt-get install -y wrk) or run only the other scenarios: --only=nonstream,stream,messages,streams",
  );
  process.exit(2);
}
const started = Date.now();
// The default path's memory, measured on a machine the PostgreSQL stack does not load yet.
let memory: MemoryResult | null = null;
if (only.has("memory"))
  memory = await memoryScenario({ calls: 300, idleSeconds: Math.max(4, Math.round(10 * scale)) }, log);
// Every other scenario measures the main PostgreSQL stack; memory needs none, alloc starts its own.
const needStack = [...only].some((s) => s !== "memory" && s !== "alloc");
if (only.has("alloc") || needStack)
  await checkPostgres(pgServer).catch((e) => {
    console.error(e.message);
    process.exit(2);
  });
const alloc = only.has("alloc")
  ? await allocScenario({ serverUrl: pgServer, portkeyDir, seconds: sec(3) / 1000, repeats, connections: conns }, log)
  : null;

const profileDir = join(import.meta.dir, "results", "profile");
if (profile) mkdirSync(profileDir, { recursive: true });
if (needStack)
  log(
    `starting simulator, gateway (PostgreSQL at ${pgServer.replace(/\/[^/]*$/, "")}) and bare proxy; pinning ${pin ? "on" : "off"}`,
  );
// Without it `stack` is never read: every scenario that reads it is off.
const stack: Stack = needStack
  ? await startStack({
      serverUrl: pgServer,
      targetCore: TARGET_CORE,
      loadCore: LOAD_CORE,
      gatewayBunFlags: profile ? ["--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${profileDir}`] : [],
      gatewayEnv: {},
      accounts: only.has("saturation") ? nAccounts : 1,
      otel,
      // The GC log gives the saturation scenario its KiB allocated per call and its longest pause.
      gcLog: only.has("saturation"),
    })
  : (null as unknown as Stack);
const peers: Peer[] = needStack
  ? await startPeers({
      simUrl: stack.simUrl,
      tokens: stack.tokens,
      core: TARGET_CORE,
      portkeyDir,
      log,
      gcLogDir: stack.gatewayGcLog && dirname(stack.gatewayGcLog),
      // Each peer's heap probe collects before it reads (the streams scenario's RSS).
      gcProbeDir: dirname(stack.heapProbes.gateway),
    }).catch(async (e) => {
      await stack.stop();
      throw e;
    })
  : [];
let observed: Awaited<ReturnType<typeof observability>> | null = null;

// The machine's load while measuring: the benchmark is only as quiet as the machine.
const loadSamples: number[] = [];
const loadAvg = () => Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
const loadTimer = setInterval(() => loadSamples.push(loadAvg()), 5000);
const loadAtStart = existsSync("/proc/loadavg") ? loadAvg() : null;
let stopping = false;
const stopStack = async () => {
  if (stopping) return;
  stopping = true;
  for (const p of peers) await p.child.stop();
  if (needStack) await stack.stop();
};
process.on("SIGINT", () => void stopStack().then(() => process.exit(130)));

/** The GC log of each target that has one: the gateway, the bare proxy and the peers (saturation). */
const gcLogs = (): Record<string, string> =>
  Object.fromEntries(
    [["gateway", stack.gatewayGcLog], ["proxy", stack.proxyGcLog], ...peers.map((p) => [p.name, p.gcLog])].filter(
      (e): e is [string, string] => !!e[1],
    ),
  );
const pidOf = (t: Target) =>
  t.name === "gateway"
    ? stack.gateway.pid
    : t.name === "proxy"
      ? stack.proxy.pid
      : (peers.find((p) => p.name === t.name)?.child.pid ?? stack.sim.pid);

/** The heap probe file of a target (lib/heap-probe.ts, gcProbe); null for the simulator. */
const probeFileOf = (t: Target): string | null =>
  t.name === "gateway"
    ? stack.heapProbes.gateway
    : t.name === "proxy"
      ? stack.heapProbes.proxy
      : (peers.find((p) => p.name === t.name)?.heapProbe ?? null);

/** The target's RSS (MiB) after a full collection in it: garbage not yet collected is not memory kept. */
async function keptMiB(t: Target): Promise<number | null> {
  const file = probeFileOf(t);
  if (!file) return rssMiB(pidOf(t));
  return Math.round((await heapReading(pidOf(t), file)).rss / 1024 / 1024);
}

const results: Record<string, unknown> = {};
if (memory) results.memory = memory;
if (alloc) results.alloc = alloc;

async function cpuPerRequest<T extends { ok?: number; requests?: number }>(
  t: Target,
  fn: () => Promise<T>,
): Promise<{ r: T; cpuMsPerReq: number | null; mainMsPerReq: number | null }> {
  const pid = pidOf(t);
  const before = cpuMs(pid);
  const mainBefore = threadCpuMs(pid).main;
  const r = await fn();
  const after = cpuMs(pid);
  const mainAfter = threadCpuMs(pid).main;
  const n = r.ok ?? r.requests ?? 0;
  return {
    r,
    cpuMsPerReq: before !== null && after !== null && n ? (after - before) / n : null,
    mainMsPerReq: n ? (mainAfter - mainBefore) / n : null,
  };
}

const ctx: CompareContext = { repeats, token: needStack ? stack.token : "", warmupMs: sec(5), log, cpuPerRequest };

try {
  if (only.has("nonstream")) {
    results.nonstream = await compareOpenLoop(ctx, "non-streaming", withPeers(stack, peers), {
      rate,
      ms: sec(8),
      body: NONSTREAM_BODY,
      stream: false,
      metrics: { latency: (r) => r.latency },
    });
  }
  if (only.has("stream")) {
    results.stream = await compareOpenLoop(ctx, "streaming", withPeers(stack, peers), {
      rate: 50,
      ms: sec(5),
      body: STREAM_BODY,
      stream: true,
      metrics: {
        ttfb: (r) => r.ttfb,
        total: (r) => r.latency,
        medianChunkGap: (r) => r.medianGap,
        maxChunkGap: (r) => r.maxGap,
      },
    });
  }
  if (only.has("messages")) {
    results.messages = await compareOpenLoop(ctx, "messages streaming", messagesTargets(stack), {
      rate: 50,
      ms: sec(5),
      body: MESSAGES_STREAM_BODY,
      stream: true,
      metrics: {
        ttfb: (r) => r.ttfb,
        total: (r) => r.latency,
        medianChunkGap: (r) => r.medianGap,
        maxChunkGap: (r) => r.maxGap,
      },
    });
  }
  if (only.has("saturation")) {
    const pg = databaseCpu(pgServer, stack.dbName);
    const gwSql = postgres(stack.dbUrl, { max: 1, onnotice: () => {} });
    results.saturation = await saturation(ctx, withPeers(stack, peers), {
      postgresMs: pg.ms,
      rollupLag: () => sampleRollupLag(gwSql),
      conns,
      seconds: Math.max(2, Math.round(6 * scale)),
      warmupSeconds: Math.max(1, Math.round(2 * scale)),
      jsonBody: INSTANT_BODY,
      sseBody: INSTANT_STREAM_BODY,
      tokens: nAccounts > 1 ? stack.tokens : [],
      core: LOAD_CORE,
      gcLogs: gcLogs(),
    }).finally(() => Promise.all([pg.end(), gwSql.end({ timeout: 1 })]));
  }
  if (only.has("sweep")) {
    const levels = [1, 4, 16, 64, 256];
    const rows: { connections: number; byTarget: Record<string, WrkResult> }[] = [];
    for (const c of levels) {
      const byTarget: Record<string, WrkResult> = {};
      for (const t of order(chatTargets(stack), levels.indexOf(c))) {
        byTarget[t.name] = await wrk(t, {
          connections: c,
          seconds: Math.max(1, Math.round(2 * scale)),
          body: INSTANT_BODY,
          token: stack.token,
          core: LOAD_CORE,
        });
      }
      log(
        `sweep c=${c}: ${Object.entries(byTarget)
          .map(([n, w]) => `${n} ${w.rps.toFixed(0)}/s p99 ${w.latencyMs.p99.toFixed(2)}ms`)
          .join(" | ")}`,
      );
      rows.push({ connections: c, byTarget });
    }
    results.sweep = { seconds: Math.max(1, Math.round(2 * scale)), rows };
  }
  if (only.has("streams")) {
    const out: Record<string, unknown> = {};
    for (const t of chatTargets(stack).filter((x) => x.name !== "direct")) {
      const pid = pidOf(t);
      await Bun.sleep(1000);
      const before = await keptMiB(t);
      const rounds: {
        peakMiB: number | null;
        afterMiB: number | null;
        ok: number;
        errors: number;
        seconds: number;
        firstError?: string;
      }[] = [];
      // Round 1 also warms the heap; "flat" is judged on the rounds after it.
      for (let round = 0; round < 5; round++) {
        let peak = 0;
        const res = await openStreams(t, {
          n: nStreams,
          body: LONG_STREAM_BODY,
          token: stack.token,
          sample: () => {
            peak = Math.max(peak, rssMiB(pid) ?? 0);
          },
        });
        await Bun.sleep(2000);
        const after = await keptMiB(t);
        rounds.push({
          peakMiB: peak || null,
          afterMiB: after,
          ok: res.ok,
          errors: res.errors,
          seconds: r2(res.ms / 1000)!,
          firstError: res.firstError,
        });
        log(
          `streams ${t.name} round ${round + 1}: ${res.ok}/${nStreams} ok in ${(res.ms / 1000).toFixed(1)} s, RSS kept before ${before} peak ${peak} kept after ${after} MiB${res.firstError ? ` (${res.firstError})` : ""}`,
        );
      }
      out[t.name] = { streams: nStreams, beforeMiB: before, rounds };
    }
    results.streams = out;
  }
  if (only.has("stats")) {
    const statsBench = join(import.meta.dir, "stats.ts");
    if (!existsSync(statsBench))
      results.stats = { note: "bench/stats.ts is not present in this tree; no stats figures" };
    else {
      // Its own throwaway database, a million events and its own in-process gateway; the
      // system under test above is idle meanwhile.
      log("stats: bench/stats.ts (a million usage events; about two minutes)");
      const out = join(tmpdir(), `bench-stats-${process.pid}.json`);
      const p = Bun.spawn(
        [
          process.execPath,
          statsBench,
          `--json=${out}`,
          `--pg=${pgServer}`,
          `--requests=${Math.max(50, Math.round(300 * scale))}`,
        ],
        { stdout: "pipe", stderr: "pipe" },
      );
      const [text, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
      await p.exited;
      results.stats = existsSync(out)
        ? { ...JSON.parse(readFileSync(out, "utf8")), source: "bench/stats.ts" }
        : { note: `bench/stats.ts failed (exit ${p.exitCode}): ${(err || text).slice(-500)}` };
      rmSync(out, { force: true });
    }
  }
} finally {
  clearInterval(loadTimer);
  if (needStack) observed = await observability(stack);
  log("stopping");
  await stopStack();
}

const meta = {
  label,
  observability: observed,
  date: new Date().toISOString(),
  durationSeconds: Math.round((Date.now() - started) / 1000),
  commit: (await Bun.$`git -C ${join(import.meta.dir, "..")} rev-parse --short HEAD`.nothrow().quiet().text()).trim(),
  ...(process.env.BENCH_GATEWAY_ROOT && { gatewayRoot: "BENCH_GATEWAY_ROOT (another tree)" }),
  dirty:
    (await Bun.$`git -C ${join(import.meta.dir, "..")} status --porcelain -- src`.nothrow().quiet().text()).trim()
      .length > 0,
  bun: Bun.version,
  cpu: cpus()[0]?.model ?? "?",
  cores: cpus().length,
  layout: pin
    ? "core 0: the target under test (gateway or bare proxy, each its own process); core 1: simulator, this runner (open-loop prober) and wrk; PostgreSQL: unpinned"
    : "no pinning: the target, simulator, runner (prober), wrk and PostgreSQL share both cores",
  options: { scale, repeats, rate, conns, streams: nStreams, accounts: nAccounts, profile },
  // The ledger settings the gateway ran with (unset: its defaults).
  ledger: Object.fromEntries(
    ["LEDGER_SETTLE", "LEDGER_COMMIT", "LEDGER_LEASES"].map((k) => [k, process.env[k] ?? "default"]),
  ),
  peers: { essentials: true, portkey: peers.some((p) => p.name === "portkey") },
  machineLoad: {
    atStart: loadAtStart,
    meanDuringRun: loadSamples.length ? loadSamples.reduce((a, b) => a + b, 0) / loadSamples.length : null,
    maxDuringRun: loadSamples.length ? Math.max(...loadSamples) : null,
  },
};
const report = { meta, results };
const dir = join(import.meta.dir, "results");
mkdirSync(dir, { recursive: true });
writeFileSync(
  join(dir, `${outName}.json`),
  JSON.stringify(
    report,
    (_, v) => (typeof v === "number" ? (Number.isFinite(v) ? Math.round(v * 1000) / 1000 : null) : v),
    2,
  ) + "\n",
);
writeFileSync(join(dir, `${outName}.md`), renderMarkdown(report));
log(`wrote bench/results/${outName}.json and .md`);
console.log("\n" + renderMarkdown(report));
