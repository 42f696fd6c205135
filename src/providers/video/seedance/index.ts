/**
 * Family S: Seedance on BytePlus ModelArk / Volcengine Ark "content generation tasks".
 * Create with `POST {base}/contents/generations/tasks` (answer `{id}` only), poll
 * `GET {base}/contents/generations/tasks/{id}`. The prompt and every reference travel in
 * `content[]`; images carry a `role` (`first_frame`, `last_frame` or `reference_image`, as the
 * family rules decided). Task states: `queued`, `running`, `succeeded`, `failed`,
 * `cancelled`, `expired`; the result is `content.video_url`, usage `completion_tokens`.
 * Errors are `{"error": {code, message, param, type}}`.
 */
import type { UpstreamError } from "../../../core/upstream/error";
import type { VideoCall, VideoPollOutcome, VideoProvider, VideoSubmission } from "../../../core/video/provider";
import { badShape, dig, upstreamHttpError, joinUrl, requestJson, str } from "../http";
import { checkSeedancePoll, checkTaskId } from "../wire";

export function toSeedanceRequest(s: VideoSubmission): Record<string, unknown> {
  const r = s.request;
  const content: Record<string, unknown>[] = [{ type: "text", text: r.prompt }];
  for (const i of r.images) content.push({ type: "image_url", image_url: { url: i.url }, role: i.role });
  for (const url of r.videos) content.push({ type: "video_url", video_url: { url }, role: "reference_video" });
  for (const url of r.audios) content.push({ type: "audio_url", audio_url: { url }, role: "reference_audio" });
  return {
    model: s.upstreamModel,
    content,
    resolution: r.outputResolution,
    duration: r.durationSeconds,
    // Only audio-capable models know the field; 1.0 Pro never gets `true` (family rules).
    ...(r.generateAudio && { generate_audio: true }),
    watermark: false,
  };
}

export function mapSeedancePoll(body: unknown): VideoPollOutcome {
  const status = str(dig(body, "status"));
  if (!status) throw badShape("task", body);
  switch (status) {
    case "succeeded": {
      const url = str(dig(body, "content", "video_url"));
      if (!url) throw badShape("succeeded task", body);
      const tokens = dig(body, "usage", "completion_tokens");
      return {
        state: "succeeded",
        upstreamStatus: status,
        videoUrl: url,
        outputTokens: typeof tokens === "number" ? tokens : null,
      };
    }
    case "failed":
    case "cancelled":
      return {
        state: "failed",
        upstreamStatus: status,
        reason: "failed",
        message: str(dig(body, "error", "message")) ?? status,
      };
    case "expired":
      return {
        state: "failed",
        upstreamStatus: status,
        reason: "expired",
        message: str(dig(body, "error", "message")) ?? "task expired",
      };
    default:
      return { state: "pending", upstreamStatus: status };
  }
}

export function seedanceError(status: number, headers: Headers, text: string): UpstreamError {
  return upstreamHttpError(status, headers, text, { message: (b) => str(dig(b, "error", "message")) });
}

export const seedanceVideo: VideoProvider = {
  protocol: "video-seedance",
  async submit(s: VideoSubmission, call: VideoCall): Promise<string> {
    const auth = { authorization: `Bearer ${call.endpoint.apiKey}` };
    return checkTaskId(
      await requestJson(
        "POST",
        joinUrl(call.endpoint.baseUrl, "/contents/generations/tasks"),
        auth,
        toSeedanceRequest(s),
        call,
        seedanceError,
      ),
      "seedance",
    ).id;
  },
  async poll(task: string, _model: string, call: VideoCall): Promise<VideoPollOutcome> {
    const auth = { authorization: `Bearer ${call.endpoint.apiKey}` };
    const res = await requestJson(
      "GET",
      joinUrl(call.endpoint.baseUrl, `/contents/generations/tasks/${encodeURIComponent(task)}`),
      auth,
      undefined,
      call,
      seedanceError,
    );
    return mapSeedancePoll(checkSeedancePoll(res, "seedance"));
  },
};
