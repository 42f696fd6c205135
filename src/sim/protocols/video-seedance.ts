/**
 * Seedance on Ark "content generation tasks" (provider `seedance`): `POST
 * /contents/generations/tasks` answers `{id}` only; `GET /contents/generations/tasks/{id}`
 * answers the task: `queued`, `running`, then `succeeded` (with `content.video_url` and
 * `usage.completion_tokens`), `failed` (with `error`) or `expired`. Timestamps in seconds.
 * Errors: `{"error": {code, message, param, type}}`.
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

const ERRORS: Record<number, [code: string, type: string]> = {
  400: ["InvalidParameter", "BadRequest"],
  401: ["AuthenticationError", "Unauthorized"],
  403: ["AccessDenied", "Forbidden"],
  404: ["ResourceNotFound", "NotFound"],
  422: ["InvalidParameter", "BadRequest"],
  429: ["RateLimitExceeded.EndpointRPMExceeded", "TooManyRequests"],
  500: ["InternalServiceError", "InternalServerError"],
  502: ["ServiceUnavailable", "ServiceUnavailable"],
  503: ["ServiceUnavailable", "ServiceUnavailable"],
};

export function seedanceError(status: number, message?: string, param = ""): Response {
  const [code, type] = ERRORS[status] ?? [
    status >= 500 ? "InternalServiceError" : "InvalidParameter",
    status >= 500 ? "InternalServerError" : "BadRequest",
  ];
  const rid = crypto.randomUUID().replace(/-/g, "");
  const text = `${message ?? "The request failed."} Request ID: ${rid}`;
  return jsonResponse({ error: { code, message: text, param, type } }, status, {
    "x-request-id": rid,
    ...(status === 429 && { "retry-after": "1" }),
  });
}

function authenticate(req: Request): Response | undefined {
  return /^Bearer\s+\S+/i.test(req.headers.get("authorization") ?? "")
    ? undefined
    : seedanceError(401, "The API key in the request is missing or invalid.");
}

interface ContentItem {
  type?: string;
  text?: string;
}

interface SeedanceCreate {
  model?: string;
  content?: ContentItem[];
  resolution?: string;
  duration?: number;
}

async function create(ctx: SimContext): Promise<Response> {
  const { raw, body } = await readJsonBody<SeedanceCreate>(ctx);
  const prompt = Array.isArray(body.content) ? (body.content.find((c) => c?.type === "text")?.text ?? "") : "";
  const directives = promptDirectives(prompt);
  const early = await obeyDirectives(ctx, directives, raw);
  if (early) return early;
  if (!body.model) return seedanceError(400, "model is required.", "model");
  if (!prompt) return seedanceError(400, "content must include a text item.", "content");
  const d = new Date();
  const stamp = `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, "0")}${String(d.getUTCDate()).padStart(2, "0")}`;
  const task = createVideoTask(ctx, directives, {
    id: `cgt-${stamp}${String(d.getUTCHours()).padStart(2, "0")}${String(d.getUTCMinutes()).padStart(2, "0")}-${ctx.sim.nextId().slice(-5)}`,
    model: body.model,
    prompt,
    seconds: typeof body.duration === "number" ? body.duration : 5,
    resolution: body.resolution ?? "720p",
  });
  return ok({ id: task.id });
}

const PIXELS: Record<string, number> = {
  "480p": 854 * 480,
  "720p": 1280 * 720,
  "1080p": 1920 * 1080,
  "1440p": 2560 * 1440,
  "4k": 3840 * 2160,
};

function taskBody(ctx: SimContext, task: SimVideoTask): Record<string, unknown> {
  const phase = taskPhase(task);
  const secs = (ms: number) => Math.floor(ms / 1000);
  const status = phase === "filtered" ? "failed" : phase;
  const out: Record<string, unknown> = { id: task.id, model: task.model, status };
  if (phase === "succeeded") {
    out.content = { video_url: `${fileUrl(ctx, task.id)}?X-Tos-Expires=86400` };
    out.seed = task.outputTokens % 100;
    out.resolution = task.resolution;
    out.ratio = "16:9";
    out.duration = task.seconds;
    out.framespersecond = 24;
    const tokens = Math.floor(((PIXELS[task.resolution] ?? PIXELS["720p"]!) * 24 * task.seconds) / 1024);
    out.usage = { completion_tokens: tokens, total_tokens: tokens };
  } else if (phase === "failed" || phase === "filtered") {
    out.error = { code: "InternalServiceError", message: "The video generation failed. Request ID: sim" };
  } else if (phase === "expired") {
    out.error = { code: "TaskExpired", message: "The task expired before it could run." };
  }
  out.created_at = secs(task.createdAt);
  out.updated_at = secs(Math.min(Date.now(), task.readyAt));
  return out;
}

async function poll(ctx: SimContext): Promise<Response> {
  const task = await pollVideoTask(ctx, ctx.params.id!);
  if (!task) return seedanceError(404, `The specified task ${ctx.params.id} is not found.`, "id");
  return ok(taskBody(ctx, task));
}

export const seedanceVideoRoutes: SimRouteTable = {
  protocol: "seedance-video",
  authenticate,
  error: (status, message) => seedanceError(status, message),
  routes: {
    "POST /contents/generations/tasks": create,
    "GET /contents/generations/tasks/{id}": poll,
  },
};
