/**
 * The task engine behind the simulated video APIs (Kling, LTX, Seedance, Veo). Each family's
 * route table speaks its vendor's wire format; the tasks themselves behave the same way:
 *
 * - a task finishes `video_ms` milliseconds after creation (`[sim:video_ms=MS]`, default 3000);
 *   before that it is queued for the first third of the time, then running;
 * - `[sim:video_fail]` ends it failed, `[sim:video_expire]` expired, `[sim:video_filtered]`
 *   (Veo) blocked by the safety filter;
 * - `[sim:video_poll_ms=MS]` makes every poll of the task take MS milliseconds;
 * - `[sim:tokens=N]` sets the output tokens a token-billed model reports;
 * - the result is a small deterministic MP4-like file (an `ftyp` box and an `mdat` box of
 *   pseudo-random bytes, 8 KiB per second of video) served under the provider's base URL.
 *
 * Directives come from the prompt; `hang`, `latency` and `fail` apply to the create call.
 * Tasks live in the simulator instance's scratch state (cleared by reset).
 */
import { directiveInt, parseDirectives, type Directives } from "../directives.ts";
import { jsonResponse, sleep } from "../http.ts";
import type { SimContext, SimRouteTable } from "../routes.ts";
import { keepOpen } from "../directive-effects.ts";

const DEFAULT_VIDEO_MS = 3000;
const BYTES_PER_SECOND = 8 * 1024;

export type TaskOutcome = "succeeded" | "failed" | "expired" | "filtered";
export type TaskPhase = "queued" | "running" | TaskOutcome;

export interface SimVideoTask {
  id: string;
  provider: string;
  model: string;
  prompt: string;
  createdAt: number;
  readyAt: number;
  outcome: TaskOutcome;
  /** Seconds of output. */
  seconds: number;
  resolution: string;
  /** Output tokens a token-billed model reports. */
  outputTokens: number;
  /** Extra time every poll of this task takes. */
  pollMs: number;
  /** The vendor's own request fields the protocol wants to echo. */
  extra: Record<string, unknown>;
}

/** Tokens per second a token-billed model produces, by resolution (below the gateway's estimates). */
const TOKENS_PER_SECOND: Record<string, number> = {
  "480p": 2000,
  "720p": 4000,
  "1080p": 8000,
  "1440p": 12000,
  "4k": 16000,
};

function tasks(ctx: SimContext): Map<string, SimVideoTask> {
  return ctx.sim.scratch("video-tasks", () => new Map<string, SimVideoTask>());
}

/** FNV-1a, for deterministic lengths and bytes. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export interface NewTask {
  id: string;
  model: string;
  prompt: string;
  /** Requested seconds; undefined lets the model choose 3–10 s from the prompt (Family G Omni). */
  seconds?: number;
  resolution: string;
  extra?: Record<string, unknown>;
}

export function createVideoTask(ctx: SimContext, directives: Directives, t: NewTask): SimVideoTask {
  const now = Date.now();
  const outcome: TaskOutcome = directives.has("video_fail")
    ? "failed"
    : directives.has("video_expire")
      ? "expired"
      : directives.has("video_filtered")
        ? "filtered"
        : "succeeded";
  const seconds = t.seconds ?? 3 + (fnv1a(t.prompt) % 8);
  const task: SimVideoTask = {
    id: t.id,
    provider: ctx.provider,
    model: t.model,
    prompt: t.prompt,
    createdAt: now,
    readyAt: now + (directiveInt(directives, "video_ms") ?? DEFAULT_VIDEO_MS),
    outcome,
    seconds,
    resolution: t.resolution,
    outputTokens: directiveInt(directives, "tokens") ?? seconds * (TOKENS_PER_SECOND[t.resolution] ?? 4000),
    pollMs: directiveInt(directives, "video_poll_ms") ?? 0,
    extra: t.extra ?? {},
  };
  tasks(ctx).set(`${ctx.provider}:${t.id}`, task);
  return task;
}

export function findVideoTask(ctx: SimContext, id: string): SimVideoTask | undefined {
  return tasks(ctx).get(`${ctx.provider}:${id}`);
}

/** Where a task is at `now`. */
export function taskPhase(task: SimVideoTask, now = Date.now()): TaskPhase {
  if (now >= task.readyAt) return task.outcome;
  return now < task.createdAt + (task.readyAt - task.createdAt) / 3 ? "queued" : "running";
}

/** Looks a task up for a poll, applying its poll delay; undefined when unknown. */
export async function pollVideoTask(ctx: SimContext, id: string): Promise<SimVideoTask | undefined> {
  const task = findVideoTask(ctx, id);
  if (task && task.pollMs > 0) {
    keepOpen(ctx);
    await sleep(task.pollMs, ctx.req.signal);
  }
  return task;
}

/** Directives of a prompt (video directives live in the prompt, like chat ones in the last user turn). */
export function promptDirectives(prompt: unknown): Directives {
  return parseDirectives(typeof prompt === "string" ? prompt : "");
}

/** The deterministic result file of a task. */
export function videoBytes(task: SimVideoTask): Uint8Array {
  const payload = Math.max(1, task.seconds) * BYTES_PER_SECOND;
  const out = new Uint8Array(32 + 8 + payload);
  const view = new DataView(out.buffer);
  // ftyp box: size, type, major brand, minor version, compatible brands.
  view.setUint32(0, 32);
  out.set(new TextEncoder().encode("ftypisom\0\0\x02\0isomiso2avc1mp41"), 4);
  // mdat box header, then the payload.
  view.setUint32(32, 8 + payload);
  out.set(new TextEncoder().encode("mdat"), 36);
  let x = fnv1a(`${task.provider}:${task.id}`) || 1;
  for (let i = 40; i < out.length; i++) {
    // xorshift32
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

export function mp4Response(task: SimVideoTask): Response {
  const bytes = videoBytes(task);
  return new Response(bytes, { headers: { "content-type": "video/mp4", "content-length": String(bytes.length) } });
}

/** The public URL of a task's file (`/files/{provider-task-id}.mp4` under the provider's base). */
export function fileUrl(ctx: SimContext, id: string): string {
  return `${ctx.url.origin}/sim/${ctx.provider}/files/${encodeURIComponent(id)}.mp4`;
}

/**
 * Result files as vendors hand them out: signed, so no credential is needed. Registered as a
 * second table on each video provider (its first table renders the 404s).
 */
export function videoFileRoutes(error: (status: number, message?: string) => Response): SimRouteTable {
  return {
    protocol: "video-files",
    error,
    routes: {
      "GET /files/{file}": (ctx) => {
        const id = ctx.params.file!.replace(/\.mp4$/, "");
        const task = findVideoTask(ctx, id);
        if (!task || taskPhase(task) !== "succeeded") return ctx.error(404, "file not found");
        return mp4Response(task);
      },
    },
  };
}

/** A JSON reply (vendors answer polls with 200 even for failed tasks). */
export const ok = (body: unknown) => jsonResponse(body);
