/**
 * The simulator's video task APIs over real sockets: each family's bodies have the structure
 * of the vendor samples, tasks move through their states on `[sim:video_ms]`, end failed or
 * expired on `[sim:video_fail]` / `[sim:video_expire]`, answer 401/404 in the vendor's
 * envelope, count in /sim/stats, and serve deterministic result files (Veo's behind its key
 * and a redirect).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startSimulator, type Simulator } from "../../src/sim";
import { structuralDiff } from "../sim/helpers";

const FIX = join(import.meta.dir, "..", "fixtures", "video");
const fixture = (vendor: string, name: string) => JSON.parse(readFileSync(join(FIX, vendor, name), "utf8"));

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.stop());

const BEARER = { authorization: "Bearer test-key", "content-type": "application/json" };
const GOOG = { "x-goog-api-key": "AIza-test", "content-type": "application/json" };

async function call(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    redirect: "manual",
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

describe("Kling", () => {
  const base = () => sim.baseUrl("kling");
  test("create, then submitted → processing → succeed, bodies shaped like the samples", async () => {
    const created = await call("POST", `${base()}/v1/videos/text2video`, BEARER, {
      model_name: "kling-v3",
      prompt: "kite [sim:video_ms=300]",
      duration: "5",
      mode: "pro",
    });
    expect(created.status).toBe(200);
    expect(structuralDiff(fixture("kling", "create.response.json"), created.body)).toEqual([]);
    const id = created.body.data.task_id;
    expect(id).toMatch(/^\d+$/);
    const poll = () => call("GET", `${base()}/v1/videos/text2video/${id}`, BEARER);
    const first = await poll();
    expect(first.body.data.task_status).toBe("submitted");
    expect(structuralDiff(fixture("kling", "poll.submitted.json"), first.body)).toEqual([]);
    await Bun.sleep(150);
    expect((await poll()).body.data.task_status).toBe("processing");
    await Bun.sleep(200);
    const done = await poll();
    expect(structuralDiff(fixture("kling", "poll.succeed.json"), done.body)).toEqual([]);
    expect(done.body.data.task_result.videos[0].duration).toBe("5");
    const file = await fetch(done.body.data.task_result.videos[0].url);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("video/mp4");
    expect((await file.bytes()).length).toBe(40 + 5 * 8192);
    // The task lives under its own kind only.
    expect((await call("GET", `${base()}/v1/videos/image2video/${id}`, BEARER)).status).toBe(404);
  });

  test("video_fail and video_expire end failed, with Kling's sample shape", async () => {
    for (const directive of ["video_fail", "video_expire"]) {
      const c = await call("POST", `${base()}/v1/videos/image2video`, BEARER, {
        model_name: "kling-v3",
        prompt: `x [sim:video_ms=1] [sim:${directive}]`,
        image: "https://e.com/a.png",
        duration: "5",
      });
      await Bun.sleep(5);
      const p = await call("GET", `${base()}/v1/videos/image2video/${c.body.data.task_id}`, BEARER);
      expect(p.body.data.task_status).toBe("failed");
      expect(structuralDiff(fixture("kling", "poll.failed.json"), p.body)).toEqual([]);
      expect(p.body.data.task_status_msg).toMatch(directive === "video_expire" ? /expired/ : /failed/);
    }
  });

  test("no token is 401 with Kling's code; an unknown task is 404", async () => {
    const r = await call("GET", `${base()}/v1/videos/text2video/1`, {});
    expect(r.status).toBe(401);
    expect(structuralDiff(fixture("kling", "error-401.json"), r.body)).toEqual([]);
    expect(r.body.code).toBe(1000);
    expect((await call("GET", `${base()}/v1/videos/text2video/999`, BEARER)).status).toBe(404);
  });
});

describe("Seedance", () => {
  const base = () => sim.baseUrl("seedance");
  test("create answers {id}; queued → running → succeeded with usage", async () => {
    const c = await call("POST", `${base()}/contents/generations/tasks`, BEARER, {
      model: "seedance-1-0-pro-250528",
      content: [{ type: "text", text: "kite [sim:video_ms=300]" }],
      resolution: "1080p",
      duration: 5,
    });
    expect(c.status).toBe(200);
    expect(structuralDiff(fixture("seedance", "create.response.json"), c.body)).toEqual([]);
    const poll = () => call("GET", `${base()}/contents/generations/tasks/${c.body.id}`, BEARER);
    const q = await poll();
    expect(q.body.status).toBe("queued");
    expect(structuralDiff(fixture("seedance", "poll.queued.json"), q.body)).toEqual([]);
    await Bun.sleep(150);
    const r = await poll();
    expect(r.body.status).toBe("running");
    await Bun.sleep(200);
    const s = await poll();
    expect(structuralDiff(fixture("seedance", "poll.succeeded.json"), s.body)).toEqual([]);
    expect(s.body.usage.completion_tokens).toBe(Math.floor((1920 * 1080 * 24 * 5) / 1024));
  });

  test("video_fail is failed with error, video_expire is expired; errors use Ark's envelope", async () => {
    const make = async (d: string) =>
      (
        await call("POST", `${base()}/contents/generations/tasks`, BEARER, {
          model: "m",
          content: [{ type: "text", text: `x [sim:video_ms=1] [sim:${d}]` }],
        })
      ).body.id;
    const failed = await make("video_fail");
    const expired = await make("video_expire");
    await Bun.sleep(5);
    const f = await call("GET", `${base()}/contents/generations/tasks/${failed}`, BEARER);
    expect(structuralDiff(fixture("seedance", "poll.failed.json"), f.body)).toEqual([]);
    expect((await call("GET", `${base()}/contents/generations/tasks/${expired}`, BEARER)).body.status).toBe("expired");
    const bad = await call("POST", `${base()}/contents/generations/tasks`, BEARER, { model: "m", content: [] });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.error)).toEqual(["code", "message", "param", "type"]);
  });
});

describe("LTX", () => {
  test("v2 task: {id}, then queued → processing → completed with video_url; 401 in LTX's envelope", async () => {
    const base = sim.baseUrl("ltx");
    const c = await call("POST", `${base}/v2/text-to-video`, BEARER, {
      prompt: "kite [sim:video_ms=240]",
      model: "ltx-2-fast",
      duration: 8,
      resolution: "3840x2160",
    });
    expect(Object.keys(c.body)).toEqual(["id"]);
    const poll = () => call("GET", `${base}/v2/text-to-video/${c.body.id}`, BEARER);
    expect((await poll()).body.status).toBe("queued");
    await Bun.sleep(120);
    expect((await poll()).body.status).toBe("processing");
    await Bun.sleep(150);
    const done = await poll();
    expect(done.body).toMatchObject({ status: "completed", duration: 8 });
    expect((await fetch(done.body.video_url)).status).toBe(200);
    const noAuth = await call("GET", `${base}/v2/text-to-video/${c.body.id}`, {});
    expect(noAuth.status).toBe(401);
    expect(structuralDiff(fixture("ltx", "error-401.json"), noAuth.body)).toEqual([]);
    const badRes = await call("POST", `${base}/v2/text-to-video`, BEARER, {
      prompt: "x",
      model: "ltx-2-fast",
      resolution: "640x480",
    });
    expect(badRes.status).toBe(400);
  });
});

describe("Veo", () => {
  const base = () => sim.baseUrl("veo");
  test("a long-running operation; the file URI needs the key and redirects to a signed URL", async () => {
    const c = await call("POST", `${base()}/v1beta/models/veo-3.0-generate-001:predictLongRunning`, GOOG, {
      instances: [{ prompt: "kite [sim:video_ms=100]" }],
      parameters: { durationSeconds: 4 },
    });
    expect(c.status).toBe(200);
    expect(c.body.name).toMatch(/^models\/veo-3\.0-generate-001\/operations\/\w+$/);
    const poll = () => call("GET", `${base()}/v1beta/${c.body.name}`, GOOG);
    // Running: the name only, no `done` (as the sample).
    expect(Object.keys((await poll()).body)).toEqual(Object.keys(fixture("veo", "poll.running.json")));
    await Bun.sleep(120);
    const done = await poll();
    expect(structuralDiff(fixture("veo", "poll.succeeded.json"), done.body)).toEqual([]);
    expect(done.body.response.usageMetadata).toBeUndefined();
    const uri: string = done.body.response.generateVideoResponse.generatedSamples[0].video.uri;
    expect((await fetch(uri, { redirect: "manual" })).status).toBe(400);
    const redirect = await fetch(uri, { headers: { "x-goog-api-key": "k" }, redirect: "manual" });
    expect(redirect.status).toBe(302);
    const signed = new URL(redirect.headers.get("location")!, uri).toString();
    const a = await (await fetch(signed)).bytes();
    const b = await (await fetch(signed)).bytes();
    expect(a.length).toBe(40 + 4 * 8192);
    expect(new TextDecoder().decode(a.slice(4, 12))).toBe("ftypisom");
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
  });

  test("an Omni model picks its length and reports output tokens; it refuses durationSeconds", async () => {
    const c = await call("POST", `${base()}/v1beta/models/veo-3.0-omni-preview:predictLongRunning`, GOOG, {
      instances: [{ prompt: "omni [sim:video_ms=1] [sim:tokens=777]" }],
      parameters: { resolution: "1080p" },
    });
    await Bun.sleep(5);
    const done = await call("GET", `${base()}/v1beta/${c.body.name}`, GOOG);
    expect(done.body.response.usageMetadata.candidatesTokenCount).toBe(777);
    const refused = await call("POST", `${base()}/v1beta/models/veo-3.0-omni-preview:predictLongRunning`, GOOG, {
      instances: [{ prompt: "x" }],
      parameters: { durationSeconds: 5 },
    });
    expect(refused.status).toBe(400);
  });

  test("video_fail, video_expire and video_filtered", async () => {
    const make = async (d: string) =>
      (
        await call("POST", `${base()}/v1beta/models/m:predictLongRunning`, GOOG, {
          instances: [{ prompt: `x [sim:video_ms=1] [sim:${d}]` }],
        })
      ).body.name;
    const names = {
      fail: await make("video_fail"),
      expire: await make("video_expire"),
      filtered: await make("video_filtered"),
    };
    await Bun.sleep(5);
    const f = await call("GET", `${base()}/v1beta/${names.fail}`, GOOG);
    expect(structuralDiff(fixture("veo", "poll.failed.json"), f.body)).toEqual([]);
    expect((await call("GET", `${base()}/v1beta/${names.expire}`, GOOG)).body.error.code).toBe(4);
    const r = await call("GET", `${base()}/v1beta/${names.filtered}`, GOOG);
    expect(structuralDiff(fixture("veo", "poll.rai-filtered.json"), r.body)).toEqual([]);
  });
});

describe("directives and stats", () => {
  test("fail applies to the create call; video_poll_ms slows polls; every call is counted", async () => {
    sim.reset();
    const base = sim.baseUrl("seedance");
    const failed = await call("POST", `${base}/contents/generations/tasks`, BEARER, {
      model: "m",
      content: [{ type: "text", text: "x [sim:fail=429]" }],
    });
    expect(failed.status).toBe(429);
    expect(failed.headers.get("retry-after")).toBe("1");
    const c = await call("POST", `${base}/contents/generations/tasks`, BEARER, {
      model: "m",
      content: [{ type: "text", text: "x [sim:video_poll_ms=150]" }],
    });
    const t0 = performance.now();
    await call("GET", `${base}/contents/generations/tasks/${c.body.id}`, BEARER);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    expect(sim.stats().calls.seedance).toEqual({
      "POST /contents/generations/tasks": 2,
      [`GET /contents/generations/tasks/${c.body.id}`]: 1,
    });
  });

  test("the default task length is 3 seconds", async () => {
    const c = await call("POST", `${sim.baseUrl("ltx")}/v2/text-to-video`, BEARER, {
      prompt: "default",
      model: "ltx-2-fast",
    });
    await Bun.sleep(1100);
    expect((await call("GET", `${sim.baseUrl("ltx")}/v2/text-to-video/${c.body.id}`, BEARER)).body.status).toBe(
      "processing",
    );
  });
});
