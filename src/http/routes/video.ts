/**
 * Video jobs: `POST /v1/video/generations`, `GET /v1/jobs/{job_id}`,
 * `POST /v1/jobs/{job_id}/cancel` and `GET /v1/jobs/{job_id}/content` (Family G results,
 * single byte ranges, streamed from storage, not billed). Handlers parse and delegate to the
 * video service (the rules: src/core/video/) and encode through src/surfaces/video/.
 */
import { Elysia } from "elysia";
import { VideoSubmitSchema } from "../../core/video/schema";
import { IDEMPOTENCY_KEY_MAX, type VideoService } from "../../core/video/service";
import type { ContentStore } from "../../core/video/ports";
import { contentResponse } from "../../surfaces/video/content";
import { absolutizeView, jobJson } from "../../surfaces/video/from-core";
import { idempotencyKeyOf } from "../../surfaces/video/schema";
import { apiKeyAuth } from "../api-key-auth";
import type { AppDeps } from "../deps";
import { requireUuid } from "../params";
import { requestRecord } from "../request-log";
import { AUTH } from "../security";
import { accepted, answerAs, errors, ok, withHeaders } from "../openapi/describe";
import { VideoJob } from "../../surfaces/video/schemas";

export interface VideoRouteDeps {
  service: VideoService;
  storage: Pick<ContentStore, "read">;
}

const mp4 = { type: "string", contentMediaType: "video/mp4" };
export const videoBytes = {
  ...answerAs(200, "video/mp4", mp4, "The whole file"),
  ...withHeaders(answerAs(206, "video/mp4", mp4, "The requested byte range"), "Content-Range"),
};

const origin = (request: Request) => new URL(request.url).origin;

export function videoRoutes(deps: AppDeps, video: VideoRouteDeps) {
  return new Elysia({ name: "video", normalize: false })
    .use(apiKeyAuth(deps.auth))
    .post(
      "/v1/video/generations",
      async ({ request, body, set, principal }) => {
        const idempotencyKey = idempotencyKeyOf(request);
        // The submission calls the provider: it takes a slot like a chat call (the polls do not).
        using _slot = await deps.calls.take(principal, request);
        const submitted = await video.service.submit(principal, body, idempotencyKey);
        requestRecord(request)?.requested(submitted.body.model); // the request's log line names the video model
        set.status = submitted.status;
        set.headers.location = `/v1/jobs/${submitted.body.job_id}`;
        if (submitted.replayed) set.headers["idempotent-replayed"] = "true";
        return absolutizeView(submitted.body, origin(request));
      },
      {
        apiKey: "model",
        body: VideoSubmitSchema,
        detail: {
          security: AUTH.apiKey,
          tags: ["video"],
          summary: "Submit a video generation job (202 with the job)",
          parameters: [
            {
              name: "Idempotency-Key",
              in: "header",
              required: false,
              description: "A retry with the same key and body gets the first answer again",
              schema: { type: "string", minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX },
            },
          ],
          responses: {
            ...withHeaders(
              accepted(VideoJob, "The job, processing (an Idempotency-Key replay repeats the first answer)"),
              "Location",
              "Idempotent-Replayed",
            ),
            ...errors(402, 409, 502),
          },
        },
      },
    )
    .get(
      "/v1/jobs/:job_id",
      async ({ request, params, principal }) => {
        const job = await video.service.get(principal, requireUuid(params.job_id, "job_id"));
        return jobJson(job, origin(request));
      },
      {
        apiKey: "any",
        detail: {
          security: AUTH.apiKey,
          tags: ["video"],
          summary: "A video job (only the submitting API key sees it)",
          responses: ok(VideoJob),
        },
      },
    )
    .post(
      "/v1/jobs/:job_id/cancel",
      async ({ request, params, principal }) => {
        const job = await video.service.cancel(principal, requireUuid(params.job_id, "job_id"));
        return jobJson(job, origin(request));
      },
      {
        apiKey: "any",
        detail: {
          security: AUTH.apiKey,
          tags: ["video"],
          summary: "Cancel a processing video job (hold released; 409 when already final)",
          responses: { ...ok(VideoJob), ...errors(409) },
        },
      },
    )
    .get(
      "/v1/jobs/:job_id/content",
      async ({ request, params, principal, rateLimitHeaders }) => {
        const content = await video.service.content(principal, requireUuid(params.job_id, "job_id"));
        return contentResponse(request, content, { storage: video.storage, headers: rateLimitHeaders });
      },
      {
        apiKey: "any",
        detail: {
          security: AUTH.apiKey,
          tags: ["video"],
          summary: "Family G result bytes (submitting key only; Range supported; not billed)",
          parameters: [
            {
              name: "Range",
              in: "header",
              required: false,
              description: "One byte range, `bytes=start-end` (several ranges are ignored: the whole file)",
              schema: { type: "string" },
            },
          ],
          responses: { ...videoBytes, ...errors(409, 410, 416) },
        },
      },
    );
}
