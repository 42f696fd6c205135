/**
 * /metrics beyond request counts: tokens and KRW by model and provider (equal to the books in
 * SQL), video jobs by family and state, upstream calls and polls of video providers, the poll
 * queue, credit leases, and process metrics (RSS, CPU, event-loop lag). The video counters are
 * checked with the poller inline (PGlite) and in Bun workers (PostgreSQL), whose observations
 * travel to the main thread as messages.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { buildGateway } from "../../src/gateway";
import {
  ADMIN_TOKEN,
  dbKinds,
  freshPostgres,
  postgresAvailable,
  startTestGateway,
  TestGateway,
  UNLIMITED_ENV,
} from "../harness";
import { FAST_POLL, NO_POLL, submit, waitJob } from "../video/helpers";

setDefaultTimeout(30_000);

/** The value of the sample of `name` whose labels include `labels` (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split("\n")) {
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$/);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[3] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[4]);
  }
  return 0;
}

async function scrape(g: TestGateway): Promise<string> {
  const r = await fetch(g.url + "/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(r.status).toBe(200);
  return r.text();
}

/** Scrapes with the database-backed values read afresh (past the registry's few seconds of reuse). */
async function scrapeFresh(g: TestGateway): Promise<string> {
  await g.gw.deps.metrics.registry.refresh({ force: true });
  return scrape(g);
}

async function chat(g: TestGateway, key: string, model: string, stream = false) {
  const r = await fetch(g.url + "/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({
      model,
      stream,
      messages: [{ role: "user", content: `metrics ${crypto.randomUUID()}` }],
      ...(stream && { stream_options: { include_usage: true } }),
    }),
  });
  expect(r.status).toBe(200);
  await r.text();
}

for (const kind of await dbKinds()) {
  describe(`metrics on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind, env: FAST_POLL });
    }, 60_000);
    afterAll(() => g?.stop());

    test("tokens and KRW totals equal the usage events in SQL, with no model, provider or account in their labels", async () => {
      const user = await g.newUser({ creditKrw: 10_000 });
      const { key } = await g.newKey(user);
      await chat(g, key, "gpt-4o-mini");
      await chat(g, key, "gpt-4o-mini", true);
      await chat(g, key, "claude-sonnet-4-5");
      await chat(g, key, "gemini-2.5-flash", true);
      await Bun.sleep(100); // a settle behind the stream's last bytes
      const text = await scrape(g);
      const rows = await g.gw.deps.db.query<{ model: string; provider: string; p: string; c: string; cost: string }>(
        "select model, provider, sum(prompt_tokens) as p, sum(completion_tokens) as c, sum(cost_micro) as cost from usage_events where modality = 'text' and status = 200 group by 1, 2",
      );
      expect(rows.length).toBeGreaterThanOrEqual(3);
      const total = (f: (r: (typeof rows)[number]) => string) => rows.reduce((a, r) => a + Number(f(r)), 0);
      // One account is the only caller of these models: its figures must not be readable per model.
      expect(sample(text, "gateway_tokens_total", { kind: "input" })).toBe(total((r) => r.p));
      expect(sample(text, "gateway_tokens_total", { kind: "output" })).toBe(total((r) => r.c));
      expect(sample(text, "gateway_cost_krw_total")).toBeCloseTo(total((r) => r.cost) / 1e6, 6);
      for (const line of text.split("\n").filter((l) => /^gateway_(tokens|cost_krw)_total/.test(l)))
        expect(line).not.toMatch(/model=|provider=/);
      // Every call waited once for its hold and once for its settle (earlier tests add theirs).
      const settled =
        rows.length &&
        (
          await g.gw.deps.db.query<{ n: number }>(
            "select count(*)::int as n from usage_events where modality = 'text' and status = 200",
          )
        )[0]!.n;
      expect(sample(text, "gateway_ledger_wait_seconds_count", { step: "hold" })).toBeGreaterThanOrEqual(settled);
      expect(sample(text, "gateway_ledger_wait_seconds_count", { step: "settle" })).toBe(settled);
    });

    test("a video job: accepted and succeeded by family, its upstream calls and polls, its cost", async () => {
      const user = await g.newUser({ creditKrw: 10_000 });
      const { key } = await g.newKey(user);
      const before = sample(await scrape(g), "gateway_cost_krw_total");
      const r = await submit(g, key, { model: "kling-v3", prompt: "metrics [sim:video_ms=120]", duration_seconds: 5 });
      expect(r.status).toBe(202);
      const job = await waitJob(g, key, r.body.job_id);
      expect(job.status).toBe("succeeded");
      const text = await scrape(g);
      const family = (
        await g.gw.deps.db.query<{ family: string; provider_id: string }>(
          "select family, provider_id from video_jobs where id = $1",
          [job.job_id],
        )
      )[0]!;
      expect(
        sample(text, "gateway_video_jobs_total", { family: family.family, state: "accepted" }),
      ).toBeGreaterThanOrEqual(1);
      expect(
        sample(text, "gateway_video_jobs_total", { family: family.family, state: "succeeded" }),
      ).toBeGreaterThanOrEqual(1);
      // The submit and at least one poll reached the video provider, counted like text calls.
      expect(
        sample(text, "gateway_upstream_calls_total", { provider: family.provider_id, outcome: "ok" }),
      ).toBeGreaterThanOrEqual(2);
      expect(
        sample(text, "gateway_video_poll_seconds_count", { provider: family.provider_id, outcome: "ok" }),
      ).toBeGreaterThanOrEqual(1);
      expect(sample(text, "gateway_cost_krw_total") - before).toBeCloseTo(job.cost.krw, 6);
    });
  });
}

for (const kind of await dbKinds()) {
  describe(`video queue metrics on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind, env: NO_POLL });
    }, 60_000);
    afterAll(() => g?.stop());

    test("jobs in progress and the poll queue's backlog are read from the database", async () => {
      const user = await g.newUser({ creditKrw: 10_000 });
      const { key } = await g.newKey(user);
      const r = await submit(g, key, { model: "ltx-2-pro", prompt: "metrics queue", resolution: "480p" });
      expect(r.status).toBe(202);
      const id = r.body.job_id;
      const family = (
        await g.gw.deps.db.query<{ family: string }>("select family from video_jobs where id = $1", [id])
      )[0]!.family;
      const set = (sql: string) => g.gw.deps.db.query(`update video_jobs set ${sql} where id = $1`, [id]);
      await set("next_poll_at = now() + interval '1 hour'");
      let text = await scrapeFresh(g);
      expect(sample(text, "gateway_video_jobs_processing", { family })).toBe(1);
      expect(sample(text, "gateway_video_queue_depth", { family })).toBe(0);
      // Due, but a poller holds it: not waiting.
      await set(
        "next_poll_at = now() - interval '1 second', claim_owner = 'p', claim_until = now() + interval '1 hour'",
      );
      expect(sample(await scrapeFresh(g), "gateway_video_queue_depth", { family })).toBe(0);
      // Due and its poller's claim ran out: waiting for a poller.
      await set("claim_until = now() - interval '1 second'");
      expect(sample(await scrapeFresh(g), "gateway_video_queue_depth", { family })).toBe(1);
      const cancel = await g.call("POST", `/v1/jobs/${id}/cancel`, { token: key });
      expect(cancel.status).toBe(200);
      text = await scrapeFresh(g);
      expect(sample(text, "gateway_video_jobs_processing", { family })).toBe(0);
      expect(sample(text, "gateway_video_queue_depth", { family })).toBe(0);
      expect(sample(text, "gateway_video_jobs_total", { family, state: "canceled" })).toBe(1);
      expect(sample(text, "gateway_video_jobs_total", { family, state: "accepted" })).toBe(1);
    });
  });
}

describe("process metrics", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({ db: "pglite" });
  }, 60_000);
  afterAll(() => g?.stop());

  test("RSS, heap, CPU, open files and start time are reported", async () => {
    const text = await scrape(g);
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(10 * 1024 * 1024);
    expect(sample(text, "process_heap_bytes")).toBeGreaterThan(0);
    expect(sample(text, "process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(sample(text, "process_open_fds")).toBeGreaterThan(0);
    expect(Math.abs(sample(text, "process_start_time_seconds") - (Date.now() / 1000 - process.uptime()))).toBeLessThan(
      5,
    );
    expect(text).toContain("# TYPE gateway_leases_open gauge");
    expect(text).toContain("# TYPE gateway_leased_krw gauge");
  });

  test("a blocked event loop shows as lag", async () => {
    const before = sample(await scrape(g), "gateway_event_loop_lag_seconds_bucket", { le: "0.25" });
    const total = sample(await scrape(g), "gateway_event_loop_lag_seconds_count");
    // The gateway runs in this process: block it. The sampler's next tick was due within 0.25 s
    // of the block's start, so it fires at least 0.45 s late.
    const until = performance.now() + 700;
    while (performance.now() < until);
    await Bun.sleep(600);
    const text = await scrape(g);
    // That late sample is counted, but not in the buckets up to 0.25 s.
    const count = sample(text, "gateway_event_loop_lag_seconds_count");
    expect(count - total).toBeGreaterThan(
      sample(text, "gateway_event_loop_lag_seconds_bucket", { le: "0.25" }) - before,
    );
    expect(sample(text, "gateway_event_loop_lag_last_seconds")).toBeLessThan(0.25); // it recovered
  });
});

const PG = await postgresAvailable();
describe.skipIf(!PG)("video metrics from poller workers (PostgreSQL)", () => {
  let g: TestGateway;
  let drop: () => Promise<void>;
  let dataDir: string;
  beforeAll(async () => {
    const fresh = await freshPostgres();
    drop = fresh.drop;
    dataDir = mkdtempSync(join(tmpdir(), "gw-metrics-"));
    const cfg = loadConfig({
      DATABASE_URL: fresh.url,
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      JWT_SECRET: "test-jwt-secret-0123456789abcdef0123456789",
      RATE_LIMIT_RPM: "0",
      DEMO_MODE: "false",
      SIMULATOR: "on",
      LOG_LEVEL: "silent",
      ...UNLIMITED_ENV,
      ...FAST_POLL,
      VIDEO_POLL_WORKERS: "1",
    });
    const gw = await buildGateway(cfg);
    gw.app.listen({ port: 0, hostname: "127.0.0.1" });
    g = new TestGateway(gw, `http://127.0.0.1:${gw.app.server!.port}`, "pg", async () =>
      rmSync(dataDir, { recursive: true, force: true }),
    );
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    await drop?.();
  });

  test("a job polled by a worker is counted on the main thread's /metrics", async () => {
    expect(g.gw.video.pool.mode).toBe("workers");
    const before = sample(await scrape(g), "gateway_cost_krw_total");
    const user = await g.newUser({ creditKrw: 10_000 });
    const { key } = await g.newKey(user);
    const r = await submit(g, key, {
      model: "veo-3",
      prompt: "worker metrics [sim:video_ms=120]",
      resolution: "1080p",
      duration_seconds: 4,
    });
    expect(r.status).toBe(202);
    const job = await waitJob(g, key, r.body.job_id);
    expect(job.status).toBe("succeeded");
    await Bun.sleep(100); // the worker's message crosses threads
    const text = await scrape(g);
    const row = (
      await g.gw.deps.db.query<{ family: string; provider_id: string }>(
        "select family, provider_id from video_jobs where id = $1",
        [job.job_id],
      )
    )[0]!;
    expect(sample(text, "gateway_video_jobs_total", { family: row.family, state: "succeeded" })).toBe(1);
    expect(
      sample(text, "gateway_video_poll_seconds_count", { provider: row.provider_id, outcome: "ok" }),
    ).toBeGreaterThanOrEqual(1);
    // Family G: the result was downloaded by the worker, also an upstream call.
    expect(
      sample(text, "gateway_upstream_calls_total", { provider: row.provider_id, outcome: "ok" }),
    ).toBeGreaterThanOrEqual(3);
    expect(sample(text, "gateway_cost_krw_total") - before).toBeCloseTo(job.cost.krw, 6);
    // The worker's usage event names the producer too (its runtime carries the catalog's makers).
    const ev = await g.gw.deps.db.query<{ maker: string | null }>(
      "select maker from usage_events where request_id = $1",
      [job.job_id],
    );
    expect(ev.map((x) => x.maker)).toEqual(["google"]);
  });
});
