/**
 * LTX-2 (provider `ltx`) in the asynchronous v2 task form the gateway uses:
 * `POST /v2/text-to-video` answers `{id}`; `GET /v2/text-to-video/{id}` answers
 * `{id, model, status, created_at, video_url?, error?}` with status `queued`, `processing`,
 * `completed`, `failed` or `expired`. (LTX's documented v1 is synchronous and has no task to
 * poll; this shape is an assumption shared with the adapter, see docs/video.md.) Errors use
 * LTX's `{"type":"error","error":{type, message}}` envelope.
 */
import { obeyDirectives } from "../directive-effects.ts";
import { jsonResponse, readJsonBody } from "../http.ts";
import type { SimContext, SimRouteTable } from "../routes.ts";
import { createVideoTask, fileUrl, ok, pollVideoTask, promptDirectives, taskPhase } from "./video-tasks.ts";

const TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "insufficient_funds_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  422: "invalid_request_error",
  429: "rate_limit_error",
};

export function ltxError(status: number, message?: string): Response {
  const type = TYPES[status] ?? "api_error";
  return jsonResponse({ type: "error", error: { type, message: message ?? `Simulated error ${status}` } }, status, {
    "x-request-id": crypto.randomUUID(),
    ...(status === 429 && { "retry-after": "1" }),
  });
}

function authenticate(req: Request): Response | undefined {
  return /^Bearer\s+\S+/i.test(req.headers.get("authorization") ?? "")
    ? undefined
    : ltxError(401, "Missing authorization header");
}

const RESOLUTIONS: Record<string, string> = { "1920x1080": "1080p", "2560x1440": "1440p", "3840x2160": "4k" };

interface LtxCreate {
  prompt?: string;
  model?: string;
  duration?: number;
  resolution?: string;
}

async function create(ctx: SimContext): Promise<Response> {
  const { raw, body } = await readJsonBody<LtxCreate>(ctx);
  const directives = promptDirectives(body.prompt);
  const early = await obeyDirectives(ctx, directives, raw);
  if (early) return early;
  if (typeof body.prompt !== "string" || !body.prompt) return ltxError(400, "prompt is required");
  if (!body.model) return ltxError(400, "model is required");
  const resolution = RESOLUTIONS[body.resolution ?? "1920x1080"];
  if (!resolution) return ltxError(400, `unsupported resolution ${body.resolution}`);
  const task = createVideoTask(ctx, directives, {
    id: crypto.randomUUID(),
    model: body.model,
    prompt: body.prompt,
    seconds: typeof body.duration === "number" ? body.duration : 8,
    resolution,
  });
  return ok({ id: task.id });
}

async function poll(ctx: SimContext): Promise<Response> {
  const task = await pollVideoTask(ctx, ctx.params.id!);
  if (!task) return ltxError(404, "Task not found");
  const phase = taskPhase(task);
  const status =
    phase === "running" ? "processing" : phase === "succeeded" ? "completed" : phase === "filtered" ? "failed" : phase;
  return ok({
    id: task.id,
    model: task.model,
    status,
    created_at: new Date(task.createdAt).toISOString(),
    ...(phase === "succeeded" && { video_url: fileUrl(ctx, task.id), duration: task.seconds }),
    ...((phase === "failed" || phase === "filtered") && {
      error: { type: "generation_error", message: "Video generation failed" },
    }),
    ...(phase === "expired" && { error: { type: "expired", message: "Task expired before completion" } }),
  });
}

export const ltxVideoRoutes: SimRouteTable = {
  protocol: "ltx-video",
  authenticate,
  error: ltxError,
  routes: {
    "POST /v2/text-to-video": create,
    "GET /v2/text-to-video/{id}": poll,
  },
};
