/**
 * The per-family constraints table, row by row: every rule accepted and rejected, once as a
 * pure function (with the normalizations) and once over HTTP, where an accepted request holds
 * exactly its price and a rejected one (400, or 422 outside the general ranges) moves no
 * money at all.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { applyFamilyRules, type VideoRequestInput } from "../../src/core/video/constraints";
import { GatewayError } from "../../src/core/errors";
import { getOfferings, getModel } from "../../src/core/catalog/types";
import { snapshotOf } from "../catalog/helpers";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { money, NO_POLL, submit } from "./helpers";

// A loaded machine (several suites at once) makes sign-ups and lifecycles slow.
setDefaultTimeout(30_000);

const snapshot = snapshotOf();
const IMG = (n: number) => Array.from({ length: n }, (_, i) => `https://example.com/img${i}.png`);
const VID = (n: number) => Array.from({ length: n }, (_, i) => `https://example.com/clip${i}.mp4`);
const AUD = (n: number) => Array.from({ length: n }, (_, i) => `https://example.com/sound${i}.mp3`);

interface Row {
  name: string;
  body: Record<string, unknown>;
  /** 202 with the hold in KRW, or the error status. */
  expect: { hold: number } | 400 | 422;
}

const rows: Row[] = [
  // Family K, V3: integer 3–15 s, explicit duration, no resolution.
  { name: "K v3 3 s", body: { model: "kling-v3", duration_seconds: 3 }, expect: { hold: 450 } },
  { name: "K v3 15 s", body: { model: "kling-v3", duration_seconds: 15 }, expect: { hold: 2250 } },
  { name: "K v3 turbo 10 s", body: { model: "kling-v3-turbo", duration_seconds: 10 }, expect: { hold: 1000 } },
  { name: "K v3 omni 7 s", body: { model: "kling/kling-v3-omni", duration_seconds: 7 }, expect: { hold: 1260 } },
  {
    name: "K v3 first+last frame",
    body: { model: "kling-v3", duration_seconds: 5, image: IMG(1)[0], images: ["https://example.com/last.png"] },
    expect: { hold: 750 },
  },
  { name: "K v3 2 s", body: { model: "kling-v3", duration_seconds: 2 }, expect: 400 },
  { name: "K v3 16 s", body: { model: "kling-v3", duration_seconds: 16 }, expect: 400 },
  { name: "K v3 without duration", body: { model: "kling-v3" }, expect: 400 },
  { name: "K v3 with resolution", body: { model: "kling-v3", duration_seconds: 5, resolution: "1080p" }, expect: 400 },
  { name: "K v3 with videos", body: { model: "kling-v3", duration_seconds: 5, videos: VID(1) }, expect: 400 },
  { name: "K v3 with 3 images", body: { model: "kling-v3", duration_seconds: 5, images: IMG(3) }, expect: 400 },
  // Family K, V2.5 / V2.6: 5 or 10 s.
  { name: "K v2.5 turbo 5 s", body: { model: "kling-v2-5-turbo", duration_seconds: 5 }, expect: { hold: 500 } },
  { name: "K v2.6 10 s", body: { model: "kling-v2-6", duration_seconds: 10 }, expect: { hold: 1200 } },
  { name: "K v2.6 8 s", body: { model: "kling-v2-6", duration_seconds: 8 }, expect: 400 },
  { name: "K v2.5 turbo 7 s", body: { model: "kling-v2-5-turbo", duration_seconds: 7 }, expect: 400 },
  {
    name: "K v2.6 with resolution",
    body: { model: "kling-v2-6", duration_seconds: 5, resolution: "720p" },
    expect: 400,
  },
  { name: "K v2.6 without duration", body: { model: "kling-v2-6" }, expect: 400 },
  // Family L, Fast: text only; 1080p 6–20 even; 1440p/4k 6, 8, 10; 480p/720p → 1080p.
  { name: "L fast default (720p → 1080p, 8 s)", body: { model: "ltx-2-fast" }, expect: { hold: 448 } },
  {
    name: "L fast 480p 20 s (→ 1080p)",
    body: { model: "ltx-2-fast", resolution: "480p", duration_seconds: 20 },
    expect: { hold: 1120 },
  },
  {
    name: "L fast 1080p 6 s",
    body: { model: "ltx-2-fast", resolution: "1080p", duration_seconds: 6 },
    expect: { hold: 336 },
  },
  {
    name: "L fast 1440p 10 s",
    body: { model: "ltx-2-fast", resolution: "1440p", duration_seconds: 10 },
    expect: { hold: 1120 },
  },
  {
    name: "L fast 4k 6 s",
    body: { model: "ltx-2-fast", resolution: "4k", duration_seconds: 6 },
    expect: { hold: 1344 },
  },
  { name: "L fast 1080p 7 s", body: { model: "ltx-2-fast", resolution: "1080p", duration_seconds: 7 }, expect: 400 },
  { name: "L fast 1080p 4 s", body: { model: "ltx-2-fast", resolution: "1080p", duration_seconds: 4 }, expect: 400 },
  { name: "L fast 1440p 12 s", body: { model: "ltx-2-fast", resolution: "1440p", duration_seconds: 12 }, expect: 400 },
  { name: "L fast 4k 20 s", body: { model: "ltx-2-fast", resolution: "4k", duration_seconds: 20 }, expect: 400 },
  { name: "L fast with an image", body: { model: "ltx-2-fast", image: IMG(1)[0] }, expect: 400 },
  { name: "L fast with audio", body: { model: "ltx-2-fast", audios: AUD(1) }, expect: 400 },
  // Family L, Pro: text only; 6, 8, 10 s at every resolution.
  {
    name: "L pro 720p 10 s (→ 1080p)",
    body: { model: "ltx-2-pro", resolution: "720p", duration_seconds: 10 },
    expect: { hold: 840 },
  },
  { name: "L pro 4k 6 s", body: { model: "ltx-2-pro", resolution: "4k", duration_seconds: 6 }, expect: { hold: 2016 } },
  { name: "L pro 1080p 12 s", body: { model: "ltx-2-pro", resolution: "1080p", duration_seconds: 12 }, expect: 400 },
  { name: "L pro 480p 20 s", body: { model: "ltx-2-pro", resolution: "480p", duration_seconds: 20 }, expect: 400 },
  { name: "L pro with images", body: { model: "ltx-2-pro", images: IMG(1) }, expect: 400 },
  // Family S 2.0: 4–15 s; ≤9 images, ≤3 videos, ≤3 audios; audio needs an image or video.
  { name: "S 2.0 4 s", body: { model: "seedance-2-0", duration_seconds: 4 }, expect: { hold: 560 } },
  {
    name: "S 2.0 15 s 4k",
    body: { model: "seedance-2-0", duration_seconds: 15, resolution: "4k" },
    expect: { hold: 10500 },
  },
  {
    name: "S 2.0 nine images (image + 8)",
    body: { model: "seedance-2-0", image: IMG(1)[0], images: IMG(8) },
    expect: { hold: 1120 },
  },
  {
    name: "S 2.0 image + 3 videos + 3 audios",
    body: { model: "seedance-2-0", images: IMG(1), videos: VID(3), audios: AUD(3) },
    expect: { hold: 1120 },
  },
  {
    name: "S 2.0 audio with a video",
    body: { model: "seedance-2-0", videos: VID(1), audios: AUD(1) },
    expect: { hold: 1120 },
  },
  { name: "S 2.0 3 s", body: { model: "seedance-2-0", duration_seconds: 3 }, expect: 400 },
  { name: "S 2.0 16 s", body: { model: "seedance-2-0", duration_seconds: 16 }, expect: 400 },
  { name: "S 2.0 audio alone", body: { model: "seedance-2-0", audios: AUD(1) }, expect: 400 },
  {
    name: "S 2.0 ten images (image + 9)",
    body: { model: "seedance-2-0", image: IMG(1)[0], images: IMG(9) },
    expect: 422,
  },
  { name: "S 2.0 four videos", body: { model: "seedance-2-0", images: IMG(1), videos: VID(4) }, expect: 422 },
  { name: "S 2.0 four audios", body: { model: "seedance-2-0", images: IMG(1), audios: AUD(4) }, expect: 422 },
  // Family S 2.0 Fast and Mini: 480p or 720p; Mini has no video or audio references.
  {
    name: "S 2.0 fast 480p 5 s",
    body: { model: "seedance-2-0-fast", resolution: "480p", duration_seconds: 5 },
    expect: { hold: 200 },
  },
  { name: "S 2.0 fast 720p with videos", body: { model: "seedance-2-0-fast", videos: VID(2) }, expect: { hold: 640 } },
  { name: "S 2.0 fast 1080p", body: { model: "seedance-2-0-fast", resolution: "1080p" }, expect: 400 },
  { name: "S 2.0 fast 16 s", body: { model: "seedance-2-0-fast", duration_seconds: 16 }, expect: 400 },
  { name: "S 2.0 mini 720p with images", body: { model: "seedance-2-0-mini", images: IMG(9) }, expect: { hold: 400 } },
  { name: "S 2.0 mini 4k", body: { model: "seedance-2-0-mini", resolution: "4k" }, expect: 400 },
  { name: "S 2.0 mini with a video", body: { model: "seedance-2-0-mini", videos: VID(1) }, expect: 400 },
  {
    name: "S 2.0 mini with audio and image",
    body: { model: "seedance-2-0-mini", images: IMG(1), audios: AUD(1) },
    expect: 400,
  },
  // Family S 1.5 Pro: 4–12 s, no 4k, ≤2 images, no video or audio.
  {
    name: "S 1.5 pro 12 s 1440p",
    body: { model: "seedance-1-5-pro", duration_seconds: 12, resolution: "1440p" },
    expect: { hold: 3840 },
  },
  {
    name: "S 1.5 pro 4 s two images",
    body: { model: "seedance-1-5-pro", duration_seconds: 4, images: IMG(2) },
    expect: { hold: 360 },
  },
  { name: "S 1.5 pro 13 s", body: { model: "seedance-1-5-pro", duration_seconds: 13 }, expect: 400 },
  { name: "S 1.5 pro 3 s", body: { model: "seedance-1-5-pro", duration_seconds: 3 }, expect: 400 },
  { name: "S 1.5 pro 4k", body: { model: "seedance-1-5-pro", resolution: "4k" }, expect: 400 },
  { name: "S 1.5 pro three images", body: { model: "seedance-1-5-pro", images: IMG(3) }, expect: 400 },
  { name: "S 1.5 pro with a video", body: { model: "seedance-1-5-pro", videos: VID(1) }, expect: 400 },
  { name: "S 1.5 pro with audio", body: { model: "seedance-1-5-pro", images: IMG(1), audios: AUD(1) }, expect: 400 },
  // Family S 1.0 Pro (+Fast): 2–12 s, no 4k, ≤2 images (Fast 1), no video/audio, no generate_audio.
  {
    name: "S 1.0 pro 2 s 480p",
    body: { model: "seedance-1-0-pro", duration_seconds: 2, resolution: "480p" },
    expect: { hold: 70 },
  },
  {
    name: "S 1.0 pro 12 s 1080p two images",
    body: { model: "seedance-1-0-pro", duration_seconds: 12, resolution: "1080p", images: IMG(2) },
    expect: { hold: 2040 },
  },
  {
    name: "S 1.0 pro generate_audio false",
    body: { model: "seedance-1-0-pro", generate_audio: false },
    expect: { hold: 600 },
  },
  { name: "S 1.0 pro 13 s", body: { model: "seedance-1-0-pro", duration_seconds: 13 }, expect: 400 },
  { name: "S 1.0 pro 4k", body: { model: "seedance-1-0-pro", resolution: "4k" }, expect: 400 },
  { name: "S 1.0 pro three images", body: { model: "seedance-1-0-pro", images: IMG(3) }, expect: 400 },
  { name: "S 1.0 pro with a video", body: { model: "seedance-1-0-pro", videos: VID(1) }, expect: 400 },
  { name: "S 1.0 pro generate_audio", body: { model: "seedance-1-0-pro", generate_audio: true }, expect: 400 },
  {
    name: "S 1.0 pro fast one image",
    body: { model: "seedance-1-0-pro-fast", image: IMG(1)[0] },
    expect: { hold: 240 },
  },
  { name: "S 1.0 pro fast two images", body: { model: "seedance-1-0-pro-fast", images: IMG(2) }, expect: 400 },
  {
    name: "S 1.0 pro fast generate_audio",
    body: { model: "seedance-1-0-pro-fast", generate_audio: true },
    expect: 400,
  },
  // Family G (veo-3, the default): the general rules.
  { name: "G default model and values", body: {}, expect: { hold: 4480 } },
  { name: "G 2 s", body: { model: "veo-3", duration_seconds: 2 }, expect: { hold: 1120 } },
  { name: "G 4k 20 s", body: { model: "veo/veo-3", duration_seconds: 20, resolution: "4k" }, expect: { hold: 22400 } },
  {
    name: "G every reference",
    body: { model: "veo-3", images: IMG(9), videos: VID(3), audios: AUD(3), generate_audio: true },
    expect: { hold: 4480 },
  },
  { name: "G 21 s", body: { model: "veo-3", duration_seconds: 21 }, expect: 422 },
  // Family G Omni: text only; 720p, 1080p or 4k; no duration_seconds; billed by tokens (hold: the longest output).
  { name: "G omni default 720p", body: { model: "veo-3-omni" }, expect: { hold: 2880 } },
  { name: "G omni 1080p", body: { model: "veo-3-omni", resolution: "1080p" }, expect: { hold: 5760 } },
  { name: "G omni 4k", body: { model: "veo-3-omni", resolution: "4k" }, expect: { hold: 11520 } },
  { name: "G omni with duration", body: { model: "veo-3-omni", duration_seconds: 8 }, expect: 400 },
  { name: "G omni 480p", body: { model: "veo-3-omni", resolution: "480p" }, expect: 400 },
  { name: "G omni 1440p", body: { model: "veo-3-omni", resolution: "1440p" }, expect: 400 },
  { name: "G omni with an image", body: { model: "veo-3-omni", image: IMG(1)[0] }, expect: 400 },
  { name: "G omni with a video", body: { model: "veo-3-omni", videos: VID(1) }, expect: 400 },
  { name: "G omni with audio", body: { model: "veo-3-omni", audios: AUD(1) }, expect: 400 },
];

function normalize(model: string, input: Partial<VideoRequestInput>) {
  const m = getModel(snapshot, model)!;
  const o = getOfferings(snapshot, model)[0]!;
  return applyFamilyRules(model, m.family!, o.videoPricing!, {
    prompt: "p",
    images: [],
    videos: [],
    audios: [],
    ...input,
  });
}

describe("family rules (pure)", () => {
  test("Family L renders 480p and 720p as 1080p, and keeps what was asked", () => {
    const r = normalize("ltx-2-fast", { resolution: "480p", durationSeconds: 20 });
    expect(r.requestedResolution).toBe("480p");
    expect(r.outputResolution).toBe("1080p");
    expect(normalize("ltx-2-pro", {}).outputResolution).toBe("1080p");
    expect(normalize("ltx-2-fast", { resolution: "4k", durationSeconds: 10 }).outputResolution).toBe("4k");
  });

  test("Family S image roles: one or two images are first/last frame, otherwise references", () => {
    expect(normalize("seedance-2-0", { images: IMG(1) }).images.map((i) => i.role)).toEqual(["first_frame"]);
    expect(normalize("seedance-2-0", { images: IMG(2) }).images.map((i) => i.role)).toEqual([
      "first_frame",
      "last_frame",
    ]);
    expect(normalize("seedance-2-0", { images: IMG(3) }).images.map((i) => i.role)).toEqual([
      "reference_image",
      "reference_image",
      "reference_image",
    ]);
    expect(normalize("seedance-2-0", { images: IMG(1), videos: VID(1) }).images.map((i) => i.role)).toEqual([
      "reference_image",
    ]);
    expect(normalize("seedance-2-0", { images: IMG(2), audios: AUD(1) }).images.map((i) => i.role)).toEqual([
      "reference_image",
      "reference_image",
    ]);
    expect(normalize("seedance-1-5-pro", { images: IMG(2) }).images.map((i) => i.role)).toEqual([
      "first_frame",
      "last_frame",
    ]);
  });

  test("Family K sends no resolution and is priced at its own; Omni has no duration", () => {
    const k = normalize("kling-v3", { durationSeconds: 5 });
    expect(k.sendResolution).toBe(false);
    expect(k.outputResolution).toBe("1080p");
    const o = normalize("veo-3-omni", { resolution: "4k" });
    expect(o.durationSeconds).toBeNull();
    expect(o.outputResolution).toBe("4k");
  });

  test("defaults: 8 seconds at 720p", () => {
    const r = normalize("veo-3", {});
    expect(r.durationSeconds).toBe(8);
    expect(r.requestedResolution).toBe("720p");
    expect(r.generateAudio).toBe(false);
  });

  test("every 400 row of the table is an unsupported_parameter error", () => {
    let n = 0;
    for (const row of rows.filter((r) => r.expect === 400)) {
      const b = row.body as any;
      const model = String(b.model ?? "veo-3").replace(/^[a-z]+\//, "");
      const images = [...(b.image ? [b.image] : []), ...(b.images ?? [])];
      let err: unknown;
      try {
        normalize(model, {
          durationSeconds: b.duration_seconds,
          resolution: b.resolution,
          generateAudio: b.generate_audio,
          images,
          videos: b.videos ?? [],
          audios: b.audios ?? [],
        });
      } catch (e) {
        err = e;
      }
      expect(err, row.name).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).errorCode).toBe("unsupported_parameter");
      n++;
    }
    expect(n).toBeGreaterThan(40);
  });
});

describe("family rules over HTTP (PGlite)", () => {
  let g: TestGateway;
  let user: TestUser;
  let key: string;
  beforeAll(async () => {
    g = await startTestGateway({ db: "pglite", env: NO_POLL });
    user = await g.newUser({ creditKrw: 1_000_000 });
    key = (await g.newKey(user)).key;
  }, 60_000);
  afterAll(() => g.stop());

  for (const row of rows) {
    const verdict = typeof row.expect === "number" ? row.expect : 202;
    test(`${row.name} → ${verdict}`, async () => {
      const before = await money(g, user);
      const r = await submit(g, key, { prompt: `constraints: ${row.name}`, ...row.body });
      const after = await money(g, user);
      expect(r.status).toBe(verdict);
      expect(after.balance).toBe(before.balance);
      if (typeof row.expect === "number") {
        expect(after.held).toBe(before.held);
        if (row.expect === 400) expect(r.body.detail.error).toBe("unsupported_parameter");
        else expect(r.body.detail[0].loc[0]).toBe("body");
      } else {
        expect(after.held - before.held).toBe(row.expect.hold);
        expect(r.body.status).toBe("processing");
        expect(r.body.assets).toEqual([]);
      }
    });
  }
});
