/**
 * Two gateway processes on one port (`PROCESSES=2`, src/boot/processes.ts) on PostgreSQL and
 * Redis: both serve (the `X-Gateway-Process` header names which), `/metrics` reports both, and
 * a `kill -9` of one of them under load loses no answered call: the other keeps serving, the
 * supervisor starts the dead one again, and in SQL every answered call is charged exactly once
 * and the books balance once the dead process's holds are swept. A key's rate limit is one
 * count for the host (Redis), whichever process a call lands on.
 */
import { expect, test } from "bun:test";
import { ADMIN_TOKEN, freshPostgres, postgresAvailable, redisAvailable } from "../harness";
import { openDatabase } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { SqlLedger } from "../../src/db/repos/ledger";
import { checkBooks } from "../support/books";
import { GatewayProcess, SimProcess } from "../support/procs";
import { fundedAccount } from "../support/accounts";

const CLIENTS = 12;

/** One call (every fourth streamed); its request id and process when the client got the whole answer. */
async function oneCall(base: string, key: string, stream: boolean): Promise<{ id: string; process: string } | null> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "hi [sim:latency=20]" }],
      max_tokens: 20,
      stream,
    }),
  });
  const text = await res.text();
  const whole = res.status === 200 && (!stream || text.trimEnd().endsWith("data: [DONE]"));
  return whole ? { id: res.headers.get("x-request-id")!, process: res.headers.get("x-gateway-process")! } : null;
}

test("two processes on one port: both serve, /metrics covers both, kill -9 of one loses no answered call", async () => {
  if (!(await postgresAvailable()) || !(await redisAvailable())) return;
  const fresh = await freshPostgres();
  const db = await openDatabase({ url: fresh.url, max: 4 });
  await runMigrations(db);
  const sim = await new SimProcess().start();
  const gw = await new GatewayProcess({
    ...sim.providerEnv(),
    DATABASE_URL: fresh.url,
    REDIS_URL: "redis://127.0.0.1:6379",
    PROCESSES: "2",
    CATALOG_TODAY: "2026-01-01",
    LOG_LEVEL: "info",
    LOG_REQUESTS: "false",
    STATS_ROLLUP_INTERVAL_MS: "0",
    VIDEO_POLL_WORKERS: "0",
  }).start();
  try {
    // Both processes listen: connections land on each (a fresh connection per request).
    const seen = new Set<string>();
    for (let i = 0; i < 200 && seen.size < 2; i++) {
      const r = await fetch(`${gw.url}/healthz`, { headers: { connection: "close" } });
      seen.add(r.headers.get("x-gateway-process") ?? "none");
      await Bun.sleep(20);
    }
    expect([...seen].sort()).toEqual(["0", "1"]);
    const pidOf = async (index: number) => {
      const lines = (await gw.log()).split("\n").filter((l) => l.includes('"gateway process started"'));
      return lines.map((l) => JSON.parse(l)).findLast((l) => l.index === index)!.pid as number;
    };

    const user = await fundedAccount(db, gw.url, { prefix: "np", krw: 100_000, keyName: "np" });
    const key = user.keys[0]!;

    const answered: { id: string; process: string; at: number }[] = [];
    let stop = false;
    let killedAt = Infinity;
    const clients = Array.from({ length: CLIENTS }, async (_, i) => {
      while (!stop) {
        try {
          const a = await oneCall(gw.url, key, i % 4 === 0);
          if (a) answered.push({ ...a, at: performance.now() });
        } catch {
          await Bun.sleep(10); // a connection to the killed process: the next one lands elsewhere
        }
      }
    });
    await Bun.sleep(1500);
    const victim = await pidOf(1);
    process.kill(victim, "SIGKILL");
    killedAt = performance.now();
    await Bun.sleep(2500);
    stop = true;
    await Promise.all(clients);

    // The other process kept serving, and the supervisor started the dead one again: it serves.
    expect(answered.filter((a) => a.at > killedAt + 100).length).toBeGreaterThan(20);
    const log = await gw.log();
    expect(log).toContain('"gateway process died; starting it again"');
    expect(await pidOf(1)).not.toBe(victim);
    let back = false;
    for (let i = 0; i < 600 && !back; i++) {
      const r = await fetch(`${gw.url}/healthz`, { headers: { connection: "close" } }).catch(() => null);
      back = r?.headers.get("x-gateway-process") === "1";
      await Bun.sleep(50);
    }
    expect(back).toBe(true);

    // /metrics: the whole host, each process's series labelled.
    const metrics = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const text = await metrics.text();
    expect(text).toMatch(/^gateway_processes 2$/m);
    expect(text).toMatch(/^gateway_process_restarts_total 1$/m);
    expect(text).toMatch(/^gateway_http_requests_total\{process="0",/m);
    // The started-again process counts from zero (a counter reset, as after any restart), but reports.
    expect(text).toMatch(/^gateway_\w+\{process="1"/m);

    // What the dead process left open is released as the sweeper would after HOLD_TTL_SECONDS.
    await db.query("update holds set expires_at = now() - interval '1 second' where status = 'open'");
    await new SqlLedger(db).sweepExpired(10_000);
    const rows = await db.query<{ id: string; n: number }>(
      "select request_id::text as id, count(*)::int as n from ledger_entries where user_id = $1 and kind = 'charge' group by request_id",
      [user.id],
    );
    const charges = new Map(rows.map((r) => [r.id, r.n]));
    expect(new Set(answered.map((a) => a.process))).toEqual(new Set(["0", "1"]));
    expect(answered.length).toBeGreaterThan(50);
    expect(answered.filter((a) => !charges.has(a.id))).toEqual([]);
    expect([...charges.values()].every((n) => n === 1)).toBe(true);
    const books = await checkBooks(db, [user.id]);
    expect(books.violations).toEqual([]);
    expect(books.openHolds).toBe(0);
    console.log(
      `[processes] ${answered.length} answered calls (${answered.filter((a) => a.process === "0").length} by process 0), ${answered.filter((a) => a.at > killedAt).length} after kill -9 of process 1; every one charged once`,
    );
  } finally {
    await gw.stop();
    await sim.stop();
    await db.close();
    await fresh.drop();
    gw.cleanup();
  }
}, 120_000);

test("a key's rate limit is one count for the host, across both processes (Redis)", async () => {
  if (!(await postgresAvailable()) || !(await redisAvailable())) return;
  const fresh = await freshPostgres();
  const db = await openDatabase({ url: fresh.url, max: 2 });
  await runMigrations(db);
  const sim = await new SimProcess().start();
  const LIMIT = 10;
  const gw = await new GatewayProcess({
    ...sim.providerEnv(),
    DATABASE_URL: fresh.url,
    REDIS_URL: "redis://127.0.0.1:6379",
    PROCESSES: "2",
    CATALOG_TODAY: "2026-01-01",
    RATE_LIMIT_RPM: String(LIMIT),
    STATS_ROLLUP_INTERVAL_MS: "0",
    VIDEO_POLL_WORKERS: "0",
  }).start();
  try {
    const user = await fundedAccount(db, gw.url, { prefix: "nr", krw: 1000 });
    const key = user.keys[0]!;
    // A fresh connection per call, so the kernel spreads them over both processes.
    const answers: { status: number; process: string | null }[] = [];
    for (let i = 0; i < LIMIT * 3; i++) {
      const r = await fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", connection: "close" },
        body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
      });
      await r.arrayBuffer();
      answers.push({ status: r.status, process: r.headers.get("x-gateway-process") });
    }
    // Per process it would be twice the limit; through Redis it is the limit, for the host.
    expect(answers.filter((a) => a.status === 200)).toHaveLength(LIMIT);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(LIMIT * 2);
    expect(new Set(answers.map((a) => a.process))).toEqual(new Set(["0", "1"]));
  } finally {
    await gw.stop();
    await sim.stop();
    await db.close();
    await fresh.drop();
    gw.cleanup();
  }
}, 120_000);
