/**
 * Graceful shutdown of a real gateway process on SIGTERM: it stops accepting at once, lets the
 * request and the stream in flight finish and settles them, releases its video poller's
 * claims (so another instance takes the jobs over at once), closes the database and exits 0.
 * A stream whose client left is still read for its usage (STREAM_DRAIN_MS) and billed when that
 * read ends: the shutdown waits for it too, or its hold stays open until it expires.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { freshPostgres, postgresAvailable } from "../harness";
import { openDatabase, type Database } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { call, GatewayProcess, SimProcess } from "../support/procs";
import { fundedAccount } from "../support/accounts";

const pg = await postgresAvailable();

describe.skipIf(!pg)("graceful shutdown (SIGTERM)", () => {
  let fresh: { url: string; drop: () => Promise<void> };
  let db: Database;
  let sim: SimProcess;
  let g: GatewayProcess;
  let second: GatewayProcess | undefined;

  beforeAll(async () => {
    fresh = await freshPostgres();
    db = await openDatabase({ url: fresh.url, max: 2 });
    await runMigrations(db);
    sim = await new SimProcess().start();
    g = await new GatewayProcess({
      ...sim.providerEnv(),
      DATABASE_URL: fresh.url,
      VIDEO_POLL_INITIAL_MS: "50",
      VIDEO_POLL_MAX_MS: "100",
      VIDEO_POLL_WORKERS: "1",
      STATS_ROLLUP_INTERVAL_MS: "0",
    }).start();
  }, 60_000);

  afterAll(async () => {
    await second?.stop();
    second?.cleanup();
    await g?.stop();
    await sim?.stop();
    await db?.close();
    await fresh?.drop();
    g?.cleanup();
  });

  test("in-flight work finishes and is settled; new connections are refused; claims released; exit 0", async () => {
    const row = await fundedAccount(db, g.url, { prefix: "sd", krw: 10_000 });
    const key = row.keys[0]!;

    // A video job the poller claims and keeps polling (its upstream takes a minute).
    const job = await call(g.url, "POST", "/v1/video/generations", {
      token: key,
      body: { model: "kling-v3", prompt: "a slow kite [sim:video_ms=60000]", duration_seconds: 5 },
    });
    expect(job.status).toBe(202);
    await Bun.sleep(300);
    const [claimed] = await db.query<{ claim_owner: string | null }>(
      "select claim_owner from video_jobs where id = $1",
      [job.body.job_id],
    );
    void claimed; // claimed or between polls; either way released after shutdown

    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    // A stream of ~2 s and a JSON call whose upstream answers after 1.5 s.
    const stream = fetch(g.url + "/v1/chat/completions", {
      method: "POST",
      headers,
      body: JSON.stringify({
        model: "gpt-4o-mini",
        stream: true,
        max_tokens: 100,
        messages: [{ role: "user", content: "slow stream [sim:tokens=20] [sim:chunk_ms=100]" }],
      }),
    }).then(async (r) => ({ status: r.status, id: r.headers.get("x-request-id"), text: await r.text() }));
    const slow = fetch(g.url + "/v1/chat/completions", {
      method: "POST",
      headers,
      body: JSON.stringify({
        model: "gpt-4o-mini",
        max_tokens: 20,
        messages: [{ role: "user", content: "slow answer [sim:latency=1500]" }],
      }),
    }).then(async (r) => ({ status: r.status, id: r.headers.get("x-request-id"), body: (await r.json()) as any }));
    await Bun.sleep(400);

    const t0 = performance.now();
    g.kill("SIGTERM");
    // It stops accepting: a new connection is refused soon after the signal.
    let refusedAfter: number | null = null;
    while (performance.now() - t0 < 1500) {
      try {
        await fetch(g.url + "/healthz", { signal: AbortSignal.timeout(300) });
      } catch {
        refusedAfter = performance.now() - t0;
        break;
      }
      await Bun.sleep(20);
    }
    expect(refusedAfter).not.toBeNull();

    const [s, j] = await Promise.all([stream, slow]);
    expect(s.status).toBe(200);
    expect(s.text).toContain("data: [DONE]");
    expect(s.text).not.toContain("upstream_error");
    expect(j.status).toBe(200);
    expect(j.body.choices[0].message.content.length).toBeGreaterThan(0);

    const code = await g.exited();
    const took = performance.now() - t0;
    expect(code).toBe(0);
    expect(took).toBeLessThan(25_000);

    // Both calls were settled (charged, hold closed) before the process let go of the database.
    const holds = await db.query<{ id: string; status: string }>(
      "select id, status from holds where id = any($1::uuid[])",
      [[s.id, j.id]],
    );
    expect(holds.map((h) => h.status).sort()).toEqual(["settled", "settled"]);
    const [open] = await db.query<{ n: number }>(
      "select count(*)::int as n from holds where status = 'open' and user_id = $1 and id <> $2",
      [row.id, job.body.job_id],
    );
    expect(open!.n).toBe(0);
    // The video job is still processing, with no claim held by the stopped process.
    const [v] = await db.query<{ status: string; claim_owner: string | null }>(
      "select status, claim_owner from video_jobs where id = $1",
      [job.body.job_id],
    );
    expect(v).toEqual({ status: "processing", claim_owner: null });
    console.log(
      `[shutdown] refused new connections after ${Math.round(refusedAfter!)} ms, exited 0 after ${Math.round(took)} ms with the stream and the slow call completed and settled`,
    );
  }, 60_000);

  test("a stream whose client left is read to its end and billed before the process exits", async () => {
    second = await new GatewayProcess({
      ...sim.providerEnv(),
      DATABASE_URL: fresh.url,
      STATS_ROLLUP_INTERVAL_MS: "0",
    }).start();
    const row = await fundedAccount(db, second.url, { prefix: "sl", krw: 10_000 });
    const client = new AbortController();
    const res = await fetch(second.url + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${row.keys[0]!}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-4o-mini",
        stream: true,
        max_tokens: 100,
        messages: [{ role: "user", content: "slow stream [sim:tokens=30] [sim:chunk_ms=100]" }],
      }),
      signal: client.signal,
    });
    expect(res.status).toBe(200);
    const id = res.headers.get("x-request-id")!;
    await res.body!.getReader().read(); // the first bytes, then the client hangs up
    client.abort();
    await Bun.sleep(50);
    second.kill("SIGTERM");
    expect(await second.exited()).toBe(0);

    // Before the fix of 7 December 2026 the hold was still 'open' here, for HOLD_TTL_SECONDS. The
    // stream ends well within the drain time, so its usage arrives and the call is charged, once.
    const [hold] = await db.query<{ status: string }>("select status from holds where id = $1", [id]);
    expect(hold?.status).toBe("settled");
    const [charge] = await db.query<{ n: number; micro: string }>(
      "select count(*)::int as n, coalesce(sum(abs(amount_micro)), 0)::text as micro from ledger_entries where request_id = $1 and kind = 'charge'",
      [id],
    );
    expect(charge!.n).toBe(1);
    expect(BigInt(charge!.micro)).toBeGreaterThan(0n);
    const [left] = await db.query<{ open: number; held: string }>(
      `select (select count(*)::int from holds where status = 'open' and user_id = $1) as open,
              (select held_micro::text from users where id = $1) as held`,
      [row.id],
    );
    expect(left).toEqual({ open: 0, held: "0" });
  }, 60_000);
});
