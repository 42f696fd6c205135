/**
 * Video jobs for the dashboard (JWT): every job of the account, whichever key submitted it.
 * `GET /v1/video/jobs` lists them newest first; cancel and the stored result (with Range)
 * work as their API-key twins under `/v1/jobs/{id}`, for the account instead of the key.
 */
import { Elysia } from "elysia";
import { Type as T } from "@sinclair/typebox";
import { invalid } from "../../core/errors";
import { toJobView } from "../../core/video/service";
import type { VideoJobRecord } from "../../core/video/types";
import type { VideoJobRepo } from "../../db/repos/video-jobs";
import type { AppDeps } from "../deps";
import { requireUuid } from "../params";
import { AUTH } from "../security";
import { errors, named, ok } from "../openapi/describe";
import { VideoJob } from "../openapi/shapes";
import { contentResponse, videoBytes, type VideoRouteDeps } from "./video";

const AccountJob = T.Composite([
  VideoJob,
  T.Object({
    key_id: T.String({ format: "uuid" }),
    prompt: T.String(),
    content_url: T.Union([T.String(), T.Null()], { description: "The stored result for the dashboard (Range supported), when the gateway keeps it" }),
  }),
]);
const AccountJobs = named(
  "AccountVideoJobs",
  T.Object({ object: T.Literal("list"), data: T.Array(AccountJob), has_more: T.Boolean(), next_cursor: T.Union([T.String(), T.Null()]) }),
);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function accountJob(job: VideoJobRecord, origin: string) {
  return {
    ...toJobView(job, origin),
    key_id: job.keyId,
    prompt: job.request.prompt,
    content_url: job.status === "succeeded" && job.storageKey ? `/v1/video/jobs/${job.id}/content` : null,
  };
}

function pageQuery(q: URLSearchParams): { limit: number; after: string | null } {
  const one = (f: string) => {
    const v = q.getAll(f);
    if (v.length > 1) throw invalid(["query", f], { ko: "값은 하나만 보낼 수 있습니다.", en: "Expected a single value" });
    return v[0];
  };
  const rawLimit = one("limit");
  const limit = rawLimit === undefined ? 50 : /^\d{1,3}$/.test(rawLimit) ? Number(rawLimit) : NaN;
  if (!(limit >= 1 && limit <= 200)) throw invalid(["query", "limit"], { ko: "1부터 200까지의 정수여야 합니다.", en: "Expected an integer from 1 to 200" }, "int_parsing");
  const cursor = one("cursor");
  if (cursor !== undefined && !UUID.test(cursor)) throw invalid(["query", "cursor"], { ko: "이전 페이지의 next_cursor 값이어야 합니다.", en: "Expected the next_cursor of a previous page" });
  return { limit, after: cursor?.toLowerCase() ?? null };
}

export function videoDashboardRoutes(d: AppDeps, v: VideoRouteDeps, repo: VideoJobRepo) {
  const origin = (request: Request) => new URL(request.url).origin;
  return new Elysia({ name: "video-dashboard", normalize: false })
    .get(
      "/v1/video/jobs",
      async ({ request }) => {
        const user = await d.auth.jwtUser(request);
        const { limit, after } = pageQuery(new URL(request.url).searchParams);
        const rows = await repo.listForUser(user.id, after, limit + 1);
        const page = rows.slice(0, limit);
        return { object: "list", data: page.map((j) => accountJob(j, origin(request))), has_more: rows.length > limit, next_cursor: rows.length > limit ? page[page.length - 1]!.id : null };
      },
      {
        detail: {
          security: AUTH.dashboard,
          tags: ["video"],
          summary: "The account's video jobs, newest first, whichever key submitted them",
          parameters: [
            { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 200, default: 50 } },
            { name: "cursor", in: "query", schema: { type: "string", format: "uuid" }, description: "next_cursor of the previous page" },
          ],
          responses: ok(AccountJobs),
        },
      },
    )
    .post(
      "/v1/video/jobs/:job_id/cancel",
      async ({ request, params }) => {
        const user = await d.auth.jwtUser(request);
        return accountJob(await v.service.cancel({ userId: user.id }, requireUuid(params.job_id, "job_id")), origin(request));
      },
      { detail: { security: AUTH.dashboard, tags: ["video"], summary: "Cancel one of the account's processing jobs (hold released; 409 when already final)", responses: { ...ok(named("AccountVideoJob", AccountJob)), ...errors(409) } } },
    )
    .get(
      "/v1/video/jobs/:job_id/content",
      async ({ request, params }) => {
        const user = await d.auth.jwtUser(request);
        return contentResponse(v, request, await v.service.content({ userId: user.id }, requireUuid(params.job_id, "job_id")), {});
      },
      {
        detail: {
          security: AUTH.dashboard,
          tags: ["video"],
          summary: "The stored result of one of the account's jobs (Range supported; not billed)",
          parameters: [{ name: "Range", in: "header", required: false, description: "One byte range, `bytes=start-end`", schema: { type: "string" } }],
          responses: { ...videoBytes, ...errors(409, 410, 416) },
        },
      },
    );
}
