/**
 * What a leased call's durable charge costs PostgreSQL, statement against statement, without
 * the gateway: `bun bench/ledger-charge.ts [--calls=20000] [--batch=32] [--slots=1,4]`.
 *
 * On a throwaway database (migrated), one funded account and key, one lease per round; the
 * round's calls charged in batches of `--batch`, `--slots` statements in flight, through the
 * gateway's own store (SqlLeaseStore), then the lease closed. Two ways, alternating:
 *   appended — gw_lease_charge (drizzle/0023): the calls' rows appended, the money moved at the close;
 *   per batch — gw_lease_charge_late, the statement before 0023 (every batch updates the
 *               account, key month and lease rows under the account's row lock).
 * Reported per charged call: the CPU of this database's own backends (from /proc, so other
 * work on a shared server does not count), and the wall time per batch (the answer's wait).
 */
import postgres from "postgres";
import { currentMonth } from "../src/core/billing/ledger";
import type { LeaseCharge } from "../src/core/billing/ledger-store";
import { openDatabase } from "../src/db/client";
import { runMigrations } from "../src/db/migrate";
import { eventJson, SqlLeaseStore } from "../src/db/repos/ledger-store";
import { databaseCpu } from "./lib/pg-cpu";

const arg = (name: string, d: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? d;
const CALLS = Number(arg("calls", "20000"));
const BATCH = Number(arg("batch", "32"));
const SLOTS = arg("slots", "1,4").split(",").map(Number);
const server = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

const name = `gw_bench_charge_${Date.now().toString(36)}`;
const admin = postgres(server, { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${name}`);
const url = server.replace(/\/[^/]*$/, `/${name}`);
const db = await openDatabase({ url, max: 8 });

const backends = databaseCpu(server, name);
const backendMs = backends.ms;

try {
  await runMigrations(db);
  const [u] = await db.query<{ id: string }>(
    "insert into users (email, password_hash, balance_micro) values ($1, 'x', 1000000000000000) returning id",
    [`${name}@bench.example`],
  );
  const [k] = await db.query<{ id: string }>(
    "insert into api_keys (user_id, key_hash, key_prefix) values ($1, $2, 'bench') returning id",
    [u!.id, name],
  );
  const store = new SqlLeaseStore(db);
  const ev = {
    model: "gpt-4o-mini",
    provider: "openai",
    maker: "openai",
    modality: "text",
    app: null,
    status: 200,
    promptTokens: 12,
    completionTokens: 20,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    fxMilli: 1_400_000n,
    latencyMs: 20,
    cached: false,
  } as const;
  const ev1 = eventJson(ev);

  async function round(way: "appended" | "per batch", slots: number) {
    const lease = crypto.randomUUID();
    await store.open({
      id: lease,
      userId: u!.id,
      keyId: k!.id,
      month: currentMonth(),
      amountMicro: BigInt(CALLS) * 100_000n,
      tokens: 0,
      ttlSeconds: 300,
    });
    const batches: LeaseCharge[][] = [];
    for (let i = 0; i < CALLS; i += BATCH)
      batches.push(
        Array.from({ length: Math.min(BATCH, CALLS - i) }, () => ({
          lease,
          id: crypto.randomUUID(),
          costMicro: 50_000n,
          holdMicro: 100_000n,
          tokens: 32,
          event: ev,
        })),
      );
    const late = (items: LeaseCharge[]) =>
      db.query(
        "select n, r from gw_lease_charge_late($1::uuid[], $2::uuid[], $3::bigint[], $4::bigint[], $5::bigint[], $6::jsonb[])",
        [
          items.map((c) => c.lease),
          items.map((c) => c.id),
          items.map((c) => c.costMicro.toString()),
          items.map((c) => c.holdMicro.toString()),
          items.map((c) => c.tokens),
          items.map(() => ev1),
        ],
      );
    const waits: number[] = [];
    const cpu0 = await backendMs();
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: slots }, async () => {
        while (next < batches.length) {
          const b = batches[next++]!;
          const s = performance.now();
          if (way === "appended") await store.charge(b);
          else await late(b);
          waits.push(performance.now() - s);
        }
      }),
    );
    await store.trim(lease, { micro: 0n, tokens: 0 }, { close: true });
    const wall = performance.now() - t0;
    const cpu = (await backendMs()) - cpu0;
    waits.sort((a, b) => a - b);
    return {
      way,
      slots,
      batch: BATCH,
      callsPerS: Math.round((CALLS / wall) * 1000),
      backendCpuUsPerCall: Math.round(((cpu / CALLS) * 1000 * 10) / 10),
      batchWaitP50Ms: Math.round(waits[Math.floor(waits.length / 2)]! * 100) / 100,
      batchWaitP99Ms: Math.round(waits[Math.floor(waits.length * 0.99)]! * 100) / 100,
    };
  }

  await round("appended", 1); // warm-up
  const rows = [];
  for (const slots of SLOTS)
    for (const way of ["per batch", "appended", "per batch", "appended"] as const) rows.push(await round(way, slots));
  console.log(`${CALLS} calls per round, batches of ${BATCH}; PostgreSQL backend CPU of this database only\n`);
  console.log("| way | statements in flight | calls/s | backend CPU µs per call | batch wait p50 / p99 ms |");
  console.log("|---|---:|---:|---:|---:|");
  for (const r of rows)
    console.log(
      `| ${r.way} | ${r.slots} | ${r.callsPerS} | ${r.backendCpuUsPerCall} | ${r.batchWaitP50Ms} / ${r.batchWaitP99Ms} |`,
    );
} finally {
  await db.close();
  await backends.end();
  await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
  await admin.end();
}
