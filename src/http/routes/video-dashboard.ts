/**
 * Video jobs for the dashboard (JWT): every job of the account, whichever key submitted it.
 * `GET /v1/video/jobs` lists them newest first; cancel and the stored result (with Range)
 * work as their API-key twins under `/v1/jobs/{id}`, for the account instead of the key.
 */
import { Elysia } from "elysia";
import type { VideoJobRepo } from "../../db/repos/video-jobs";
import { contentResponse } from "../../surfaces/video/content";
import { toAccountJob, toAccountJobList } from "../../surfaces/video/from-core";
import { jobListQuery } from "../../surfaces/video/schema";
import type { AppDeps } from "../deps";
import { requireUuid } from "../params";
import { AUTH } from "../security";
import { errors, ok } from "../openapi/describe";
import { AccountVideoJob, AccountVideoJobs } from "../../surfaces/video/schemas";
import { videoBytes, type VideoRouteDeps } from "./video";

export function videoDashboardRoutes(deps: AppDeps, video: VideoRouteDeps, repo: VideoJobRepo) {
  const origin = (request: Request) => new URL(request.url).origin;
  return new Elysia({ name: "video-dashboard", normalize: false })
    .get(
      "/v1/video/jobs",
      async ({ request }) => {
        const user = await deps.auth.jwtUser(request);
        const { limit, after } = jobListQuery(new URL(request.url).searchParams);
        return toAccountJobList(await repo.listForUser(user.id, after, limit + 1), limit, origin(request));
      },
      {
        detail: {
          security: AUTH.dashboard,
          tags: ["video"],
          summary: "The account's video jobs, newest first, whichever key submitted them",
          parameters: [
            { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 200, default: 50 } },
            {
              name: "cursor",
              in: "query",
              schema: { type: "string", format: "uuid" },
              description: "next_cursor of the previous page",
            },
          ],
          responses: ok(AccountVideoJobs),
        },
      },
    )
    .post(
      "/v1/video/jobs/:job_id/cancel",
      async ({ request, params }) => {
        const user = await deps.auth.jwtUser(request);
        return toAccountJob(
          await video.service.cancel({ userId: user.id }, requireUuid(params.job_id, "job_id")),
          origin(request),
        );
      },
      {
        detail: {
          security: AUTH.dashboard,
          tags: ["video"],
          summary: "Cancel one of the account's processing jobs (hold released; 409 when already final)",
          responses: { ...ok(AccountVideoJob), ...errors(409) },
        },
      },
    )
    .get(
      "/v1/video/jobs/:job_id/content",
      async ({ request, params }) => {
        const user = await deps.auth.jwtUser(request);
        const content = await video.service.content({ userId: user.id }, requireUuid(params.job_id, "job_id"));
        return contentResponse(request, content, { storage: video.storage, headers: {} });
      },
      {
        detail: {
          security: AUTH.dashboard,
          tags: ["video"],
          summary: "The stored result of one of the account's jobs (Range supported; not billed)",
          parameters: [
            {
              name: "Range",
              in: "header",
              required: false,
              description: "One byte range, `bytes=start-end`",
              schema: { type: "string" },
            },
          ],
          responses: { ...videoBytes, ...errors(409, 410, 416) },
        },
      },
    );
}
