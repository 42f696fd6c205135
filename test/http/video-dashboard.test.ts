/**
 * The dashboard's video endpoints: every job of the account whichever key submitted it, newest
 * first and paged; another account's job is 404; cancel releases the hold; the stored result is
 * read whole or by range.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { fastUser } from "../support/http";
import { FAST_POLL, submit, waitJob } from "../video/helpers";

setDefaultTimeout(30_000);

describe("video jobs for the dashboard", () => {
  let g: TestGateway;
  let u: TestUser;
  let other: TestUser;
  let a: string;
  let b: string;
  const ids: string[] = [];
  beforeAll(async () => {
    g = await startTestGateway({ env: FAST_POLL });
    u = await fastUser(g, { creditKrw: 100_000 });
    other = await fastUser(g, { creditKrw: 1000 });
    a = (await g.newKey(u)).key;
    b = (await g.newKey(u)).key;
    const done = await submit(g, a, {
      model: "veo-3",
      duration_seconds: 3,
      prompt: "a finished boat [sim:video_ms=50]",
    });
    ids.push(done.body.job_id);
    expect((await waitJob(g, a, done.body.job_id)).status).toBe("succeeded");
    const slow = await submit(g, b, {
      model: "veo-3",
      duration_seconds: 3,
      prompt: "a slow river [sim:video_ms=20000]",
    });
    ids.push(slow.body.job_id);
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  test("the account's jobs from every key, newest first, in pages", async () => {
    const r = await g.call("GET", "/v1/video/jobs", { token: u.jwt });
    expect(r.status).toBe(200);
    expect(r.body.data.map((j: any) => j.job_id)).toEqual([...ids].reverse());
    const [slow, done] = r.body.data;
    expect(slow).toMatchObject({
      status: "processing",
      prompt: "a slow river [sim:video_ms=20000]",
      content_url: null,
    });
    expect(done).toMatchObject({ status: "succeeded", content_url: `/v1/video/jobs/${ids[0]}/content` });
    expect(done.cost.krw).toBeGreaterThan(0);
    const first = await g.call("GET", "/v1/video/jobs?limit=1", { token: u.jwt });
    expect(first.body.has_more).toBe(true);
    const second = await g.call("GET", `/v1/video/jobs?limit=1&cursor=${first.body.next_cursor}`, { token: u.jwt });
    expect(second.body.data.map((j: any) => j.job_id)).toEqual([ids[0]]);
    expect(second.body.has_more).toBe(false);
    expect((await g.call("GET", "/v1/video/jobs", { token: other.jwt })).body.data).toEqual([]);
    expect((await g.call("GET", "/v1/video/jobs?limit=0", { token: u.jwt })).status).toBe(422);
    expect((await g.call("GET", "/v1/video/jobs", { token: a })).status).toBe(401);
  });

  test("the stored result whole and by range; another account gets 404", async () => {
    const whole = await fetch(`${g.url}/v1/video/jobs/${ids[0]}/content`, {
      headers: { authorization: `Bearer ${u.jwt}` },
    });
    expect(whole.status).toBe(200);
    const bytes = new Uint8Array(await whole.arrayBuffer());
    const part = await fetch(`${g.url}/v1/video/jobs/${ids[0]}/content`, {
      headers: { authorization: `Bearer ${u.jwt}`, range: "bytes=10-99" },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 10-99/${bytes.length}`);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes.slice(10, 100));
    expect((await g.call("GET", `/v1/video/jobs/${ids[0]}/content`, { token: other.jwt })).status).toBe(404);
    expect((await g.call("GET", `/v1/video/jobs/${ids[1]}/content`, { token: u.jwt })).status).toBe(409);
  });

  test("cancel: the account's processing job, its hold released; another account's is 404", async () => {
    expect((await g.call("POST", `/v1/video/jobs/${ids[1]}/cancel`, { token: other.jwt })).status).toBe(404);
    const r = await g.call("POST", `/v1/video/jobs/${ids[1]}/cancel`, { token: u.jwt });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("canceled");
    const [hold] = await g.gw.deps.db.query<{ status: string }>("select status from holds where id = $1", [ids[1]]);
    expect(hold?.status).toBe("released");
    expect((await g.call("POST", `/v1/video/jobs/${ids[1]}/cancel`, { token: u.jwt })).status).toBe(409);
  });
});
