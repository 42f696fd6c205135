/**
 * A video poller thread (PostgreSQL only: PGlite lives in the main thread and cannot be
 * shared). It opens its own postgres.js connection, runs one `PollLoop`, beats to the
 * supervisor, and on `stop` finishes its jobs in flight, drops its claims and exits.
 *
 * Messages in: `{type: "start", ...}`, `{type: "wake"}`, `{type: "stop"}`.
 * Messages out: `{type: "started"}`, `{type: "beat"}`, `{type: "stopped"}`, `{type: "error", message}`,
 * and the observations for metrics: `{type: "upstream", ...}`, `{type: "settled", event, costMicro}`, `{type: "job", family, state}`.
 */
import { openDatabase, type Database } from "../db/client";
import type { VideoJobRepo } from "../db/repos/video-jobs";
import { log, setLogLevel } from "../lib/log";
import { PollLoop } from "./video-loop";
import { pollerRuntime, type VideoRuntimeConfig } from "./video-runtime";

declare var self: Worker;

export interface WorkerStart {
  type: "start";
  dbUrl: string;
  owner: string;
  slots: number;
  tickMs: number;
  runtime: VideoRuntimeConfig;
  logLevel: string;
}

let loop: PollLoop | null = null;
let db: Database | null = null;
let repo: VideoJobRepo | null = null;
let beat: ReturnType<typeof setInterval> | null = null;
let queued: "wake" | "stop" | null = null;

// Messages posted before this script ran are queued until its synchronous part is done.
self.onmessage = (event: MessageEvent) => {
  const message = event.data as WorkerStart | { type: "wake" } | { type: "stop" };
  if (message.type === "start") void start(message);
  else if (message.type === "wake") loop ? loop.wake() : (queued ??= "wake");
  else if (message.type === "stop") loop ? void stop() : (queued = "stop");
};

async function start(setup: WorkerStart): Promise<void> {
  try {
    setLogLevel(setup.logLevel);
    db = await openDatabase({ url: setup.dbUrl, max: Math.max(2, setup.slots) });
    // Metrics live on the main thread: each observation is posted there (a few per job step).
    const runtime = pollerRuntime(db, setup.runtime, {
      observe: {
        upstream: (providerId, step, outcome, ms) => postMessage({ type: "upstream", providerId, step, outcome, ms }),
        settled: (event, costMicro) => postMessage({ type: "settled", event, costMicro }),
        job: (family, state) => postMessage({ type: "job", family, state }),
      },
    });
    repo = runtime.repo;
    loop = new PollLoop(runtime.deps, setup.owner, setup.slots, setup.tickMs, (error) =>
      log.warn("video poll step failed", { owner: setup.owner, error }),
    );
    loop.start();
    beat = setInterval(
      () => postMessage({ type: "beat", at: loop?.lastBeat ?? 0 }),
      Math.max(200, Math.min(5000, setup.tickMs * 2)),
    );
    postMessage({ type: "started" });
    if (queued === "stop") await stop();
    else if (queued === "wake") loop.wake();
  } catch (e) {
    postMessage({ type: "error", message: e instanceof Error ? e.message : String(e) });
    throw e;
  }
}

async function stop(): Promise<void> {
  if (beat) clearInterval(beat);
  await loop?.stop();
  if (loop && repo) await repo.releaseClaims(loop.owner).catch(() => {});
  await db?.close().catch(() => {});
  postMessage({ type: "stopped" });
  process.exit(0);
}
