/**
 * Whole job lifecycles through the running poller (inline on PGlite) against the simulator:
 * success for every family (cost = hold, settled once), Family G Omni billed by reported
 * tokens, failure and expiry (released in full, `{code, message}`), cancel, the job deadline,
 * and the final state committing together with its money step.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { FAST_POLL, money, submit, waitJob } from "./helpers";

// A loaded machine (several suites at once) makes sign-ups and lifecycles slow.
setDefaultTimeout(30_000);

let g: TestGateway;
let user: TestUser;
let key: string;

beforeAll(async () => {
  g = await startTestGateway({ db: "pglite", env: FAST_POLL });
  user = await g.newUser({ creditKrw: 500_000 });
  key = (await g.newKey(user)).key;
}, 60_000);
afterAll(() => g.stop());

describe("success", () => {
  const cases: [string, Record<string, unknown>, number][] = [
    ["kling-v3", { duration_seconds: 5 }, 750],
    ["kling-v2-6", { duration_seconds: 5, image: "https://example.com/first.png" }, 600],
    ["ltx-2-pro", { resolution: "480p" }, 672],
    ["seedance-1-5-pro", { images: ["https://example.com/a.png", "https://example.com/b.png"] }, 720],
    ["veo-3", { resolution: "1080p", duration_seconds: 4 }, 2240],
  ];
  for (const [model, extra, krw] of cases) {
    test(`${model}: succeeded with result_url, a video asset and cost = hold`, async () => {
      const before = await money(g, user);
      const r = await submit(g, key, { model, prompt: `lifecycle ${model} [sim:video_ms=120]`, ...extra });
      expect(r.status).toBe(202);
      expect((await money(g, user)).held - before.held).toBe(krw);
      const job = await waitJob(g, key, r.body.job_id);
      expect(job.status).toBe("succeeded");
      expect(job.cost).toEqual({ krw });
      expect(job.error).toBeNull();
      expect(job.assets).toEqual([{ type: "video", url: job.result_url }]);
      if (model.startsWith("veo")) expect(job.result_url).toBe(`${g.url}/v1/jobs/${job.job_id}/content`);
      else {
        // Other families hand out the vendor's own (signed) URL.
        expect(job.result_url.startsWith(g.gw.sim!.url)).toBe(true);
        const file = await fetch(job.result_url);
        expect(file.status).toBe(200);
        expect(new TextDecoder().decode((await file.bytes()).slice(4, 8))).toBe("ftyp");
      }
      expect(await money(g, user)).toEqual({ balance: before.balance - krw, held: before.held });
    });
  }

  test("the usage event names the model's producer (rankings show it)", async () => {
    const makers: [string, Record<string, unknown>, string][] = [
      ["kling-v3", { duration_seconds: 5 }, "kuaishou"],
      ["ltx-2-pro", { resolution: "480p" }, "lightricks"],
      ["seedance-1-5-pro", {}, "bytedance"],
      ["veo-3", { resolution: "1080p", duration_seconds: 4 }, "google"],
    ];
    for (const [model, extra, maker] of makers) {
      const r = await submit(g, key, { model, prompt: `maker ${model} [sim:video_ms=60]`, ...extra });
      expect(r.status).toBe(202);
      expect((await waitJob(g, key, r.body.job_id)).status).toBe("succeeded");
      const rows = await g.gw.deps.db.query<{ maker: string | null; api: string | null }>(
        "select maker, api from usage_events where request_id = $1",
        [r.body.job_id],
      );
      expect([model, rows.map((x) => [x.maker, x.api])]).toEqual([model, [[maker, "video"]]]);
    }
  });

  test("Family G Omni is billed by the output tokens reported on completion", async () => {
    const before = await money(g, user);
    const r = await submit(g, key, { model: "veo-3-omni", prompt: "omni [sim:video_ms=100] [sim:tokens=12345]" });
    expect(r.status).toBe(202);
    expect((await money(g, user)).held - before.held).toBe(2880);
    const job = await waitJob(g, key, r.body.job_id);
    expect(job.status).toBe("succeeded");
    // 12,345 tokens × 60 KRW / 1,000 = 740.7 KRW, shown rounded; the ledger keeps the exact amount.
    expect(job.cost).toEqual({ krw: 741 });
    const after = await money(g, user);
    expect(after.held).toBe(before.held);
    expect(Math.round((before.balance - after.balance) * 10)).toBe(7407);
  });

  test("Family G Omni is never charged more than its hold", async () => {
    const before = await money(g, user);
    const r = await submit(g, key, { model: "veo-3-omni", prompt: "omni big [sim:video_ms=100] [sim:tokens=99999]" });
    const job = await waitJob(g, key, r.body.job_id);
    expect(job.cost).toEqual({ krw: 2880 });
    expect((await money(g, user)).balance).toBe(before.balance - 2880);
  });

  test("the settlement is recorded as a video usage event", async () => {
    const r = await submit(g, key, { model: "kling-v3", duration_seconds: 3, prompt: "usage [sim:video_ms=50]" });
    await waitJob(g, key, r.body.job_id);
    const rows = await g.gw.deps.db.query<Record<string, unknown>>(
      "select modality, model, provider, status, cost_micro from usage_events where request_id = $1",
      [r.body.job_id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ modality: "video", model: "kling-v3", provider: "kling", status: 200 });
    expect(BigInt(String(rows[0]!.cost_micro))).toBe(450_000_000n);
  });
});

describe("failure and expiry release the hold in full", () => {
  const cases: [string, Record<string, unknown>, string, string][] = [
    ["kling-v3", { duration_seconds: 5 }, "video_fail", "generation_failed"],
    ["kling-v3", { duration_seconds: 5 }, "video_expire", "generation_expired"],
    ["ltx-2-fast", {}, "video_fail", "generation_failed"],
    ["ltx-2-fast", {}, "video_expire", "generation_expired"],
    ["seedance-2-0", {}, "video_fail", "generation_failed"],
    ["seedance-2-0", {}, "video_expire", "generation_expired"],
    ["veo-3", {}, "video_fail", "generation_failed"],
    ["veo-3", {}, "video_expire", "generation_expired"],
    ["veo-3", {}, "video_filtered", "content_filtered"],
  ];
  for (const [model, extra, directive, code] of cases) {
    test(`${model} [sim:${directive}] → failed, ${code}`, async () => {
      const before = await money(g, user);
      const r = await submit(g, key, { model, prompt: `bad luck [sim:video_ms=80] [sim:${directive}]`, ...extra });
      expect(r.status).toBe(202);
      const job = await waitJob(g, key, r.body.job_id);
      expect(job).toMatchObject({ status: "failed", result_url: null, cost: null, assets: [] });
      expect(job.error.code).toBe(code);
      expect(typeof job.error.message).toBe("string");
      expect(Object.keys(job.error).sort()).toEqual(["code", "message"]);
      expect(await money(g, user)).toEqual(before);
    });
  }
});

describe("cancel", () => {
  test("a processing job is canceled and its hold released; canceling again is 409", async () => {
    const before = await money(g, user);
    const r = await submit(g, key, { model: "seedance-2-0", prompt: "cancel me [sim:video_ms=1500]" });
    expect((await money(g, user)).held).toBe(before.held + 1120);
    const c = await g.call("POST", `/v1/jobs/${r.body.job_id}/cancel`, { token: key });
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({ status: "canceled", cost: null, result_url: null });
    expect(c.body.error.code).toBe("canceled");
    expect(await money(g, user)).toEqual(before);
    const again = await g.call("POST", `/v1/jobs/${r.body.job_id}/cancel`, { token: key });
    expect(again.status).toBe(409);
    // The upstream task finishes later; the job stays canceled and nothing is charged.
    await Bun.sleep(1700);
    const later = await g.call("GET", `/v1/jobs/${r.body.job_id}`, { token: key });
    expect(later.body.status).toBe("canceled");
    expect(await money(g, user)).toEqual(before);
  });

  test("a finished job cannot be canceled", async () => {
    const r = await submit(g, key, { model: "kling-v3", duration_seconds: 3, prompt: "done [sim:video_ms=30]" });
    const job = await waitJob(g, key, r.body.job_id);
    expect(job.status).toBe("succeeded");
    const c = await g.call("POST", `/v1/jobs/${r.body.job_id}/cancel`, { token: key });
    expect(c.status).toBe(409);
    expect(c.body.detail.error).toBe("conflict");
    const bad = await g.call("POST", "/v1/jobs/12345/cancel", { token: key });
    expect(bad.status).toBe(400);
  });
});

describe("deadline and atomic finish", () => {
  test("a job past its deadline fails with generation_timeout and is released", async () => {
    const before = await money(g, user);
    const r = await submit(g, key, { model: "veo-3", prompt: "never ends [sim:video_ms=600000]" });
    await g.gw.deps.db.query(
      "update video_jobs set deadline_at = now() - interval '1 second', next_poll_at = now() where id = $1",
      [r.body.job_id],
    );
    const job = await waitJob(g, key, r.body.job_id);
    expect(job.status).toBe("failed");
    expect(job.error.code).toBe("generation_timeout");
    expect(await money(g, user)).toEqual(before);
  });

  test("a job's final state and its money step commit together, once", async () => {
    const before = await money(g, user);
    const r = await submit(g, key, { model: "seedance-2-0", prompt: "race [sim:video_ms=600000]" });
    const repo = g.gw.video.pool.repo;
    const cost = 1_000_000_000n; // 1,000 KRW of the 1,120 held
    const settle = { kind: "settle" as const, costMicro: cost, tokens: 0, event: null };
    // Somebody else's claim: nothing changes, no money moves.
    expect(
      await repo.finish(r.body.job_id, "not-the-owner", { status: "succeeded", costMicro: cost }, settle),
    ).toBeNull();
    expect((await money(g, user)).held).toBe(before.held + 1120);
    // Two finishers at once (a completion and a cancel, say): one wins, the hold closes once.
    const [x, y] = await Promise.all([
      repo.finish(r.body.job_id, null, { status: "succeeded", costMicro: cost }, settle),
      repo.finish(
        r.body.job_id,
        null,
        { status: "canceled", error: { code: "canceled", message: "m" } },
        { kind: "release", event: null },
      ),
    ]);
    expect([x, y].filter(Boolean)).toHaveLength(1);
    const after = await money(g, user);
    expect(after.held).toBe(before.held);
    expect(after.balance).toBe(x ? before.balance - 1000 : before.balance);
    expect((await g.call("POST", `/v1/jobs/${r.body.job_id}/cancel`, { token: key })).status).toBe(409);
  });
});
