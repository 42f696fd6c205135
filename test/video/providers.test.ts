/**
 * The video adapters against the vendors' recorded bodies (test/fixtures/video): what they
 * send is shaped like the vendor's request samples, what they read from the poll samples maps
 * to the right outcome, and errors are classified the vendor's way.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createHmac } from "node:crypto";
import type { NormalizedVideoRequest } from "../../src/core/video/types";
import type { VideoSubmission } from "../../src/core/video/provider";
import { klingError, klingToken, mapKlingPoll, toKlingRequest } from "../../src/providers/video/kling";
import { ltxError, mapLtxPoll, toLtxRequest } from "../../src/providers/video/ltx";
import { mapSeedancePoll, seedanceError, toSeedanceRequest } from "../../src/providers/video/seedance";
import { mapVeoPoll, toVeoRequest, veoVideo } from "../../src/providers/video/veo";

const FIX = join(import.meta.dir, "..", "fixtures", "video");
const fixture = (vendor: string, name: string) => JSON.parse(readFileSync(join(FIX, vendor, name), "utf8"));

function request(over: Partial<NormalizedVideoRequest> = {}): NormalizedVideoRequest {
  return {
    prompt: "A red kite flying over a green hill",
    durationSeconds: 5,
    requestedResolution: "1080p",
    outputResolution: "1080p",
    sendResolution: true,
    generateAudio: true,
    images: [],
    videos: [],
    audios: [],
    ...over,
  };
}

const submission = (
  family: VideoSubmission["family"],
  upstreamModel: string,
  over: Partial<NormalizedVideoRequest> = {},
): VideoSubmission => ({
  jobId: "00000000-0000-4000-8000-000000000001",
  upstreamModel,
  family,
  request: request(over),
});

/** Keys of `sent` that the vendor sample does not have (fields we would be inventing). */
const invented = (sent: object, sample: object, allowed: string[] = []) =>
  Object.keys(sent).filter((k) => !(k in sample) && !allowed.includes(k));

describe("Kling", () => {
  test("text2video and image2video bodies use Kling's fields (duration as a string)", () => {
    const t2v = toKlingRequest(submission("K-v2", "kling-v2-6"));
    expect(t2v.kind).toBe("text2video");
    expect(invented(t2v.body, fixture("kling", "text2video.request.json"))).toEqual([]);
    expect(t2v.body).toMatchObject({ model_name: "kling-v2-6", duration: "5", sound: "on", mode: "pro" });

    const i2v = toKlingRequest(
      submission("K-v3", "kling-v3", {
        images: [
          { url: "https://example.com/first.png", role: "first_frame" },
          { url: "https://example.com/last.png", role: "last_frame" },
        ],
      }),
    );
    expect(i2v.kind).toBe("image2video");
    // `sound` is a V2.6+ field the image2video sample predates.
    expect(invented(i2v.body, fixture("kling", "image2video.request.json"), ["sound"])).toEqual([]);
    expect(i2v.body).toMatchObject({
      image: "https://example.com/first.png",
      image_tail: "https://example.com/last.png",
    });
    expect("resolution" in i2v.body).toBe(false);
  });

  test("poll samples: submitted and processing are pending; succeed has the URL; failed has the reason", () => {
    expect(mapKlingPoll(fixture("kling", "poll.submitted.json"))).toEqual({
      state: "pending",
      upstreamStatus: "submitted",
    });
    expect(mapKlingPoll(fixture("kling", "poll.processing.json"))).toEqual({
      state: "pending",
      upstreamStatus: "processing",
    });
    expect(mapKlingPoll(fixture("kling", "poll.succeed.json"))).toEqual({
      state: "succeeded",
      upstreamStatus: "succeed",
      videoUrl: "https://v16-kling-fdl.klingai.com/FAKE/output.mp4",
      outputTokens: null,
    });
    expect(mapKlingPoll(fixture("kling", "poll.failed.json"))).toEqual({
      state: "failed",
      upstreamStatus: "failed",
      reason: "failed",
      message: "Content policy violation",
    });
  });

  test("a 429 about the account (codes 1100–1102) is a rejection, not a rate limit", () => {
    const h = new Headers();
    const account = klingError(429, h, JSON.stringify(fixture("kling", "error-429.json")));
    expect(account.kind).toBe("rejected");
    expect(account.message).toBe("Resource pack depleted or expired");
    expect(klingError(429, h, JSON.stringify({ code: 1302, message: "rate" })).kind).toBe("rate_limited");
    expect(klingError(401, h, JSON.stringify(fixture("kling", "error-401.json"))).kind).toBe("rejected");
    expect(klingError(503, h, "").kind).toBe("transient");
  });

  test("an ACCESS_KEY:SECRET_KEY pair becomes Kling's HS256 JWT; a plain key is sent as is", () => {
    const token = klingToken("ak-123:sk-secret", Date.UTC(2026, 0, 1));
    const [h, b, sig] = token.split(".");
    expect(JSON.parse(Buffer.from(h!, "base64url").toString())).toEqual({ alg: "HS256", typ: "JWT" });
    const claims = JSON.parse(Buffer.from(b!, "base64url").toString());
    expect(claims.iss).toBe("ak-123");
    expect(claims.exp - claims.nbf).toBe(1805);
    expect(sig).toBe(createHmac("sha256", "sk-secret").update(`${h}.${b}`).digest("base64url"));
    expect(klingToken("plain-api-key")).toBe("plain-api-key");
  });
});

describe("Seedance", () => {
  test("references travel in content[] with their roles, like the first/last-frame sample", () => {
    const body = toSeedanceRequest(
      submission("S-1.0-pro", "seedance-1-0-pro-250528", {
        generateAudio: false,
        images: [
          { url: "https://example.com/first.png", role: "first_frame" },
          { url: "https://example.com/last.png", role: "last_frame" },
        ],
      }),
    );
    const sample = fixture("seedance", "create.request.i2v-first-last-frame.json");
    expect((body.content as unknown[]).map((c: any) => [c.type, c.role])).toEqual(
      sample.content.map((c: any) => [c.type, c.role]),
    );
    expect(invented(body, { ...sample, ...fixture("seedance", "create.request.t2v.body-params.json") })).toEqual([]);
    expect("generate_audio" in body).toBe(false);

    const refs = toSeedanceRequest(
      submission("S-2.0", "seedance-2-0-260128", {
        videos: ["https://example.com/v.mp4"],
        audios: ["https://example.com/a.mp3"],
      }),
    );
    expect((refs.content as any[]).map((c) => c.role ?? c.type)).toEqual([
      "text",
      "reference_video",
      "reference_audio",
    ]);
    expect(refs.generate_audio).toBe(true);
  });

  test("poll samples: queued/running pending; succeeded with URL and tokens; failed with the message", () => {
    expect(mapSeedancePoll(fixture("seedance", "poll.queued.json")).state).toBe("pending");
    expect(mapSeedancePoll(fixture("seedance", "poll.running.json")).state).toBe("pending");
    const ok = mapSeedancePoll(fixture("seedance", "poll.succeeded.json"));
    expect(ok).toMatchObject({ state: "succeeded", outputTokens: 246840 });
    expect(ok.state === "succeeded" && ok.videoUrl.startsWith("https://ark-content-generation")).toBe(true);
    const failed = mapSeedancePoll(fixture("seedance", "poll.failed.json"));
    expect(failed).toMatchObject({ state: "failed", reason: "failed" });
    expect(failed.state === "failed" && failed.message.startsWith("The request failed because the input text")).toBe(
      true,
    );
    expect(mapSeedancePoll({ id: "x", status: "expired" })).toMatchObject({ state: "failed", reason: "expired" });
  });

  test("the error envelope's message is kept", () => {
    const text = readFileSync(join(FIX, "seedance", "error-400.http"), "utf8").split(/\r?\n\r?\n/)[1]!;
    const err = seedanceError(400, new Headers(), text);
    expect(err.kind).toBe("rejected");
    expect(err.message.startsWith("One or more parameters")).toBe(true);
  });
});

describe("LTX", () => {
  test("resolutions travel as pixel sizes, with the sample's fields", () => {
    const body = toLtxRequest(
      submission("L-pro", "ltx-2-pro", { durationSeconds: 8, outputResolution: "4k", requestedResolution: "4k" }),
    );
    expect(invented(body, fixture("ltx", "text-to-video.request.json"))).toEqual([]);
    expect(body).toMatchObject({ model: "ltx-2-pro", duration: 8, resolution: "3840x2160", generate_audio: true });
    expect(
      toLtxRequest(submission("L-fast", "ltx-2-fast", { outputResolution: "1080p", requestedResolution: "480p" }))
        .resolution,
    ).toBe("1920x1080");
  });

  test("task states and the Anthropic-like error envelope", () => {
    expect(mapLtxPoll({ id: "t", status: "queued" }).state).toBe("pending");
    expect(mapLtxPoll({ id: "t", status: "completed", video_url: "https://x/v.mp4" })).toMatchObject({
      state: "succeeded",
      videoUrl: "https://x/v.mp4",
    });
    expect(mapLtxPoll({ id: "t", status: "expired" })).toMatchObject({ state: "failed", reason: "expired" });
    const err = ltxError(402, new Headers(), JSON.stringify(fixture("ltx", "error-402.json")));
    expect(err.kind).toBe("rejected");
    expect(err.message).toBe("Insufficient funds. Required: 120 credits");
  });
});

describe("Veo", () => {
  test("predictLongRunning body: the sample's instance and parameters; Omni sends no duration", () => {
    const body = toVeoRequest(
      submission("G", "veo-3.0-generate-001", { durationSeconds: 8, outputResolution: "720p" }),
    );
    const sample = fixture("veo", "predictLongRunning.request.json");
    expect(Object.keys((body.instances as any[])[0])).toEqual(Object.keys(sample.instances[0]));
    expect(body.parameters).toMatchObject({ aspectRatio: "16:9", resolution: "720p", durationSeconds: 8 });
    const omni = toVeoRequest(submission("G-omni", "veo-3.0-omni-preview", { durationSeconds: null }));
    expect("durationSeconds" in (omni.parameters as object)).toBe(false);
    const frames = toVeoRequest(
      submission("G", "veo-3.0-generate-001", {
        images: [
          { url: "https://e.com/1.png", role: "first_frame" },
          { url: "https://e.com/2.png", role: "last_frame" },
        ],
      }),
    );
    expect((frames.instances as any[])[0]).toMatchObject({
      image: { uri: "https://e.com/1.png" },
      lastFrame: { uri: "https://e.com/2.png" },
    });
  });

  test("operation samples: running, succeeded, filtered, failed", () => {
    expect(mapVeoPoll(fixture("veo", "poll.running.json"))).toEqual({ state: "pending", upstreamStatus: "running" });
    expect(mapVeoPoll({ ...fixture("veo", "poll.running.json"), done: false }).state).toBe("pending");
    expect(mapVeoPoll(fixture("veo", "poll.succeeded.json"))).toEqual({
      state: "succeeded",
      upstreamStatus: "done",
      videoUrl: "https://generativelanguage.googleapis.com/v1beta/files/8ab5e3xk2f1q:download?alt=media",
      outputTokens: null,
    });
    expect(mapVeoPoll(fixture("veo", "poll.rai-filtered.json"))).toMatchObject({ state: "failed", reason: "filtered" });
    expect(mapVeoPoll(fixture("veo", "poll.failed.json"))).toMatchObject({
      state: "failed",
      reason: "failed",
      message: "<reason the generation failed>",
    });
    const omni = fixture("veo", "poll.succeeded.json");
    omni.response.usageMetadata = { candidatesTokenCount: 4321 };
    expect(mapVeoPoll(omni)).toMatchObject({ state: "succeeded", outputTokens: 4321 });
  });

  describe("download", () => {
    let api: ReturnType<typeof Bun.serve>;
    let storage: ReturnType<typeof Bun.serve>;
    const seen: Record<string, string | null> = {};
    beforeAll(() => {
      storage = Bun.serve({
        port: 0,
        fetch(req) {
          seen.storage = req.headers.get("x-goog-api-key");
          return new Response(new Uint8Array([0, 1, 2, 3]), { headers: { "content-type": "video/mp4" } });
        },
      });
      api = Bun.serve({
        port: 0,
        fetch(req) {
          seen.api = req.headers.get("x-goog-api-key");
          return new Response(null, {
            status: 302,
            headers: { location: `http://127.0.0.1:${storage.port}/signed.mp4?sig=1` },
          });
        },
      });
    });
    afterAll(() => {
      api.stop(true);
      storage.stop(true);
    });

    test("the key goes to the vendor's file URI only, not to the signed URL it redirects to", async () => {
      const base = `http://127.0.0.1:${api.port}`;
      const file = await veoVideo.download!(`${base}/v1beta/files/abc:download?alt=media`, {
        endpoint: { baseUrl: base, apiKey: "AIza-secret" },
        timeoutMs: 2000,
      });
      expect(file.contentType).toBe("video/mp4");
      expect(Array.from(await new Response(file.body).bytes())).toEqual([0, 1, 2, 3]);
      expect(seen).toEqual({ api: "AIza-secret", storage: null });
    });

    test("a URI on another host never gets the key", async () => {
      seen.storage = "unset";
      await veoVideo.download!(`http://127.0.0.1:${storage.port}/elsewhere.mp4`, {
        endpoint: { baseUrl: `http://127.0.0.1:${api.port}`, apiKey: "AIza-secret" },
        timeoutMs: 2000,
      }).then((f) => f.body.cancel());
      expect(seen.storage).toBeNull();
    });
  });
});
