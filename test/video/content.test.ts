/**
 * GET /v1/jobs/{id}/content (Family G): only the submitting key (others 404), 409 while
 * processing, the stored bytes streamed whole (200) or as one range (206, 416 when
 * unsatisfiable), not billed; after the retention the file is deleted and the answer is 410.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { parseRange } from "../../src/surfaces/video/content";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { FAST_POLL, money, submit, waitJob } from "./helpers";

// A loaded machine (several suites at once) makes sign-ups and lifecycles slow.
setDefaultTimeout(30_000);

let g: TestGateway;
let user: TestUser;
let key: string;

beforeAll(async () => {
  g = await startTestGateway({ db: "pglite", env: FAST_POLL });
  user = await g.newUser({ creditKrw: 100_000 });
  key = (await g.newKey(user)).key;
}, 60_000);
afterAll(() => g.stop());

const content = (id: string, token: string | undefined, headers: Record<string, string> = {}) =>
  fetch(`${g.url}/v1/jobs/${id}/content`, {
    headers: { ...(token && { authorization: `Bearer ${token}` }), ...headers },
  });

/** The bytes the simulated vendor serves for a job's operation. */
async function upstreamBytes(jobId: string): Promise<Uint8Array> {
  const rows = await g.gw.deps.db.query<{ upstream_task: string }>(
    "select upstream_task from video_jobs where id = $1",
    [jobId],
  );
  const op = rows[0]!.upstream_task.split("/").pop()!;
  const res = await fetch(`${g.gw.sim!.baseUrl("veo")}/v1beta/files/${op}:download?alt=media`, {
    headers: { "x-goog-api-key": "k" },
  });
  expect(res.status).toBe(200);
  return res.bytes();
}

describe("a finished Family G job", () => {
  let id: string;
  let bytes: Uint8Array;

  beforeAll(async () => {
    const r = await submit(g, key, { model: "veo-3", duration_seconds: 3, prompt: "content [sim:video_ms=50]" });
    expect(r.status).toBe(202);
    id = r.body.job_id;
    const job = await waitJob(g, key, id);
    expect(job.status).toBe("succeeded");
    bytes = await upstreamBytes(id);
    expect(bytes.length).toBeGreaterThan(3 * 8192);
  });

  test("the submitting key gets the whole file; downloads are not billed", async () => {
    const before = await money(g, user);
    for (let i = 0; i < 2; i++) {
      const res = await content(id, key);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("video/mp4");
      expect(res.headers.get("accept-ranges")).toBe("bytes");
      expect(res.headers.get("content-length")).toBe(String(bytes.length));
      expect(Buffer.from(await res.bytes()).equals(Buffer.from(bytes))).toBe(true);
    }
    expect(await money(g, user)).toEqual(before);
  });

  test("no key is 401; another key of the same user, or another user's, is 404", async () => {
    expect((await content(id, undefined)).status).toBe(401);
    const sibling = await g.newKey(user);
    const r1 = await content(id, sibling.key);
    expect(r1.status).toBe(404);
    const stranger = await g.newKey(await g.newUser());
    expect((await content(id, stranger.key)).status).toBe(404);
    expect((await content(id, user.jwt)).status).toBe(401);
  });

  test("a single range is 206 with Content-Range", async () => {
    const size = bytes.length;
    const cases: [string, number, number][] = [
      ["bytes=0-99", 0, 99],
      ["bytes=100-", 100, size - 1],
      ["bytes=-50", size - 50, size - 1],
      [`bytes=10-${size * 10}`, 10, size - 1],
    ];
    for (const [range, start, end] of cases) {
      const res = await content(id, key, { range });
      expect(res.status).toBe(206);
      expect(res.headers.get("content-range")).toBe(`bytes ${start}-${end}/${size}`);
      expect(res.headers.get("content-length")).toBe(String(end - start + 1));
      expect(Buffer.from(await res.bytes()).equals(Buffer.from(bytes.slice(start, end + 1)))).toBe(true);
    }
  });

  test("an unsatisfiable range is 416 with the size; several or reversed ranges get the whole file", async () => {
    const res = await content(id, key, { range: `bytes=${bytes.length}-` });
    expect(res.status).toBe(416);
    expect(res.headers.get("content-range")).toBe(`bytes */${bytes.length}`);
    for (const range of ["bytes=0-1,5-6", "bytes=9-3"]) {
      const whole = await content(id, key, { range });
      expect(whole.status).toBe(200);
      expect(whole.headers.get("content-range")).toBeNull();
      expect((await whole.bytes()).length).toBe(bytes.length);
    }
  });
});

describe("no content (yet)", () => {
  test("409 while the job is processing", async () => {
    const r = await submit(g, key, { model: "veo-3-omni", prompt: "slow [sim:video_ms=5000]" });
    const res = await content(r.body.job_id, key);
    expect(res.status).toBe(409);
    expect(((await res.json()) as any).detail.error).toBe("job_not_ready");
  });

  test("a failed Family G job, a job of another family, an unknown job: 404; a non-UUID: 400", async () => {
    const failed = await submit(g, key, { model: "veo-3", prompt: "no [sim:video_ms=20] [sim:video_fail]" });
    expect((await waitJob(g, key, failed.body.job_id)).status).toBe("failed");
    expect((await content(failed.body.job_id, key)).status).toBe(404);
    const kling = await submit(g, key, { model: "kling-v3", duration_seconds: 3, prompt: "k [sim:video_ms=20]" });
    expect((await waitJob(g, key, kling.body.job_id)).status).toBe("succeeded");
    expect((await content(kling.body.job_id, key)).status).toBe(404);
    expect((await content(crypto.randomUUID(), key)).status).toBe(404);
    expect((await content("nope", key)).status).toBe(400);
  });
});

describe("retention", () => {
  test("after the configured retention the endpoint is 410 and the sweeper deletes the file", async () => {
    // 0.0004 h ≈ 1.4 s.
    const short = await startTestGateway({ db: "pglite", env: { ...FAST_POLL, VIDEO_RETENTION_HOURS: "0.0004" } });
    try {
      const u = await short.newUser({ creditKrw: 10_000 });
      const k = (await short.newKey(u)).key;
      const r = await submit(short, k, { model: "veo-3", duration_seconds: 2, prompt: "fleeting [sim:video_ms=20]" });
      expect((await waitJob(short, k, r.body.job_id)).status).toBe("succeeded");
      const url = `${short.url}/v1/jobs/${r.body.job_id}/content`;
      const rows = await short.gw.deps.db.query<{ storage_key: string }>(
        "select storage_key from video_jobs where id = $1",
        [r.body.job_id],
      );
      const storageKey = rows[0]!.storage_key;
      expect(storageKey).toStartWith(`video/${r.body.job_id}-`);
      expect((await fetch(url, { headers: { authorization: `Bearer ${k}` } })).status).toBe(200);
      expect(await short.gw.video.storage.exists(storageKey)).toBe(true);
      await Bun.sleep(1600);
      const gone = await fetch(url, { headers: { authorization: `Bearer ${k}` } });
      expect(gone.status).toBe(410);
      expect(((await gone.json()) as any).detail.error).toBe("content_expired");
      const swept = await short.gw.video.pool.sweep();
      expect(swept.deleted).toBe(1);
      expect(await short.gw.video.storage.exists(storageKey)).toBe(false);
      expect((await fetch(url, { headers: { authorization: `Bearer ${k}` } })).status).toBe(410);
      // The job itself is still readable.
      expect((await short.call("GET", `/v1/jobs/${r.body.job_id}`, { token: k })).body.status).toBe("succeeded");
    } finally {
      await short.stop();
    }
  }, 30_000);
});

describe("parseRange", () => {
  test("single ranges, suffixes, and what is ignored or unsatisfiable", () => {
    expect(parseRange(null, 100)).toBeNull();
    expect(parseRange("bytes=0-9", 100)).toEqual([0, 9]);
    expect(parseRange("bytes=90-", 100)).toEqual([90, 99]);
    expect(parseRange("bytes=-10", 100)).toEqual([90, 99]);
    expect(parseRange("bytes=-1000", 100)).toEqual([0, 99]);
    expect(parseRange("bytes=5-1", 100)).toBeNull();
    expect(parseRange("bytes=0-1,3-4", 100)).toBeNull();
    expect(parseRange("items=0-1", 100)).toBeNull();
    expect(parseRange("bytes=100-", 100)).toBe("unsatisfiable");
    expect(parseRange("bytes=-0", 100)).toBe("unsatisfiable");
    expect(parseRange("bytes=0-0", 0)).toBe("unsatisfiable");
  });
});
