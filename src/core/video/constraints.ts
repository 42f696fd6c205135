/**
 * The specification's per-family constraints table, row by row, plus its normalizations.
 * Input is a request that already passed the general ranges (schema.ts); a value the chosen
 * model forbids is a 400 `unsupported_parameter` (docs/decisions.md #3), thrown before any hold.
 *
 * Where the table is silent we decided (docs/video.md): Family K takes at most two images
 * (first and last frame, Kling's `image`/`image_tail`) and no video or audio references, and
 * needs `duration_seconds` ("send it explicitly"); Family G (`veo-3`) takes the general rules.
 */
import type { Resolution, VideoFamily, VideoPricing } from "../catalog/types";
import { GatewayError, text, type Text } from "../errors";
import { DEFAULT_DURATION, DEFAULT_RESOLUTION } from "./schema";
import type { ImageRole, NormalizedVideoRequest } from "./types";

/** The request after the general rules: fields as sent (undefined = not sent), images merged. */
export interface VideoRequestInput {
  prompt: string;
  durationSeconds?: number;
  resolution?: Resolution;
  generateAudio?: boolean;
  images: string[];
  videos: string[];
  audios: string[];
}

/** `param`: the request field at fault (OpenAI's `error.param`). */
const reject = (message: Text, param?: string) =>
  new GatewayError("unsupported_parameter", message, param ? { param } : {});

const evens = (from: number, to: number) => Array.from({ length: (to - from) / 2 + 1 }, (_, i) => from + 2 * i);

function durationIn(model: string, d: number, min: number, max: number): void {
  if (d < min || d > max)
    throw reject(
      text(
        `'${model}' 모델의 duration_seconds는 ${min}~${max}초입니다 (요청: ${d}초).`,
        `duration_seconds of '${model}' is ${min} to ${max} s (requested: ${d} s).`,
      ),
      "duration_seconds",
    );
}

function durationOneOf(model: string, d: number, allowed: readonly number[], where = ""): void {
  if (!allowed.includes(d))
    throw reject(
      text(
        `'${model}' 모델${where}의 duration_seconds는 ${allowed.join(", ")}초 중 하나여야 합니다 (요청: ${d}초).`,
        `duration_seconds of '${model}'${where} must be one of ${allowed.join(", ")} s (requested: ${d} s).`,
      ),
      "duration_seconds",
    );
}

function resolutionOneOf(model: string, r: Resolution, allowed: readonly Resolution[]): void {
  if (!allowed.includes(r))
    throw reject(
      text(
        `'${model}' 모델은 ${allowed.join(", ")} 해상도만 지원합니다 (요청: ${r}).`,
        `'${model}' supports only the resolutions ${allowed.join(", ")} (requested: ${r}).`,
      ),
      "resolution",
    );
}

function textOnly(model: string, i: VideoRequestInput): void {
  if (i.images.length || i.videos.length || i.audios.length) {
    throw reject(
      text(
        `'${model}' 모델은 텍스트-동영상 전용이라 image, images, videos, audios 참조를 받지 않습니다.`,
        `'${model}' is text-to-video only and takes no image, images, videos or audios references.`,
      ),
      "videos",
    );
  }
}

function noVideoOrAudio(model: string, i: VideoRequestInput): void {
  if (i.videos.length || i.audios.length)
    throw reject(
      text(
        `'${model}' 모델은 videos, audios 참조를 지원하지 않습니다.`,
        `'${model}' does not support videos or audios references.`,
      ),
      "videos",
    );
}

function maxImages(model: string, i: VideoRequestInput, n: number): void {
  if (i.images.length > n)
    throw reject(
      text(
        `'${model}' 모델은 이미지 참조를 최대 ${n}개까지 받습니다 (요청: ${i.images.length}개).`,
        `'${model}' takes at most ${n} image references (requested: ${i.images.length}).`,
      ),
      "images",
    );
}

/** One or two images are first and last frame; otherwise (or with video/audio) all are references. */
function frameRoles(i: VideoRequestInput): { url: string; role: ImageRole }[] {
  const asFrames = i.images.length <= 2 && !i.videos.length && !i.audios.length;
  return i.images.map((url, n) => ({
    url,
    role: asFrames ? (n === 0 ? "first_frame" : "last_frame") : "reference_image",
  }));
}

/**
 * Checks a request against the model's family row and returns what goes upstream. `pricing`
 * is the offering's video pricing: a resolution it does not price is not offered (400).
 */
export function applyFamilyRules(
  model: string,
  family: VideoFamily,
  pricing: VideoPricing,
  i: VideoRequestInput,
): NormalizedVideoRequest {
  const requested = i.resolution ?? DEFAULT_RESOLUTION;
  let duration: number | null = i.durationSeconds ?? DEFAULT_DURATION;
  let output: Resolution = requested;
  let sendResolution = true;
  let images = frameRoles(i);

  switch (family) {
    case "K-v3":
    case "K-v2": {
      if (i.durationSeconds === undefined)
        throw reject(
          text(`'${model}' 모델은 duration_seconds를 명시해야 합니다.`, `'${model}' requires duration_seconds.`),
          "duration_seconds",
        );
      if (i.resolution !== undefined)
        throw reject(
          text(`'${model}' 모델은 resolution 파라미터를 받지 않습니다.`, `'${model}' takes no resolution parameter.`),
          "resolution",
        );
      if (family === "K-v3") durationIn(model, i.durationSeconds, 3, 15);
      else durationOneOf(model, i.durationSeconds, [5, 10]);
      noVideoOrAudio(model, i);
      maxImages(model, i, 2);
      output = pricing.defaultResolution;
      sendResolution = false;
      break;
    }
    case "L-fast":
    case "L-pro": {
      textOnly(model, i);
      // 480p and 720p are rendered (and priced) as 1080p.
      output = requested === "480p" || requested === "720p" ? "1080p" : requested;
      if (family === "L-pro") durationOneOf(model, duration, [6, 8, 10]);
      else if (output === "1080p") durationOneOf(model, duration, evens(6, 20), " (1080p)");
      else durationOneOf(model, duration, [6, 8, 10], ` (${output})`);
      break;
    }
    case "S-2.0":
    case "S-2.0-fast":
    case "S-2.0-mini": {
      durationIn(model, duration, 4, 15);
      if (family !== "S-2.0") resolutionOneOf(model, requested, ["480p", "720p"]);
      if (family === "S-2.0-mini") noVideoOrAudio(model, i);
      if (i.audios.length && !i.images.length && !i.videos.length) {
        throw reject(
          text(
            `'${model}' 모델에서 audios 참조는 이미지나 동영상 참조가 하나 이상 있어야 합니다.`,
            `With '${model}', audios references need at least one image or video reference.`,
          ),
          "audios",
        );
      }
      break;
    }
    case "S-1.5-pro": {
      durationIn(model, duration, 4, 12);
      if (requested === "4k")
        throw reject(
          text(`'${model}' 모델은 4k 해상도를 지원하지 않습니다.`, `'${model}' does not support the 4k resolution.`),
          "resolution",
        );
      noVideoOrAudio(model, i);
      maxImages(model, i, 2);
      break;
    }
    case "S-1.0-pro":
    case "S-1.0-pro-fast": {
      durationIn(model, duration, 2, 12);
      if (requested === "4k")
        throw reject(
          text(`'${model}' 모델은 4k 해상도를 지원하지 않습니다.`, `'${model}' does not support the 4k resolution.`),
          "resolution",
        );
      noVideoOrAudio(model, i);
      maxImages(model, i, family === "S-1.0-pro-fast" ? 1 : 2);
      if (i.generateAudio)
        throw reject(
          text(`'${model}' 모델은 generate_audio를 지원하지 않습니다.`, `'${model}' does not support generate_audio.`),
          "generate_audio",
        );
      break;
    }
    case "G": {
      // docs/decisions.md #4: the general rules apply.
      break;
    }
    case "G-omni": {
      textOnly(model, i);
      if (i.durationSeconds !== undefined)
        throw reject(
          text(
            `'${model}' 모델은 길이를 스스로 정하므로(3~10초) duration_seconds를 보낼 수 없습니다.`,
            `'${model}' picks its own length (3 to 10 s): duration_seconds cannot be sent.`,
          ),
          "duration_seconds",
        );
      resolutionOneOf(model, requested, ["720p", "1080p", "4k"]);
      duration = null;
      images = [];
      break;
    }
  }

  const priced = pricing.krwPerSecond ? pricing.krwPerSecond[output] : pricing.estOutputTokensPerSecond?.[output];
  if (priced === undefined)
    throw reject(
      text(
        `'${model}' 모델은 ${output} 해상도를 지원하지 않습니다.`,
        `'${model}' does not support the ${output} resolution.`,
      ),
      "resolution",
    );

  return {
    prompt: i.prompt,
    durationSeconds: duration,
    requestedResolution: requested,
    outputResolution: output,
    sendResolution,
    generateAudio: i.generateAudio ?? false,
    images,
    videos: i.videos,
    audios: i.audios,
  };
}
