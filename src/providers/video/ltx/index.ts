/**
 * Family L: Lightricks LTX-2. LTX's documented v1 API is synchronous (the POST answers with
 * the MP4 itself), which does not fit a job that outlives the request, so this adapter speaks
 * the asynchronous v2 task form: `POST {base}/v2/text-to-video` answers `{id}`, and
 * `GET {base}/v2/text-to-video/{id}` answers `{id, status, video_url?, error?}` with status
 * `queued`, `processing`, `completed`, `failed` or `expired`. That v2 poll body is our
 * assumption (no authoritative sample exists; docs/video.md). Resolutions travel as pixel
 * sizes; errors use LTX's `{"type":"error","error":{type, message}}` envelope.
 */
import type { UpstreamError } from "../../../core/upstream/error";
import type { Resolution } from "../../../core/catalog/types";
import type { VideoCall, VideoPollOutcome, VideoProvider, VideoSubmission } from "../../../core/video/provider";
import { badShape, dig, upstreamHttpError, joinUrl, requestJson, str } from "../http";
import { checkLtxPoll, checkTaskId } from "../wire";

const PIXELS: Partial<Record<Resolution, string>> = { "1080p": "1920x1080", "1440p": "2560x1440", "4k": "3840x2160" };

export function toLtxRequest(s: VideoSubmission): Record<string, unknown> {
  const r = s.request;
  return {
    prompt: r.prompt,
    model: s.upstreamModel,
    duration: r.durationSeconds,
    resolution: PIXELS[r.outputResolution] ?? "1920x1080",
    fps: 25,
    generate_audio: r.generateAudio,
  };
}

export function mapLtxPoll(body: unknown): VideoPollOutcome {
  const status = str(dig(body, "status"));
  if (!status) throw badShape("task", body);
  if (status === "completed" || status === "succeeded") {
    const url = str(dig(body, "video_url"));
    if (!url) throw badShape("completed task", body);
    return { state: "succeeded", upstreamStatus: status, videoUrl: url, outputTokens: null };
  }
  if (status === "failed" || status === "expired") {
    return {
      state: "failed",
      upstreamStatus: status,
      reason: status === "expired" ? "expired" : "failed",
      message: str(dig(body, "error", "message")) ?? status,
    };
  }
  return { state: "pending", upstreamStatus: status };
}

export function ltxError(status: number, headers: Headers, text: string): UpstreamError {
  return upstreamHttpError(status, headers, text, { message: (b) => str(dig(b, "error", "message")) });
}

export const ltxVideo: VideoProvider = {
  protocol: "video-ltx",
  async submit(s: VideoSubmission, call: VideoCall): Promise<string> {
    const auth = { authorization: `Bearer ${call.endpoint.apiKey}` };
    return checkTaskId(
      await requestJson(
        "POST",
        joinUrl(call.endpoint.baseUrl, "/v2/text-to-video"),
        auth,
        toLtxRequest(s),
        call,
        ltxError,
      ),
      "ltx",
    ).id;
  },
  async poll(task: string, _model: string, call: VideoCall): Promise<VideoPollOutcome> {
    const auth = { authorization: `Bearer ${call.endpoint.apiKey}` };
    const res = await requestJson(
      "GET",
      joinUrl(call.endpoint.baseUrl, `/v2/text-to-video/${encodeURIComponent(task)}`),
      auth,
      undefined,
      call,
      ltxError,
    );
    return mapLtxPoll(checkLtxPoll(res, "ltx"));
  },
};
