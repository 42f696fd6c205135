/**
 * `bun bench/stats.ts`: the public statistics with a million usage events.
 *
 * 1. Creates a throwaway PostgreSQL database and migrates it.
 * 2. Loads N usage events (default 1,000,000) in one `INSERT … SELECT generate_series`:
 *    60 days of traffic, 40 models each served by 2 of 6 providers, 2,000 keys, 300 users, 60 apps (30 % of
 *    calls without one), 8 % failures, 5 % cache hits, 90 % text.
 * 3. Runs the rollup use-case (50,000 events per transaction) and reports its throughput,
 *    then the cost of folding 1,000 new events on top of the million.
 * 4. Serves each endpoint through a real gateway over HTTP, N sequential requests each
 *    (default 300, after 20 warm-ups), twice: as deployed (the per-process cache answers
 *    while the rollups have not changed) and with that cache off (every request reads the
 *    rollups), and reports p50/p90/p99 in milliseconds.
 *
 * Flags: --events=N  --requests=N  --pg=URL (server to create the database on)  --keep
 * (keep the database)  --json=PATH (also write the figures as JSON).
 */
import postgres from "postgres";
import { Elysia } from "elysia";
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { loadConfig } from "../src/config";
import { openDatabase } from "../src/db/client";
import { runMigrations } from "../src/db/migrate";
import { RollupRepo } from "../src/db/repos/rollups";
import { runRollup, StatsService } from "../src/core/stats";
import { buildGateway } from "../src/gateway";
import { statsRoutes } from "../src/http/routes/stats";
import { dist, r2, type Dist } from "./lib/summary";

function flag(name: string, def: string): string {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`) || x === `--${name}`);
  if (!a) return def;
  return a.includes("=") ? a.slice(a.indexOf("=") + 1) : "true";
}

const EVENTS = Number(flag("events", "1000000"));
const REQUESTS = Number(flag("requests", "300"));
const SERVER = flag("pg", process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
const KEEP = flag("keep", "false") === "true";
const JSON_OUT = flag("json", "");

const ENDPOINTS = [
  "/v1/stats/models",
  "/v1/stats/models?period=monthly",
  "/v1/stats/rankings",
  "/v1/stats/rankings?period=monthly",
  "/v1/stats/usage-timeseries",
  "/v1/stats/usage-timeseries?range=24w&granularity=week&top=20",
  "/v1/stats/usage-timeseries?range=24w&granularity=day",
  "/v1/stats/apps",
  "/v1/stats/apps?period=monthly",
];

const log = (s: string) => process.stdout.write(s + "\n");
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const v = await f();
  return [v, performance.now() - t];
}

/** N sequential GETs after warm-ups; latency of each in ms. */
async function measure(base: string, path: string, n: number): Promise<Dist> {
  for (let i = 0; i < 20; i++) {
    const r = await fetch(base + path);
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    await r.arrayBuffer();
  }
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const r = await fetch(base + path);
    await r.arrayBuffer();
    samples.push(performance.now() - t);
  }
  return dist(samples);
}

const name = `gw_bench_stats_${Date.now().toString(36)}`;
const admin = postgres(SERVER, { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${name}`);
const url = SERVER.replace(/\/[^/]*$/, `/${name}`);
const db = await openDatabase({ url, max: 10 });
const figures: Record<string, unknown> = {
  events: EVENTS,
  requests: REQUESTS,
  cpus: cpus().length,
  loadavg_start: loadavg().map((x) => r2(x)),
};
// Figures from a shared machine are only comparable with the load they were taken under.
log(
  `${cpus().length} CPUs, load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`,
);
try {
  await runMigrations(db);
  log(`database ${name}: loading ${EVENTS.toLocaleString()} usage events…`);
  const [, loadMs] = await timed(() =>
    db.query(
      `insert into usage_events (request_id, user_id, key_id, model, provider, maker, modality, app, status,
         prompt_tokens, completion_tokens, cost_micro, cached, created_at)
       select gen_random_uuid(),
         ('00000000-0000-4000-8000-' || lpad(to_hex(1 + (i * 7919) % 300), 12, '0'))::uuid,
         case when i % 50 = 0 then null else ('00000000-0000-4000-9000-' || lpad(to_hex(1 + (i * 104729) % 2000), 12, '0'))::uuid end,
         'model-' || ((i * 31) % 40), 'provider-' || (((i * 31) % 40 + i % 2) % 6), 'maker-' || ((i * 31) % 40 % 9),
         case when i % 10 = 0 then 'embedding' else 'text' end,
         case when i % 10 < 3 then null else 'app-' || ((i * 13) % 60) end,
         case when i % 25 < 2 then 502 else 200 end,
         (i * 37) % 3000, (i * 11) % 900, ((i * 7) % 5000) * 1000, i % 20 = 7,
         now() - ((i::float8 / $1) * interval '60 days')
       from generate_series(1::bigint, $1::bigint) as i`,
      [EVENTS],
    ),
  );
  log(`  loaded in ${secs(loadMs)}`);
  figures.load_ms = Math.round(loadMs);

  const repo = new RollupRepo(db, { accountCap: 3 });
  const [run, rollMs] = await timed(() => runRollup(repo, { limit: 50_000, wait: true, maxBatches: 10_000 }));
  log(
    `rollup: ${run.folded.toLocaleString()} events in ${run.batches} batches, ${secs(rollMs)} (${Math.round(run.folded / (rollMs / 1000)).toLocaleString()} events/s)`,
  );
  figures.rollup = {
    events: run.folded,
    batches: run.batches,
    ms: Math.round(rollMs),
    events_per_s: Math.round(run.folded / (rollMs / 1000)),
  };
  const sizes = await db.query<Record<string, string>>(
    `select (select count(*) from stats_model_hourly)::text as model_hourly, (select count(*) from stats_model_daily)::text as model_daily,
            (select count(*) from stats_app_hourly)::text as app_hourly, (select count(*) from stats_hourly_accounts)::text as hourly_accounts,
            (select count(*) from stats_daily_accounts)::text as daily_accounts, (select count(*) from usage_daily)::text as usage_daily`,
  );
  log(`  rollup rows: ${JSON.stringify(sizes[0])}`);
  figures.rollup_rows = sizes[0];

  // Incremental cost on top of the million: what the job pays every few seconds.
  const inc: number[] = [];
  for (let round = 0; round < 5; round++) {
    await db.query(
      `insert into usage_events (request_id, user_id, key_id, model, provider, maker, modality, app, status, prompt_tokens, completion_tokens, cost_micro, created_at)
       select gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'model-' || (i % 40), 'provider-' || (i % 6), 'maker-1', 'text', 'app-' || (i % 60), 200, 100, 50, 1000, now()
       from generate_series(1, 1000) i`,
    );
    const [r, ms] = await timed(() => runRollup(repo, { limit: 50_000, wait: true }));
    if (r.folded !== 1000) throw new Error(`expected 1000 folded, got ${r.folded}`);
    inc.push(ms);
  }
  const incD = dist(inc);
  log(`  folding 1,000 new events: median ${r2(incD.p50)} ms (5 rounds, max ${r2(incD.max)} ms)`);
  figures.incremental_1000_ms = { p50: r2(incD.p50), max: r2(incD.max) };

  const cfg = loadConfig({
    DATABASE_URL: url,
    DEMO_MODE: "false",
    LOG_LEVEL: "warn",
    STATS_ROLLUP_INTERVAL_MS: "0",
    RATE_LIMIT_RPM: "0",
    DATA_DIR: `/tmp/${name}`,
  });
  const gw = await buildGateway(cfg, { db });
  gw.app.listen({ port: 0, hostname: "127.0.0.1", reusePort: false });
  const cachedBase = `http://127.0.0.1:${gw.app.server!.port}`;
  // The same routes without the per-process cache: every request reads the rollups.
  const uncached = new Elysia({ normalize: false }).use(
    statsRoutes({
      stats: new StatsService({ reader: new RollupRepo(db, { accountCap: 3 }), minAccounts: 3, ttlMs: 0 }),
      maxAgeSeconds: 10,
    }),
  );
  uncached.listen({ port: 0, hostname: "127.0.0.1", reusePort: false });
  const uncachedBase = `http://127.0.0.1:${uncached.server!.port}`;

  const rows: Record<string, { cached: Dist; uncached: Dist }> = {};
  try {
    log(`\nlatency over HTTP, ${REQUESTS} sequential requests each (ms)`);
    log(`${"endpoint".padEnd(62)} ${"cached p50/p90/p99".padEnd(22)} uncached p50/p90/p99`);
    for (const path of ENDPOINTS) {
      const c = await measure(cachedBase, path, REQUESTS);
      const u = await measure(uncachedBase, path, REQUESTS);
      rows[path] = { cached: c, uncached: u };
      const f = (d: Dist) => `${r2(d.p50)}/${r2(d.p90)}/${r2(d.p99)}`;
      log(`${path.padEnd(62)} ${f(c).padEnd(22)} ${f(u)}`);
    }
  } finally {
    await uncached.stop(true);
    await gw.app.stop(true);
    await gw.stop();
  }
  figures.latency_ms = Object.fromEntries(
    Object.entries(rows).map(([k, v]) => [
      k,
      {
        cached: { p50: r2(v.cached.p50), p90: r2(v.cached.p90), p99: r2(v.cached.p99) },
        uncached: { p50: r2(v.uncached.p50), p90: r2(v.uncached.p90), p99: r2(v.uncached.p99) },
      },
    ]),
  );
  figures.loadavg_end = loadavg().map((x) => r2(x));
  log(
    `load average at the end: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
  if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify(figures, null, 2));
} finally {
  await db.close();
  if (!KEEP) await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
  else log(`kept database ${name}`);
  await admin.end();
}
