/**
 * Family K: Kling's task API. Create with `POST /v1/videos/text2video` (or `image2video` when
 * there is a first frame), poll `GET /v1/videos/{kind}/{task_id}`. Every answer is the
 * envelope `{code, message, request_id, data}`; `code` 0 is success (the HTTP status is 200
 * for business failures too). Task states: `submitted`, `processing`, `succeed` (sic),
 * `failed`. `duration` is a string of seconds. Kling takes no resolution: `mode: "pro"` is
 * its 1080p output.
 *
 * Credential: an `ACCESS_KEY:SECRET_KEY` pair is turned into Kling's short-lived HS256 JWT;
 * any other value is sent as a bearer token as is (newer accounts get plain API keys).
 */
import { UpstreamError } from "../../../core/upstream/error";
import type { VideoCall, VideoPollOutcome, VideoProvider, VideoSubmission } from "../../../core/video/provider";
import { badShape, dig, upstreamHttpError, joinUrl, requestJson, str } from "../http";
import { checkKlingPoll, checkKlingSubmit } from "../wire";

type Kind = "text2video" | "image2video";

/** The create-task body (text2video, or image2video with `image` / `image_tail`). */
export function toKlingRequest(s: VideoSubmission): { kind: Kind; body: Record<string, unknown> } {
  const r = s.request;
  const first = r.images.find((i) => i.role === "first_frame") ?? r.images[0];
  const last = r.images.find((i) => i.role === "last_frame");
  const common = {
    model_name: s.upstreamModel,
    prompt: r.prompt,
    negative_prompt: "",
    duration: String(r.durationSeconds ?? 5),
    mode: "pro",
    sound: r.generateAudio ? "on" : "off",
    external_task_id: s.jobId,
  };
  if (!first) return { kind: "text2video", body: { ...common, aspect_ratio: "16:9" } };
  return { kind: "image2video", body: { ...common, image: first.url, ...(last && { image_tail: last.url }) } };
}

/** A poll body → outcome. */
export function mapKlingPoll(body: unknown): VideoPollOutcome {
  const data = dig(body, "data");
  const status = str(dig(data, "task_status"));
  if (!status) throw badShape("task", body);
  if (status === "submitted" || status === "processing") return { state: "pending", upstreamStatus: status };
  if (status === "succeed") {
    const url = str(dig(data, "task_result", "videos", 0, "url"));
    if (!url) throw badShape("succeeded task", body);
    return { state: "succeeded", upstreamStatus: status, videoUrl: url, outputTokens: null };
  }
  if (status === "failed") {
    const msg = str(dig(data, "task_status_msg")) ?? "";
    return {
      state: "failed",
      upstreamStatus: status,
      reason: /expire/i.test(msg) ? "expired" : "failed",
      message: msg,
    };
  }
  return { state: "pending", upstreamStatus: status };
}

/**
 * Kling's errors are `{code, message, request_id}`. HTTP 429 with codes 1100–1102 means the
 * account (arrears, resource pack used up), not a rate limit: retrying does not help.
 */
export function klingError(status: number, headers: Headers, text: string): UpstreamError {
  return upstreamHttpError(status, headers, text, {
    message: (b) => str(dig(b, "message")),
    kind: (s, b) => {
      const code = Number(dig(b, "code"));
      return s === 429 && code >= 1100 && code <= 1102 ? "rejected" : undefined;
    },
  });
}

/** Bearer value: a JWT for an `AK:SK` pair, the key itself otherwise. */
export function klingToken(apiKey: string, now = Date.now()): string {
  const colon = apiKey.indexOf(":");
  if (colon <= 0) return apiKey;
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const t = Math.floor(now / 1000);
  const unsigned = `${b64({ alg: "HS256", typ: "JWT" })}.${b64({ iss: apiKey.slice(0, colon), exp: t + 1800, nbf: t - 5 })}`;
  return `${unsigned}.${new Bun.CryptoHasher("sha256", apiKey.slice(colon + 1)).update(unsigned).digest("base64url")}`;
}

/** A 200 envelope with a non-zero `code` is a rejection. */
function unwrap(body: unknown): unknown {
  const code = dig(body, "code");
  if (code !== 0)
    throw new UpstreamError("rejected", str(dig(body, "message")) ?? `kling code ${String(code)}`, 200, body);
  return dig(body, "data");
}

export const klingVideo: VideoProvider = {
  protocol: "video-kling",
  async submit(s: VideoSubmission, call: VideoCall): Promise<string> {
    const { kind, body } = toKlingRequest(s);
    const auth = { authorization: `Bearer ${klingToken(call.endpoint.apiKey)}` };
    const res = checkKlingSubmit(
      await requestJson("POST", joinUrl(call.endpoint.baseUrl, `/v1/videos/${kind}`), auth, body, call, klingError),
      "kling",
    );
    const id = str(dig(unwrap(res), "task_id"));
    if (!id) throw badShape("create-task answer", res);
    return `${kind}:${id}`;
  },
  async poll(task: string, _model: string, call: VideoCall): Promise<VideoPollOutcome> {
    const [kind, id] = task.split(":", 2) as [Kind, string];
    const auth = { authorization: `Bearer ${klingToken(call.endpoint.apiKey)}` };
    const res = checkKlingPoll(
      await requestJson(
        "GET",
        joinUrl(call.endpoint.baseUrl, `/v1/videos/${kind}/${encodeURIComponent(id)}`),
        auth,
        undefined,
        call,
        klingError,
      ),
      "kling",
    );
    unwrap(res);
    return mapKlingPoll(res);
  },
};
