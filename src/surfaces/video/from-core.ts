/**
 * Video jobs → the wire: the specification's job object (the core's `toJobView`, kept by the
 * video service for Idempotency-Key replays, typed here as the schema's), and the dashboard's
 * richer record of an account's job. Each returns the static type of its schema (./schemas.ts).
 */
import { toJobView } from "../../core/video/service";
import type { VideoJobRecord, VideoJobView } from "../../core/video/types";
import type { AccountVideoJob, AccountVideoJobs, VideoJob } from "./schemas";

/** A job as its API key's caller reads it, URLs absolute under `origin`. */
export function jobJson(job: VideoJobRecord, origin: string): VideoJob {
  return toJobView(job, origin);
}

/** A submit's answer as stored (relative URLs, for Idempotency-Key replays) with this request's origin. */
export function absolutizeView(view: VideoJobView, origin: string): VideoJob {
  const absolute = (url: string | null) => (url !== null && url.startsWith("/") ? origin + url : url);
  return {
    ...view,
    result_url: absolute(view.result_url),
    assets: view.assets.map((asset) => ({ ...asset, url: absolute(asset.url)! })),
  };
}

/** A job as the dashboard lists it: the job object plus its key, prompt and stored result. */
export function toAccountJob(job: VideoJobRecord, origin: string): AccountVideoJob {
  return {
    ...toJobView(job, origin),
    key_id: job.keyId,
    prompt: job.request.prompt,
    content_url: job.status === "succeeded" && job.storageKey ? `/v1/video/jobs/${job.id}/content` : null,
  };
}

/** A page of the account's jobs from up to `limit + 1` rows: the extra row only says there is more. */
export function toAccountJobList(rows: VideoJobRecord[], limit: number, origin: string): AccountVideoJobs {
  const page = rows.slice(0, limit);
  const more = rows.length > limit;
  return {
    object: "list",
    data: page.map((job) => toAccountJob(job, origin)),
    has_more: more,
    next_cursor: more ? page[page.length - 1]!.id : null,
  };
}
