/**
 * Video jobs: `POST /v1/video/generations`, `GET /v1/jobs/{job_id}`,
 * `POST /v1/jobs/{job_id}/cancel` and `GET /v1/jobs/{job_id}/content` (Family G results,
 * single byte ranges, streamed from storage, not billed). Handlers authenticate, parse and
 * delegate to the video service; the rules live in src/core/video/.
 */
import { Elysia } from "elysia";
import { GatewayError, invalid, text } from "../../core/errors";
import { VideoSubmitSchema } from "../../core/video/schema";
import { absolutizeView, IDEMPOTENCY_KEY_MAX, toJobView, type VideoService } from "../../core/video/service";
import type { ContentStore } from "../../core/video/ports";
import { apiKeyAuth } from "../api-key-auth";
import type { AppDeps } from "../deps";
import { requireUuid } from "../params";
import { requestRecord } from "../request-log";
import { AUTH } from "../security";
import { accepted, answerAs, errors, ok, withHeaders } from "../openapi/describe";
import { VideoJob } from "../openapi/shapes";

export interface VideoRouteDeps {
  service: VideoService;
  storage: Pick<ContentStore, "read">;
}

const mp4 = { type: "string", contentMediaType: "video/mp4" };
export const videoBytes = { ...answerAs(200, "video/mp4", mp4, "The whole file"), ...withHeaders(answerAs(206, "video/mp4", mp4, "The requested byte range"), "Content-Range") };

const origin = (request: Request) => new URL(request.url).origin;

/**
 * A single `bytes=` range of a `size`-byte file: [start, end] inclusive, null to serve the
 * whole file (no header, several ranges, or a malformed one: RFC 9110 lets us ignore those),
 * or "unsatisfiable" (416).
 */
export function parseRange(header: string | null, size: number): [number, number] | null | "unsatisfiable" {
  if (!header) return null;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return [Math.max(0, size - suffix), size - 1];
  }
  const start = Number(m[1]);
  if (m[2] !== "" && Number(m[2]) < start) return null;
  if (start >= size) return "unsatisfiable";
  return [start, m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1)];
}

/** A stored result's bytes: the whole file, or the one byte range asked for (206), or 416. */
export async function contentResponse(v: VideoRouteDeps, request: Request, c: Awaited<ReturnType<VideoService["content"]>>, extra: Record<string, string>): Promise<Response> {
  const range = parseRange(request.headers.get("range"), c.size);
  if (range === "unsatisfiable") {
    throw new GatewayError("range_not_satisfiable", undefined, { headers: { "content-range": `bytes */${c.size}`, "accept-ranges": "bytes" } });
  }
  const [start, end] = range ?? [0, c.size - 1];
  const object = await v.storage.read(c.storageKey, start, end);
  // The row says it exists but the file is gone (deleted by a sweeper elsewhere).
  if (!object) throw new GatewayError("content_expired");
  const headers: Record<string, string> = {
    ...extra,
    "content-type": c.contentType,
    "content-length": String(end - start + 1),
    "accept-ranges": "bytes",
    "cache-control": "private, no-store",
    "content-disposition": `inline; filename="${c.job.id}.mp4"`,
  };
  if (range) headers["content-range"] = `bytes ${start}-${end}/${c.size}`;
  // A local file slice goes out as is (sendfile, exact Content-Length). But Bun.serve
  // applies a Range header on its own to a 200 over a file, so when we chose to ignore
  // the client's Range (several ranges, malformed) the body must be an opaque stream.
  const ignoredRange = !range && request.headers.has("range");
  const bodyOut = object.file && !ignoredRange ? object.file : object.stream().pipeThrough(new TransformStream<Uint8Array, Uint8Array>());
  return new Response(bodyOut, { status: range ? 206 : 200, headers });
}

export function videoRoutes(d: AppDeps, v: VideoRouteDeps) {
  return new Elysia({ name: "video", normalize: false })
    .use(apiKeyAuth(d.auth))
    .post(
      "/v1/video/generations",
      async ({ request, body, set, principal }) => {
        const idem = request.headers.get("idempotency-key");
        if (idem !== null && (idem.length === 0 || idem.length > IDEMPOTENCY_KEY_MAX)) {
          throw invalid(["header", "idempotency-key"], text(`Idempotency-Key는 1자에서 ${IDEMPOTENCY_KEY_MAX}자 사이여야 합니다.`, `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} characters`), "string_too_long");
        }
        // The submission calls the provider: it takes a slot like a chat call (the polls do not).
        using _slot = await d.calls.take(principal, request);
        const r = await v.service.submit(principal, body, idem);
        requestRecord(request)?.requested(r.body.model); // the request's log line names the video model
        set.status = r.status;
        set.headers.location = `/v1/jobs/${r.body.job_id}`;
        if (r.replayed) set.headers["idempotent-replayed"] = "true";
        return absolutizeView(r.body, origin(request));
      },
      {
        apiKey: "model",
        body: VideoSubmitSchema,
        detail: {
          security: AUTH.apiKey,
          tags: ["video"],
          summary: "Submit a video generation job (202 with the job)",
          parameters: [{ name: "Idempotency-Key", in: "header", required: false, description: "A retry with the same key and body gets the first answer again", schema: { type: "string", minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX } }],
          responses: { ...withHeaders(accepted(VideoJob, "The job, processing (an Idempotency-Key replay repeats the first answer)"), "Location", "Idempotent-Replayed"), ...errors(402, 409, 502) },
        },
      },
    )
    .get(
      "/v1/jobs/:job_id",
      async ({ request, params, principal }) => {
        const job = await v.service.get(principal, requireUuid(params.job_id, "job_id"));
        return toJobView(job, origin(request));
      },
      { apiKey: "any", detail: { security: AUTH.apiKey, tags: ["video"], summary: "A video job (only the submitting API key sees it)", responses: ok(VideoJob) } },
    )
    .post(
      "/v1/jobs/:job_id/cancel",
      async ({ request, params, principal }) => {
        const job = await v.service.cancel(principal, requireUuid(params.job_id, "job_id"));
        return toJobView(job, origin(request));
      },
      { apiKey: "any", detail: { security: AUTH.apiKey, tags: ["video"], summary: "Cancel a processing video job (hold released; 409 when already final)", responses: { ...ok(VideoJob), ...errors(409) } } },
    )
    .get(
      "/v1/jobs/:job_id/content",
      async ({ request, params, principal, rateLimitHeaders }) => {
        const content = await v.service.content(principal, requireUuid(params.job_id, "job_id"));
        return contentResponse(v, request, content, rateLimitHeaders);
      },
      {
        apiKey: "any",
        detail: {
          security: AUTH.apiKey,
          tags: ["video"],
          summary: "Family G result bytes (submitting key only; Range supported; not billed)",
          parameters: [{ name: "Range", in: "header", required: false, description: "One byte range, `bytes=start-end` (several ranges are ignored: the whole file)", schema: { type: "string" } }],
          responses: { ...videoBytes, ...errors(409, 410, 416) },
        },
      },
    );
}
