/**
 * The poller pool on PostgreSQL: several gateway instances on one database, each with its own
 * Bun workers, against one shared simulator (so every instance reaches the same upstream
 * tasks). Claims with FOR UPDATE SKIP LOCKED mean no job is claimed twice; a crashed
 * poller's claim expires and another takes over; the supervisor restarts a killed worker; a
 * job outlives the gateway that accepted it.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { buildGateway } from "../../src/gateway";
import { startSimulator, type Simulator } from "../../src/sim";
import { ADMIN_TOKEN, freshPostgres, postgresAvailable, TestGateway, UNLIMITED_ENV, type TestUser } from "../harness";
import { money, simCalls, submit, waitJob } from "./helpers";

setDefaultTimeout(60_000);

const PG = await postgresAvailable();
let sim: Simulator;
let db: { url: string; drop: () => Promise<void> };
let storageDir: string;
const running: TestGateway[] = [];

/** A gateway that opens the database itself from DATABASE_URL, so its pool runs Bun workers. */
async function instance(env: Record<string, string> = {}): Promise<TestGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), "gw-video-pool-"));
  const cfg = loadConfig({
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    VIDEO_STORAGE_DIR: storageDir,
    ADMIN_TOKEN,
    JWT_SECRET: "test-jwt-secret-0123456789abcdef0123456789",
    RATE_LIMIT_RPM: "0",
    DEMO_MODE: "false",
    SIMULATOR: "on",
    LOG_LEVEL: "silent",
    ...UNLIMITED_ENV,
    VIDEO_POLL_INITIAL_MS: "30",
    VIDEO_POLL_MAX_MS: "80",
    VIDEO_SWEEP_INTERVAL_MS: "3600000",
    // Every instance talks to the same simulated vendors.
    KLING_BASE_URL: sim.baseUrl("kling"),
    LTX_BASE_URL: sim.baseUrl("ltx"),
    SEEDANCE_BASE_URL: sim.baseUrl("seedance"),
    VEO_BASE_URL: sim.baseUrl("veo"),
    ...env,
  });
  const gw = await buildGateway(cfg);
  gw.app.listen({ port: 0, hostname: "127.0.0.1" });
  const g = new TestGateway(gw, `http://127.0.0.1:${gw.app.server!.port}`, "pg", async () =>
    rmSync(dataDir, { recursive: true, force: true }),
  );
  running.push(g);
  return g;
}

async function stopInstance(g: TestGateway): Promise<void> {
  running.splice(running.indexOf(g), 1);
  await g.stop();
}

/** Upstream polls the simulator saw for a job's task, and the claims the database counted. */
async function taskPolls(g: TestGateway, jobId: string): Promise<{ upstream: number; claims: number }> {
  const row = (
    await g.gw.deps.db.query<{ upstream_task: string; provider_id: string; poll_count: number }>(
      "select upstream_task, provider_id, poll_count from video_jobs where id = $1",
      [jobId],
    )
  )[0]!;
  // Task refs: `models/m/operations/ID` (Veo), `kind:ID` (Kling), or the bare id.
  const id = row.upstream_task.split("/").pop()!.split(":").pop()!;
  const upstream = Object.entries(sim.stats().calls[row.provider_id] ?? {})
    .filter(([route]) => route.startsWith("GET ") && route.endsWith(`/${id}`))
    .reduce((n, [, c]) => n + c, 0);
  return { upstream, claims: Number(row.poll_count) };
}

describe.skipIf(!PG)("video poller pool on PostgreSQL", () => {
  beforeAll(async () => {
    sim = await startSimulator();
    db = await freshPostgres();
    storageDir = mkdtempSync(join(tmpdir(), "gw-video-files-"));
  });
  afterAll(async () => {
    for (const g of [...running]) await g.stop().catch(() => {});
    await sim.stop();
    await db.drop();
    rmSync(storageDir, { recursive: true, force: true });
  });

  test("pollers of two instances claiming at once split the due jobs: each polled exactly once", async () => {
    const a = await instance({ VIDEO_POLL_WORKERS: "0" });
    const b = await instance({ VIDEO_POLL_WORKERS: "0" });
    expect(a.gw.video.pool.mode).toBe("off");
    const user = await a.newUser({ creditKrw: 100_000 });
    const key = (await a.newKey(user)).key;
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await submit(i % 2 ? a : b, key, {
        model: "seedance-2-0-fast",
        duration_seconds: 4,
        prompt: `split ${i} [sim:video_ms=1]`,
      });
      expect(r.status).toBe(202);
      ids.push(r.body.job_id);
    }
    await a.gw.deps.db.query("update video_jobs set next_poll_at = now() where id = any($1::uuid[])", [ids]);
    const polls0 = simCalls(sim.stats(), "seedance", "GET ");
    const claimed = await Promise.all([
      a.gw.video.pool.pollOnce(50, "a1"),
      b.gw.video.pool.pollOnce(50, "b1"),
      a.gw.video.pool.pollOnce(50, "a2"),
      b.gw.video.pool.pollOnce(50, "b2"),
    ]);
    expect(claimed.reduce((x, y) => x + y, 0)).toBe(12);
    expect(simCalls(sim.stats(), "seedance", "GET ") - polls0).toBe(12);
    for (const id of ids) expect((await a.call("GET", `/v1/jobs/${id}`, { token: key })).body.status).toBe("succeeded");
    // Each hold settled once: 12 × 4 s × 80 KRW.
    expect(await money(a, user)).toEqual({ balance: 100_000 - 12 * 320, held: 0 });
    await stopInstance(a);
    await stopInstance(b);
  });

  test("a job under a live claim is not handed out; once a crashed poller's claim expires, another takes over", async () => {
    const a = await instance({ VIDEO_POLL_WORKERS: "0" });
    const user = await a.newUser({ creditKrw: 10_000 });
    const key = (await a.newKey(user)).key;
    const r = await submit(a, key, { model: "kling-v3", duration_seconds: 3, prompt: "orphaned [sim:video_ms=1]" });
    await a.gw.deps.db.query("update video_jobs set next_poll_at = now() where id = $1", [r.body.job_id]);
    // A poller claims the job and dies before doing anything with it.
    const taken = await a.gw.video.pool.repo.claimDue("crashed-poller", 500, 10);
    expect(taken.map((j) => j.id)).toContain(r.body.job_id);
    expect(await a.gw.video.pool.pollOnce(10, "survivor")).toBe(0);
    await Bun.sleep(600);
    expect(await a.gw.video.pool.pollOnce(10, "survivor")).toBe(1);
    expect((await waitJob(a, key, r.body.job_id)).status).toBe("succeeded");
    await stopInstance(a);
  });

  test("worker pools of two instances complete every job, never polling one twice", async () => {
    const c = await instance({ VIDEO_POLL_WORKERS: "2" });
    const d = await instance({ VIDEO_POLL_WORKERS: "2" });
    expect(c.gw.video.pool.mode).toBe("workers");
    expect(c.gw.video.pool.status().workers).toHaveLength(2);
    const user = await c.newUser({ creditKrw: 100_000 });
    const key = (await c.newKey(user)).key;
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) {
      const r = await submit(i % 2 ? c : d, key, {
        model: i % 4 === 0 ? "veo-3" : "ltx-2-fast",
        duration_seconds: 6,
        prompt: `pool ${i} [sim:video_ms=400] [sim:video_poll_ms=60]`,
      });
      expect(r.status).toBe(202);
      ids.push(r.body.job_id);
    }
    for (const id of ids) expect((await waitJob(c, key, id, 20_000)).status).toBe("succeeded");
    for (const id of ids) {
      const { upstream, claims } = await taskPolls(c, id);
      // One upstream poll per claim, and no more than one poller's worth: a poll cycle takes at
      // least 60 ms (the slow upstream) + 30 ms (the first backoff step), so a 400 ms task
      // sees at most ~7 polls; two pollers on one job would double that.
      expect(upstream).toBe(claims);
      expect(upstream).toBeGreaterThanOrEqual(2);
      expect(upstream).toBeLessThanOrEqual(7);
    }
    expect((await money(c, user)).held).toBe(0);
    // Both instances' stops leave no claim behind.
    await stopInstance(c);
    await stopInstance(d);
    const claimed = await (await instance({ VIDEO_POLL_WORKERS: "0" })).gw.deps.db.query(
      "select id from video_jobs where claim_owner is not null",
    );
    expect(claimed).toEqual([]);
  });

  test("the supervisor restarts a killed worker, and jobs keep completing", async () => {
    const c = await instance({ VIDEO_POLL_WORKERS: "1", VIDEO_CLAIM_MS: "1000" });
    const user = await c.newUser({ creditKrw: 10_000 });
    const key = (await c.newKey(user)).key;
    const r = await submit(c, key, {
      model: "kling-v3",
      duration_seconds: 3,
      prompt: "survives a crash [sim:video_ms=300]",
    });
    c.gw.video.pool.killWorker(0);
    const until = Date.now() + 10_000;
    while (!(c.gw.video.pool.status().workers[0]!.restarts === 1 && c.gw.video.pool.status().workers[0]!.alive)) {
      if (Date.now() > until) throw new Error("worker was not restarted");
      await Bun.sleep(20);
    }
    expect((await waitJob(c, key, r.body.job_id, 15_000)).status).toBe("succeeded");
    await stopInstance(c);
  });

  test("a job survives a gateway restart: another instance on the same database finishes it", async () => {
    const first = await instance({ VIDEO_POLL_WORKERS: "2" });
    const user: TestUser = await first.newUser({ creditKrw: 10_000 });
    const key = (await first.newKey(user)).key;
    const r = await submit(first, key, {
      model: "veo-3",
      duration_seconds: 2,
      prompt: "outlives its gateway [sim:video_ms=1500]",
    });
    expect(r.status).toBe(202);
    await Bun.sleep(200);
    await stopInstance(first);
    const row = (
      await (
        await instance({ VIDEO_POLL_WORKERS: "0" })
      ).gw.deps.db.query<{ status: string; claim_owner: string | null }>(
        "select status, claim_owner from video_jobs where id = $1",
        [r.body.job_id],
      )
    )[0]!;
    expect(row).toEqual({ status: "processing", claim_owner: null });

    const second = await instance({ VIDEO_POLL_WORKERS: "2" });
    const job = await waitJob(second, key, r.body.job_id, 15_000);
    expect(job.status).toBe("succeeded");
    expect(job.cost).toEqual({ krw: 1120 });
    expect(await money(second, user)).toEqual({ balance: 10_000 - 1120, held: 0 });
    const res = await fetch(`${second.url}/v1/jobs/${r.body.job_id}/content`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    expect((await res.bytes()).length).toBeGreaterThan(2 * 8192);
  });
});
