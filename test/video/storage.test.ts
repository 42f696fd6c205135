/**
 * Object storage for Family G results: one contract run against the local directory and
 * against S3 (Bun's S3 client talking to a small in-test S3-compatible server: path-style
 * PUT/HEAD/GET with Range/DELETE), and a gateway configured with VIDEO_STORAGE=s3 serving
 * `/content` from it.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalStorage, S3Storage, type ObjectStorage } from "../../src/lib/storage";
import { startTestGateway } from "../harness";
import { FAST_POLL, submit, waitJob } from "./helpers";

setDefaultTimeout(30_000);

/** A minimal S3-compatible server: objects by path (`/bucket/key`), no auth checks. */
function fakeS3() {
  const objects = new Map<string, { bytes: Uint8Array; type: string | null }>();
  const requests: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = decodeURIComponent(new URL(req.url).pathname);
      requests.push(`${req.method} ${path}`);
      if (!req.headers.get("authorization")?.startsWith("AWS4-HMAC-SHA256"))
        return new Response("unsigned", { status: 403 });
      const o = objects.get(path);
      switch (req.method) {
        case "PUT":
          objects.set(path, { bytes: new Uint8Array(await req.arrayBuffer()), type: req.headers.get("content-type") });
          return new Response(null, { headers: { etag: '"e"' } });
        case "HEAD":
          return o
            ? new Response(null, { headers: { "content-length": String(o.bytes.length), etag: '"e"' } })
            : new Response(null, { status: 404 });
        case "GET": {
          if (!o) return new Response("<Error><Code>NoSuchKey</Code></Error>", { status: 404 });
          const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.get("range") ?? "");
          if (!m) return new Response(o.bytes);
          const start = Number(m[1]);
          const end = m[2] ? Number(m[2]) : o.bytes.length - 1;
          return new Response(o.bytes.slice(start, end + 1), {
            status: 206,
            headers: { "content-range": `bytes ${start}-${end}/${o.bytes.length}` },
          });
        }
        case "DELETE":
          objects.delete(path);
          return new Response(null, { status: 204 });
      }
      return new Response("unsupported", { status: 400 });
    },
  });
  return { server, objects, requests, endpoint: `http://127.0.0.1:${server.port}` };
}

const s3 = fakeS3();
const dir = mkdtempSync(join(tmpdir(), "gw-storage-"));
afterAll(() => {
  s3.server.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

const stores: [string, () => ObjectStorage][] = [
  ["local", () => new LocalStorage(dir)],
  [
    "s3",
    () =>
      new S3Storage({
        bucket: "media",
        endpoint: s3.endpoint,
        region: "us-east-1",
        accessKeyId: "AKIA",
        secretAccessKey: "secret",
      }),
  ],
];

for (const [name, make] of stores) {
  describe(`${name} storage`, () => {
    const data = new Uint8Array(70_000).map((_, i) => (i * 7) % 256);
    const body = () => new Response(data).body!;

    test("put returns the size; read returns exact ranges; delete removes; a missing object is null", async () => {
      const st = make();
      expect(await st.put("video/a.mp4", body(), "video/mp4")).toBe(data.length);
      expect(await st.exists("video/a.mp4")).toBe(true);
      for (const [start, end] of [
        [0, data.length - 1],
        [0, 0],
        [123, 4567],
        [data.length - 10, data.length - 1],
      ] as const) {
        const part = await st.read("video/a.mp4", start, end);
        expect(
          Buffer.from(await new Response(part!.stream()).bytes()).equals(Buffer.from(data.slice(start, end + 1))),
        ).toBe(true);
      }
      await st.delete("video/a.mp4");
      expect(await st.exists("video/a.mp4")).toBe(false);
      expect(await st.read("video/a.mp4", 0, 1)).toBeNull();
      await st.delete("video/a.mp4"); // deleting twice is fine
    });

    test("keys cannot leave the storage root", async () => {
      const st = make();
      for (const bad of ["../x", "video/../../x", "/abs", "a//b", ""]) {
        await expect(st.put(bad, body(), "video/mp4")).rejects.toThrow("invalid storage key");
      }
    });
  });
}

test("the S3 store puts objects under its bucket", () => {
  expect([...s3.objects.keys()]).toEqual([]);
  expect(s3.requests.some((r) => r.startsWith("PUT /media/video/a.mp4"))).toBe(true);
});

describe("a gateway with VIDEO_STORAGE=s3", () => {
  test("downloads the Family G result into the bucket and serves /content (whole and ranged) from it", async () => {
    const g = await startTestGateway({
      db: "pglite",
      env: {
        ...FAST_POLL,
        VIDEO_STORAGE: "s3",
        S3_BUCKET: "gw-media",
        S3_ENDPOINT: s3.endpoint,
        S3_REGION: "us-east-1",
        S3_ACCESS_KEY_ID: "AKIA",
        S3_SECRET_ACCESS_KEY: "secret",
      },
    });
    try {
      expect(g.gw.video.storage.kind).toBe("s3");
      const u = await g.newUser({ creditKrw: 10_000 });
      const k = (await g.newKey(u)).key;
      const r = await submit(g, k, { model: "veo-3", duration_seconds: 2, prompt: "to the bucket [sim:video_ms=20]" });
      expect((await waitJob(g, k, r.body.job_id)).status).toBe("succeeded");
      const key = (
        await g.gw.deps.db.query<{ storage_key: string }>("select storage_key from video_jobs where id = $1", [
          r.body.job_id,
        ])
      )[0]!.storage_key;
      const stored = s3.objects.get(`/gw-media/${key}`);
      expect(stored?.bytes.length).toBe(40 + 2 * 8192);
      const url = `${g.url}/v1/jobs/${r.body.job_id}/content`;
      const whole = await fetch(url, { headers: { authorization: `Bearer ${k}` } });
      expect(whole.status).toBe(200);
      expect(Buffer.from(await whole.bytes()).equals(Buffer.from(stored!.bytes))).toBe(true);
      const part = await fetch(url, { headers: { authorization: `Bearer ${k}`, range: "bytes=100-199" } });
      expect(part.status).toBe(206);
      expect(part.headers.get("content-range")).toBe(`bytes 100-199/${stored!.bytes.length}`);
      expect(Buffer.from(await part.bytes()).equals(Buffer.from(stored!.bytes.slice(100, 200)))).toBe(true);
    } finally {
      await g.stop();
    }
  });
});
