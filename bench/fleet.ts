/**
 * `bun bench/fleet.ts [--rate=200] [--seconds=10] [--instances=1,2,4]`: what one, two and four
 * gateway instances on one PostgreSQL and one Redis cost per call, at the same open-loop load
 * (docs/scaling.md, "Many machines").
 *
 * Each run gets a fresh database, its own redis-server (so its command counts are this run's
 * alone) and N gateway processes on their own ports (as N machines would be), the instances
 * after the first with no rollup job. The runner sends `rate` calls a second, round-robin over
 * the instances and over 8 accounts × 4 keys (every fourth call a stream, through the
 * simulator with 20 ms of upstream latency), and reads over the measured window:
 * - the CPU of the gateway processes, of the PostgreSQL backends serving this database
 *   (/proc/PID/stat of the pids pg_stat_activity names; the server's shared background
 *   processes, the WAL writer among them, are not counted) and of the redis-server, in
 *   total and beyond what the same processes spend idle (4 s measured before the load);
 * - pg_stat_database's transactions and rows written for this database;
 * - Redis' commands (INFO commandstats);
 * - the rollup lag: every 0.5 s, how many usage events lie above the rollup's watermark and
 *   how old the oldest of them is.
 * A last pass, with the most instances, runs PostgreSQL behind a counting proxy
 * (bench/lib/pg-count.ts) for what the statements are and how many per call
 * (pg_stat_statements would need a server restart); its extra hop groups more calls per
 * statement than the direct runs, whose statement count is pg_stat_database's transactions.
 * Prints a markdown table; the figures are per answered call.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { PgCounter, type WireCounts } from "./lib/pg-count";
import { cpuMs, freePort, spawnChild, waitReady, type Child } from "./lib/procs";
import { ADMIN_TOKEN, checkPostgres } from "./lib/stack";
import { sampleRollupLag } from "./lib/rollup-lag";

const ROOT = join(import.meta.dir, "..");
const arg = (name: string, d: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? d;
const RATE = Number(arg("rate", "200"));
const SECONDS = Number(arg("seconds", "10"));
const SIZES = arg("instances", "1,2,4").split(",").map(Number);
const SERVER = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const bun = process.execPath;
const baseEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" };

interface Run {
  instances: number;
  counted: boolean;
  calls: number;
  errors: number;
  gatewayUs: number;
  pgUs: number;
  redisUs: number;
  /** The same, less what the processes spend idle (measured over 4 s before the load) for as long as the load ran. */
  marginal: { gatewayUs: number; pgUs: number; redisUs: number };
  xacts: number;
  rowsWritten: number;
  redisCmds: number;
  redisTop: string;
  wire: WireCounts | null;
  statements: [string, number][];
  lagEvents: { p50: number; max: number };
  lagSeconds: { p50: number; max: number };
}

async function api(base: string, method: string, path: string, token: string | null, body?: unknown): Promise<any> {
  const res = await fetch(base + path, {
    method,
    headers: { "content-type": "application/json", ...(token && { authorization: `Bearer ${token}` }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

function redisInfo(port: number, section: string): Promise<string> {
  const p = Bun.spawn(["redis-cli", "-p", String(port), "info", section], { stdout: "pipe" });
  return new Response(p.stdout).text();
}

function redisCommands(info: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const x of info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) m.set(x[1]!, Number(x[2]));
  return m;
}

async function runOnce(n: number, counted: boolean): Promise<Run> {
  const dbName = `gw_fleet_${Date.now().toString(36)}`;
  const admin = postgres(SERVER, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${dbName}`);
  await admin.end();
  const dbUrl = SERVER.replace(/\/[^/]*$/, `/${dbName}`);
  const server = new URL(SERVER);
  const counter = counted ? new PgCounter(server.hostname, Number(server.port || 5432)).start() : null;
  const gwDbUrl = counter ? dbUrl.replace(`${server.host}`, `127.0.0.1:${counter.listenPort}`) : dbUrl;
  const sql = postgres(dbUrl, { max: 2, onnotice: () => {} });
  const children: Child[] = [];
  const dirs: string[] = [];
  try {
    const redisPort = await freePort();
    const redis = spawnChild(
      "redis",
      ["redis-server", "--port", String(redisPort), "--save", "", "--appendonly", "no"],
      baseEnv,
      null,
    );
    children.push(redis);
    const simPort = await freePort();
    const sim = spawnChild(
      "simulator",
      [bun, join(ROOT, "src/sim/main.ts")],
      { ...baseEnv, SIM_PORT: String(simPort), SIM_HOST: "127.0.0.1" },
      null,
    );
    children.push(sim);
    const simUrl = `http://127.0.0.1:${simPort}`;
    await waitReady(sim, `${simUrl}/sim/stats`);
    const catalog = (await Bun.file(join(ROOT, "src/core/catalog/catalog.json")).json()) as {
      providers: { id: string; base_url_env: string; credential_env: string }[];
    };
    const providerEnv: Record<string, string> = {};
    for (const p of catalog.providers) {
      providerEnv[p.base_url_env] = `${simUrl}/sim/${p.id}`;
      providerEnv[p.credential_env] = "simulated";
    }

    // The fleet: started one after the other (the first migrates the fresh database).
    const urls: string[] = [];
    for (let i = 0; i < n; i++) {
      const port = await freePort();
      const dir = mkdtempSync(join(tmpdir(), "gw-fleet-"));
      dirs.push(dir);
      const gw = spawnChild(
        `gateway ${i}`,
        [bun, join(ROOT, "src/main.ts")],
        {
          ...baseEnv,
          ...providerEnv,
          BUN_CONFIG_MAX_HTTP_REQUESTS: "4096",
          DATABASE_URL: gwDbUrl,
          REDIS_URL: `redis://127.0.0.1:${redisPort}`,
          DATA_DIR: dir,
          PORT: String(port),
          HOST: "127.0.0.1",
          ADMIN_TOKEN,
          JWT_SECRET: "bench-jwt-secret-0123456789abcdef0123456789",
          DEMO_MODE: "false",
          RATE_LIMIT_RPM: "1000000",
          ACCOUNT_RATE_LIMIT_RPM: "1000000",
          SIGNUP_RATE_PER_IP: "0",
          LOGIN_RATE_PER_IP: "0",
          CONCURRENCY_PER_ACCOUNT: "0",
          CONCURRENCY_PER_KEY: "0",
          LOG_LEVEL: "info",
          ...(i > 0 && { STATS_ROLLUP_INTERVAL_MS: "0" }),
        },
        null,
        join(dir, "gateway.log"),
      );
      children.push(gw);
      urls.push(`http://127.0.0.1:${port}`);
      await waitReady(gw, `${urls[i]}/healthz`, 60_000);
    }
    const gateways = children.slice(2);

    // 8 accounts × 4 keys, made through the public API of the instances in turn.
    const keys: string[] = [];
    for (let a = 0; a < 8; a++) {
      const base = urls[a % n]!;
      const email = `fleet-${crypto.randomUUID().slice(0, 8)}@bench.example`;
      const password = "benchmark password 1";
      const s = await api(base, "POST", "/v1/auth/signup", null, { email, password });
      const l = await api(base, "POST", "/v1/auth/login", null, { email, password });
      await api(base, "POST", `/v1/admin/users/${s.user_id}/topups`, ADMIN_TOKEN, { amount_krw: 1_000_000_000 });
      for (let k = 0; k < 4; k++)
        keys.push((await api(base, "POST", "/v1/keys", l.access_token, { name: `k${k}` })).key);
    }

    let calls = 0;
    let errors = 0;
    let seq = 0;
    const one = async () => {
      const j = seq++;
      const stream = j % 4 === 0;
      try {
        const res = await fetch(`${urls[j % n]}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${keys[j % keys.length]}`, "content-type": "application/json" },
          body: JSON.stringify({
            model: j % 2 ? "deepseek-v4-flash" : "gpt-5-mini",
            messages: [{ role: "user", content: "Say hello in one short sentence. [sim:latency=20]" }],
            max_tokens: 16,
            stream,
          }),
        });
        await res.arrayBuffer();
        if (res.status === 200) calls++;
        else errors++;
      } catch {
        errors++;
      }
    };
    const drive = async (seconds: number) => {
      const inflight: Promise<void>[] = [];
      const t0 = performance.now();
      const total = Math.round(seconds * RATE);
      for (let i = 0; i < total; i++) {
        const at = t0 + (i * 1000) / RATE;
        const wait = at - performance.now();
        if (wait > 1) await Bun.sleep(wait);
        inflight.push(one());
      }
      await Promise.all(inflight);
    };

    // Warm up (JIT, pools, leases), let it settle, then measure one window.
    await drive(3);
    await Bun.sleep(2000);
    const mine = new Set((await sql`select pg_backend_pid() as p`).map((r) => Number(r.p)));
    const backends = async () =>
      (await sql`select pid from pg_stat_activity where datname = ${dbName}`)
        .map((r) => Number(r.pid))
        .filter((p) => !mine.has(p));
    const cpuOf = (pids: number[]) => new Map(pids.map((p) => [p, cpuMs(p) ?? 0]));
    const dbStats = async () =>
      (
        await sql`select xact_commit + xact_rollback as x, tup_inserted + tup_updated + tup_deleted as w
                    from pg_stat_database where datname = ${dbName}`
      )[0]!;
    // Idle: what the fleet spends with no call (background jobs, pollers, LISTEN), per second.
    const sample = async () => {
      const pg = cpuOf(await backends());
      return {
        at: performance.now(),
        pg,
        gw: gateways.reduce((s, g) => s + (cpuMs(g.pid) ?? 0), 0),
        redis: cpuMs(redis.pid) ?? 0,
      };
    };
    const spent = (a: Awaited<ReturnType<typeof sample>>, b: Awaited<ReturnType<typeof sample>>) => {
      let pg = 0;
      for (const [p, ms] of b.pg) pg += ms - (a.pg.get(p) ?? 0);
      return { s: (b.at - a.at) / 1000, pg, gw: b.gw - a.gw, redis: b.redis - a.redis };
    };
    const i0 = await sample();
    await Bun.sleep(4000);
    const idle = spent(i0, await sample());
    const s0 = await sample();
    const db0 = await dbStats();
    const cmd0 = redisCommands(await redisInfo(redisPort, "commandstats"));
    const wire0 = counter ? { ...counter.counts } : null;
    const stmts0 = new Map(counter?.byStatement ?? []);
    calls = 0;
    errors = 0;

    const lag = sampleRollupLag(sql);
    await drive(SECONDS);
    const rollup = await lag.stop();
    await Bun.sleep(2000); // charges behind the answers, statistics flushed

    const per = (x: number) => x / Math.max(1, calls);
    const load = spent(s0, await sample());
    const { pg: pgMs, gw: gwMs, redis: redisMs } = load;
    const beyondIdle = (ms: number, idleMs: number) => per((ms - (idleMs / idle.s) * load.s) * 1000);
    const db1 = await dbStats();
    const cmd1 = redisCommands(await redisInfo(redisPort, "commandstats"));
    const cmds = [...cmd1].map(([c, v]) => [c, v - (cmd0.get(c) ?? 0)] as const).filter(([, v]) => v > 0);
    cmds.sort((a, b) => b[1] - a[1]);
    return {
      instances: n,
      counted,
      calls,
      errors,
      gatewayUs: per(gwMs * 1000),
      pgUs: per(pgMs * 1000),
      redisUs: per(redisMs * 1000),
      marginal: {
        gatewayUs: beyondIdle(gwMs, idle.gw),
        pgUs: beyondIdle(pgMs, idle.pg),
        redisUs: beyondIdle(redisMs, idle.redis),
      },
      xacts: per(Number(db1.x) - Number(db0.x)),
      rowsWritten: per(Number(db1.w) - Number(db0.w)),
      redisCmds: per(cmds.reduce((s, [, v]) => s + v, 0)),
      redisTop: cmds
        .slice(0, 4)
        .map(([c, v]) => `${c} ${per(v).toFixed(2)}`)
        .join(", "),
      wire:
        counter && wire0
          ? {
              execute: per(counter.counts.execute - wire0.execute),
              query: per(counter.counts.query - wire0.query),
              sync: per(counter.counts.sync - wire0.sync),
            }
          : null,
      statements: [...(counter?.byStatement ?? [])]
        .map(([t, v]) => [t, per(v - (stmts0.get(t) ?? 0))] as [string, number])
        .filter(([, v]) => v >= 0.005)
        .sort((a, b) => b[1] - a[1]),
      lagEvents: rollup.events,
      lagSeconds: rollup.seconds,
    };
  } finally {
    for (const c of children.reverse()) await c.stop().catch(() => {});
    counter?.stop();
    await sql.end({ timeout: 1 });
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    const a = postgres(SERVER, { max: 1, onnotice: () => {} });
    await a.unsafe(`drop database if exists ${dbName} with (force)`).catch(() => {});
    await a.end();
  }
}

await checkPostgres(SERVER);
const runs: Run[] = [];
for (const n of SIZES) {
  const r = await runOnce(n, false);
  console.error(`[fleet] ${n} instance(s): ${JSON.stringify(r)}`);
  runs.push(r);
}
const counted = await runOnce(Math.max(...SIZES), true);
console.error(`[fleet] counted: ${JSON.stringify(counted)}`);

const f = (x: number, d = 1) => x.toFixed(d);
console.log(`\n${RATE} calls/s for ${SECONDS} s (every 4th a stream), 8 accounts × 4 keys, per answered call:\n`);
console.log(
  "| instances | calls (errors) | gateway CPU µs (beyond idle) | PostgreSQL backends CPU µs (beyond idle) | Redis CPU µs (beyond idle) | PG transactions | PG rows written | Redis commands | rollup lag p50 / max (events) | (seconds) |",
);
console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const r of runs)
  console.log(
    `| ${r.instances} | ${r.calls} (${r.errors}) | ${f(r.gatewayUs, 0)} (${f(r.marginal.gatewayUs, 0)}) | ${f(r.pgUs, 0)} (${f(r.marginal.pgUs, 0)}) | ${f(r.redisUs, 0)} (${f(r.marginal.redisUs, 0)}) | ${f(r.xacts, 2)} | ${f(r.rowsWritten, 2)} | ${f(r.redisCmds, 2)} | ${f(r.lagEvents.p50, 0)} / ${f(r.lagEvents.max, 0)} | ${f(r.lagSeconds.p50)} / ${f(r.lagSeconds.max)} |`,
  );
const w = counted.wire!;
console.log(
  `\nThrough the counting proxy, ${counted.instances} instance(s): ${f(w.execute + w.query, 2)} statements per call (${f(w.execute, 2)} extended-protocol executes, ${f(w.query, 2)} simple queries), ${f(w.sync + w.query, 2)} round trips; Redis: ${counted.redisTop}.`,
);
console.log("\n| statements per call | text (start) |\n|---:|---|");
for (const [t, v] of counted.statements) console.log(`| ${f(v, 3)} | \`${t.replaceAll("|", "\\|")}\` |`);
