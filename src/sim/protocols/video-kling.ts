/**
 * Kling's task API (provider `kling`): `POST /v1/videos/text2video` and `/image2video`, polls
 * `GET /v1/videos/{kind}/{task_id}`. Envelope `{code, message, request_id, data}` with
 * `code: 0` on success; states `submitted`, `processing`, `succeed` (sic), `failed`;
 * timestamps in milliseconds; `duration` a string. Kling has no expired state: an expired
 * task fails with a message saying so. Errors: `{code, message, request_id}` with Kling's
 * business codes.
 */
import { obeyDirectives } from "../directive-effects.ts";
import { jsonResponse, readJsonBody } from "../http.ts";
import type { SimContext, SimRouteTable } from "../routes.ts";
import {
  createVideoTask,
  fileUrl,
  ok,
  pollVideoTask,
  promptDirectives,
  taskPhase,
  type SimVideoTask,
} from "./video-tasks.ts";

const CODES: Record<number, [code: number, message: string]> = {
  400: [1201, "Invalid request parameters"],
  401: [1000, "Authorization is invalid"],
  403: [1103, "Access to the resource is not permitted"],
  404: [1203, "The requested resource does not exist"],
  422: [1201, "Invalid request parameters"],
  429: [1302, "The API request rate limit has been exceeded"],
  500: [5000, "Internal server error"],
  502: [5001, "Service temporarily unavailable"],
  503: [5001, "Service temporarily unavailable"],
  504: [5002, "Server timeout"],
};

const requestId = () => crypto.randomUUID();

export function klingError(status: number, message?: string): Response {
  const [code, fallback] = CODES[status] ?? [status >= 500 ? 5000 : 1200, `Simulated error ${status}`];
  return jsonResponse(
    { code, message: message ?? fallback, request_id: requestId() },
    status,
    status === 429 ? { "retry-after": "1" } : undefined,
  );
}

function authenticate(req: Request): Response | undefined {
  return /^Bearer\s+\S+/i.test(req.headers.get("authorization") ?? "") ? undefined : klingError(401);
}

interface KlingCreate {
  model_name?: string;
  prompt?: string;
  duration?: string;
  image?: string;
  image_tail?: string;
  external_task_id?: string;
}

function create(kind: "text2video" | "image2video") {
  return async (ctx: SimContext): Promise<Response> => {
    const { raw, body } = await readJsonBody<KlingCreate>(ctx);
    const directives = promptDirectives(body.prompt);
    const early = await obeyDirectives(ctx, directives, raw);
    if (early) return early;
    if (!body.model_name || typeof body.prompt !== "string" || !body.prompt)
      return klingError(400, "model_name and prompt are required");
    if (kind === "image2video" && !body.image) return klingError(400, "image is required");
    const duration = Number(body.duration ?? "5");
    if (!Number.isInteger(duration) || duration < 1) return klingError(400, "duration is invalid");
    // Kling task ids are long numeric strings.
    const id = `${Date.now()}${String(Number.parseInt(ctx.sim.nextId(), 36) % 100000).padStart(5, "0")}`;
    const task = createVideoTask(ctx, directives, {
      id,
      model: body.model_name,
      prompt: body.prompt,
      seconds: duration,
      resolution: "1080p",
      extra: { kind, external_task_id: body.external_task_id ?? "" },
    });
    return ok({
      code: 0,
      message: "SUCCEED",
      request_id: requestId(),
      data: {
        task_id: task.id,
        task_status: "submitted",
        task_info: { external_task_id: task.extra.external_task_id },
        created_at: task.createdAt,
        updated_at: task.createdAt,
      },
    });
  };
}

function taskBody(ctx: SimContext, task: SimVideoTask): Record<string, unknown> {
  const phase = taskPhase(task);
  const now = Date.now();
  const data: Record<string, unknown> = {
    task_id: task.id,
    task_status:
      phase === "queued"
        ? "submitted"
        : phase === "running"
          ? "processing"
          : phase === "succeeded"
            ? "succeed"
            : "failed",
    task_status_msg:
      phase === "failed"
        ? "Video generation failed"
        : phase === "expired"
          ? "Task expired before completion"
          : phase === "filtered"
            ? "Content policy violation"
            : "",
    task_info: { external_task_id: task.extra.external_task_id },
    created_at: task.createdAt,
    updated_at: Math.min(now, task.readyAt),
  };
  if (phase === "succeeded") {
    data.watermark_info = { enabled: false };
    data.final_unit_deduction = "1";
    data.task_result = {
      videos: [{ id: `${task.id}1`, url: fileUrl(ctx, task.id), watermark_url: "", duration: String(task.seconds) }],
    };
  }
  return { code: 0, message: "SUCCEED", request_id: requestId(), data };
}

function poll(kind: "text2video" | "image2video") {
  return async (ctx: SimContext): Promise<Response> => {
    const task = await pollVideoTask(ctx, ctx.params.id!);
    if (!task || task.extra.kind !== kind) return klingError(404, "task not found");
    return ok(taskBody(ctx, task));
  };
}

export const klingVideoRoutes: SimRouteTable = {
  protocol: "kling-video",
  authenticate,
  error: klingError,
  routes: {
    "POST /v1/videos/text2video": create("text2video"),
    "POST /v1/videos/image2video": create("image2video"),
    "GET /v1/videos/text2video/{id}": poll("text2video"),
    "GET /v1/videos/image2video/{id}": poll("image2video"),
  },
};
