/**
 * Family G: Veo on the Gemini API, a long-running operation.
 * Create with `POST {base}/v1beta/models/{model}:predictLongRunning` (answer `{name}`), poll
 * `GET {base}/v1beta/{name}`: `done` is absent (or false) while running, then the operation
 * holds either `error` (google.rpc.Status), or `response.generateVideoResponse` with
 * `generatedSamples[].video.uri`, or only `raiMediaFilteredReasons` (blocked by the safety
 * filter). The file URI needs the API key and answers with a redirect to the bytes, so the
 * gateway downloads it (`download`) and serves it from `/v1/jobs/{id}/content`.
 *
 * Family G Omni reports its output tokens in `response.usageMetadata.candidatesTokenCount`
 * (our reading of the Gemini usage vocabulary; docs/video.md). Reference URLs are passed as
 * `{uri}`: the gateway never fetches user-supplied URLs itself.
 */
import type { UpstreamError } from "../../../core/upstream/error";
import type { VideoCall, VideoPollOutcome, VideoProvider, VideoSubmission } from "../../../core/video/provider";
import { badShape, dig, downloadFile, upstreamHttpError, joinUrl, requestJson, str } from "../http";
import { checkVeoPoll, checkVeoSubmit } from "../wire";

export function toVeoRequest(s: VideoSubmission): Record<string, unknown> {
  const r = s.request;
  const first = r.images.find((i) => i.role === "first_frame");
  const last = r.images.find((i) => i.role === "last_frame");
  const refs = r.images.filter((i) => i.role === "reference_image");
  const instance: Record<string, unknown> = { prompt: r.prompt };
  if (first) instance.image = { uri: first.url };
  if (last) instance.lastFrame = { uri: last.url };
  if (refs.length) instance.referenceImages = refs.map((i) => ({ image: { uri: i.url }, referenceType: "asset" }));
  if (r.videos.length) instance.referenceVideos = r.videos.map((uri) => ({ uri }));
  if (r.audios.length) instance.referenceAudios = r.audios.map((uri) => ({ uri }));
  return {
    instances: [instance],
    parameters: {
      aspectRatio: "16:9",
      resolution: r.outputResolution,
      ...(r.durationSeconds !== null && { durationSeconds: r.durationSeconds }),
      generateAudio: r.generateAudio,
      sampleCount: 1,
    },
  };
}

export function mapVeoPoll(body: unknown): VideoPollOutcome {
  if (!str(dig(body, "name"))) throw badShape("operation", body);
  if (dig(body, "done") !== true) return { state: "pending", upstreamStatus: "running" };
  const error = dig(body, "error");
  if (error !== undefined) {
    const code = Number(dig(error, "code"));
    const message = str(dig(error, "message")) ?? "operation failed";
    // google.rpc.Code 4 (DEADLINE_EXCEEDED) or HTTP 504: the operation ran out of time.
    const expired = code === 4 || code === 504;
    return {
      state: "failed",
      upstreamStatus: expired ? "expired" : "failed",
      reason: expired ? "expired" : "failed",
      message,
    };
  }
  const video = dig(body, "response", "generateVideoResponse");
  const uri = str(dig(video, "generatedSamples", 0, "video", "uri"));
  if (uri) {
    const tokens = dig(body, "response", "usageMetadata", "candidatesTokenCount");
    return {
      state: "succeeded",
      upstreamStatus: "done",
      videoUrl: uri,
      outputTokens: typeof tokens === "number" ? tokens : null,
    };
  }
  const reasons = dig(video, "raiMediaFilteredReasons");
  if (Array.isArray(reasons) || dig(video, "raiMediaFilteredCount") !== undefined) {
    return {
      state: "failed",
      upstreamStatus: "filtered",
      reason: "filtered",
      message: Array.isArray(reasons) ? reasons.map(String).join("; ") : "filtered",
    };
  }
  throw badShape("finished operation", body);
}

function veoError(status: number, headers: Headers, text: string): UpstreamError {
  return upstreamHttpError(status, headers, text, { message: (b) => str(dig(b, "error", "message")) });
}

const sameOrigin = (a: string, b: string) => {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
};

export const veoVideo: VideoProvider = {
  protocol: "video-veo",
  async submit(s: VideoSubmission, call: VideoCall): Promise<string> {
    const url = joinUrl(
      call.endpoint.baseUrl,
      `/v1beta/models/${encodeURIComponent(s.upstreamModel)}:predictLongRunning`,
    );
    return checkVeoSubmit(
      await requestJson("POST", url, { "x-goog-api-key": call.endpoint.apiKey }, toVeoRequest(s), call, veoError),
      "veo",
    ).name;
  },
  async poll(task: string, _model: string, call: VideoCall): Promise<VideoPollOutcome> {
    const path = task.split("/").map(encodeURIComponent).join("/");
    const res = await requestJson(
      "GET",
      joinUrl(call.endpoint.baseUrl, `/v1beta/${path}`),
      { "x-goog-api-key": call.endpoint.apiKey },
      undefined,
      call,
      veoError,
    );
    return mapVeoPoll(checkVeoPoll(res, "veo"));
  },
  async download(videoUrl: string, call: VideoCall) {
    // Our credential goes only to the vendor's own host, never to a URL elsewhere.
    const headers: Record<string, string> = sameOrigin(videoUrl, call.endpoint.baseUrl)
      ? { "x-goog-api-key": call.endpoint.apiKey }
      : {};
    return downloadFile(videoUrl, headers, call, veoError);
  },
};
