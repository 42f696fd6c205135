/**
 * Veo on the Gemini API (provider `veo`), a long-running operation:
 * `POST /v1beta/models/{model}:predictLongRunning` answers `{name}`
 * (`models/{model}/operations/{id}`); `GET /v1beta/models/{model}/operations/{id}` answers
 * `{name}` while running (no `done`), then `done: true` with `response.generateVideoResponse`
 * (`generatedSamples[].video.uri`), or `raiMediaFilteredReasons`, or `error`
 * (google.rpc.Status: 13 INTERNAL for a failure, 4 DEADLINE_EXCEEDED for an expiry). An Omni
 * model (id containing `omni`) chooses its length (3–10 s) and reports
 * `response.usageMetadata.candidatesTokenCount`.
 *
 * The file URI `GET /v1beta/files/{id}:download?alt=media` needs the API key and redirects
 * (302) to a signed URL that does not.
 */
import { obeyDirectives } from "../directive-effects.ts";
import { readJsonBody } from "../http.ts";
import type { SimContext, SimRouteTable } from "../routes.ts";
import { authenticateGemini, geminiError } from "./gemini-errors.ts";
import {
  createVideoTask,
  findVideoTask,
  mp4Response,
  ok,
  pollVideoTask,
  promptDirectives,
  taskPhase,
} from "./video-tasks.ts";

interface VeoCreate {
  instances?: { prompt?: string }[];
  parameters?: { resolution?: string; durationSeconds?: number };
}

const operationName = (model: string, id: string) => `models/${model}/operations/${id}`;

async function create(ctx: SimContext): Promise<Response> {
  const { raw, body } = await readJsonBody<VeoCreate>(ctx);
  const prompt = body.instances?.[0]?.prompt;
  const directives = promptDirectives(prompt);
  const early = await obeyDirectives(ctx, directives, raw);
  if (early) return early;
  if (typeof prompt !== "string" || !prompt) return geminiError(400, "instances[0].prompt is required.");
  const model = ctx.params.model!;
  const omni = model.includes("omni");
  const seconds = body.parameters?.durationSeconds;
  if (omni && seconds !== undefined) return geminiError(400, "durationSeconds is not supported by this model.");
  const id = `${ctx.sim.nextId()}${crypto.randomUUID().replace(/-/g, "").slice(0, 6)}`;
  createVideoTask(ctx, directives, {
    id,
    model,
    prompt,
    seconds: omni ? undefined : typeof seconds === "number" ? seconds : 8,
    resolution: body.parameters?.resolution ?? "720p",
    extra: { omni },
  });
  return ok({ name: operationName(model, id) });
}

async function poll(ctx: SimContext): Promise<Response> {
  const task = await pollVideoTask(ctx, ctx.params.op!);
  if (!task || task.model !== ctx.params.model) return geminiError(404, "Operation not found.");
  const name = operationName(task.model, task.id);
  const phase = taskPhase(task);
  if (phase === "queued" || phase === "running") return ok({ name });
  if (phase === "failed")
    return ok({ name, done: true, error: { code: 13, message: "Video generation failed due to an internal error." } });
  if (phase === "expired")
    return ok({ name, done: true, error: { code: 4, message: "The operation expired before it completed." } });
  const type = "type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse";
  if (phase === "filtered") {
    return ok({
      name,
      done: true,
      response: {
        "@type": type,
        generateVideoResponse: {
          raiMediaFilteredCount: 1,
          raiMediaFilteredReasons: ["The prompt was blocked by the safety filter."],
        },
      },
    });
  }
  const uri = `${ctx.url.origin}/sim/${ctx.provider}/v1beta/files/${task.id}:download?alt=media`;
  return ok({
    name,
    done: true,
    response: {
      "@type": type,
      generateVideoResponse: { generatedSamples: [{ video: { uri } }] },
      ...(task.extra.omni === true && {
        usageMetadata: { candidatesTokenCount: task.outputTokens, totalTokenCount: task.outputTokens },
      }),
    },
  });
}

/** The authenticated file URI: a redirect to the signed URL. */
function download(ctx: SimContext): Response {
  const task = findVideoTask(ctx, ctx.params.file!);
  if (!task || taskPhase(task) !== "succeeded") return geminiError(404, "File not found.");
  return new Response(null, {
    status: 302,
    headers: { location: `/sim/${ctx.provider}/signed/${task.id}.mp4?sig=${task.id.length}${task.createdAt}` },
  });
}

export const veoVideoRoutes: SimRouteTable = {
  protocol: "veo-video",
  authenticate: authenticateGemini,
  error: geminiError,
  routes: {
    "POST /v1beta/models/{model}:predictLongRunning": create,
    "GET /v1beta/models/{model}/operations/{op}": poll,
    "GET /v1beta/files/{file}:download": download,
  },
};

/** The signed URLs the file URI redirects to: no credential needed. */
export const veoSignedFileRoutes: SimRouteTable = {
  protocol: "veo-signed-files",
  error: geminiError,
  routes: {
    "GET /signed/{file}": (ctx) => {
      const task = findVideoTask(ctx, ctx.params.file!.replace(/\.mp4$/, ""));
      if (!task || taskPhase(task) !== "succeeded") return geminiError(404, "File not found.");
      return mp4Response(task);
    },
  },
};
