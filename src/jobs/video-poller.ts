/**
 * The video poller pool and its supervisor.
 *
 * - PostgreSQL (a database URL is known): `size` Bun workers, each with its own connection
 *   and a `PollLoop` of a few slots. The main thread supervises them: a worker that errors,
 *   exits or stops beating is terminated and restarted with a backoff, under a new claim
 *   owner id (its old claims simply expire, and another poller takes those jobs over).
 * - PGlite (or an open PostgreSQL handle without a URL): the same loop runs inline on the
 *   main thread, since PGlite cannot be shared with another thread.
 * - `size` 0: this instance does not poll (another one does).
 *
 * Either way the housekeeping sweep (expired files, old Idempotency-Keys) runs on
 * a timer on the main thread. `stop()` stops the loops, waits for the steps in flight and
 * releases every claim this instance holds, so another instance resumes those jobs at once.
 */
import { pollOnce, sweepVideo, type PollerDeps, type SweepResult } from "../core/video/poller";
import { IDEMPOTENCY_WINDOW_MS } from "../core/video/service";
import type { UsageEvent } from "../core/billing/ledger";
import type { VideoObserver } from "../core/video/ports";
import type { Database } from "../db/client";
import type { VideoJobRepo } from "../db/repos/video-jobs";
import { log } from "../lib/log";
import type { ObjectStorage } from "../lib/storage";
import { PollLoop } from "./video-loop";
import type { WorkerStart } from "./video-poller.worker";
import { pollerRuntime, type VideoRuntimeConfig } from "./video-runtime";

/** Jobs one poller (worker or inline loop) keeps in flight. */
const SLOTS_PER_POLLER = 4;
const STOP_GRACE_MS = 5000;
const MAX_RESTART_DELAY_MS = 30_000;

export interface VideoPoolOptions {
  /** The main thread's database (inline polling, sweeping, claim release on stop). */
  db: Database;
  /** PostgreSQL URL for workers; without it the loop runs inline. */
  dbUrl?: string;
  /** Workers (PostgreSQL) or inline loops' worth of slots (PGlite); 0 = no polling here. */
  size: number;
  runtime: VideoRuntimeConfig;
  storage: ObjectStorage;
  sweepIntervalMs: number;
  logLevel?: string;
  /** Sees the pollers' upstream exchanges and settled jobs, from every worker (metrics). */
  observe?: VideoObserver;
}

export interface WorkerStatus {
  index: number;
  owner: string;
  restarts: number;
  alive: boolean;
}

type WorkerMessage =
  | { type: "beat"; at?: number }
  | { type: "started" | "stopped" }
  | { type: "error"; message?: string }
  | { type: "upstream"; providerId: string; step: "submit" | "poll" | "download"; outcome: string; ms: number }
  | { type: "settled"; event: UsageEvent; costMicro: bigint }
  | { type: "job"; family: string; state: string };

interface Slot {
  index: number;
  generation: number;
  restarts: number;
  worker: Worker | null;
  owner: string;
  alive: boolean;
  lastBeat: number;
  restartTimer: ReturnType<typeof setTimeout> | null;
  stopped: Promise<void> | null;
}

export class VideoPollerPool {
  readonly mode: "workers" | "inline" | "off";
  readonly instanceId = crypto.randomUUID().slice(0, 8);
  readonly deps: PollerDeps;
  readonly repo: VideoJobRepo;
  private inline: PollLoop | null = null;
  private slots: Slot[] = [];
  private owners = new Set<string>();
  private sweeper: ReturnType<typeof setInterval> | null = null;
  private watchdog: ReturnType<typeof setInterval> | null = null;
  private stopping = false;
  private tickMs: number;

  constructor(private options: VideoPoolOptions) {
    const rt = pollerRuntime(options.db, options.runtime, { storage: options.storage, observe: options.observe });
    this.deps = rt.deps;
    this.repo = rt.repo;
    this.mode = options.size <= 0 ? "off" : options.dbUrl && options.db.kind === "postgres" ? "workers" : "inline";
    // Idle polling interval: fine enough for the first poll delay, never busier than 20/s.
    this.tickMs = Math.max(50, Math.min(1000, Math.floor(options.runtime.pollInitialMs / 2)));
  }

  start(): void {
    if (this.mode === "inline") {
      const owner = `${this.instanceId}/inline`;
      this.owners.add(owner);
      this.inline = new PollLoop(this.deps, owner, this.options.size * SLOTS_PER_POLLER, this.tickMs, (error) =>
        log.warn("video poll step failed", { error }),
      );
      this.inline.start();
    } else if (this.mode === "workers") {
      for (let i = 0; i < this.options.size; i++) {
        const slot: Slot = {
          index: i,
          generation: 0,
          restarts: 0,
          worker: null,
          owner: "",
          alive: false,
          lastBeat: Date.now(),
          restartTimer: null,
          stopped: null,
        };
        this.slots.push(slot);
        this.spawn(slot);
      }
      const stale = Math.max(60_000, this.options.runtime.claimMs);
      this.watchdog = setInterval(() => {
        for (const slot of this.slots) {
          if (slot.alive && Date.now() - slot.lastBeat > stale) {
            log.warn("video worker stopped beating; restarting it", { owner: slot.owner });
            this.crashed(slot);
          }
        }
      }, 10_000);
      this.watchdog.unref?.();
    }
    this.sweeper = setInterval(() => {
      this.sweep().catch((error) => log.warn("video sweep failed", { error }));
    }, this.options.sweepIntervalMs);
    this.sweeper.unref?.();
  }

  /** A job was accepted: poll soon rather than at the next tick. */
  wake(): void {
    this.inline?.wake();
    for (const s of this.slots) if (s.alive) s.worker?.postMessage({ type: "wake" });
  }

  /** One deterministic round on the main thread (tests, tools): claims up to `limit` due jobs. */
  pollOnce(limit = 50, owner = `${this.instanceId}/manual`): Promise<number> {
    return pollOnce(this.deps, owner, limit);
  }

  sweep(): Promise<SweepResult> {
    return sweepVideo({ jobs: this.repo, content: this.deps.content, log: this.deps.log }, IDEMPOTENCY_WINDOW_MS);
  }

  status(): { mode: VideoPollerPool["mode"]; workers: WorkerStatus[] } {
    return {
      mode: this.mode,
      workers: this.slots.map((slot) => ({
        index: slot.index,
        owner: slot.owner,
        restarts: slot.restarts,
        alive: slot.alive,
      })),
    };
  }

  /** Kills a worker without letting it clean up, as a crash would (supervision tests). */
  killWorker(index: number): void {
    const slot = this.slots[index];
    if (slot?.worker) slot.worker.terminate();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.sweeper) clearInterval(this.sweeper);
    if (this.watchdog) clearInterval(this.watchdog);
    await this.inline?.stop();
    await Promise.all(this.slots.map((slot) => this.stopWorker(slot)));
    // Whatever a worker could not release itself (it was killed, or timed out) is released here.
    for (const owner of this.owners) await this.repo.releaseClaims(owner).catch(() => {});
  }

  private spawn(slot: Slot): void {
    slot.generation++;
    slot.owner = `${this.instanceId}/w${slot.index}.${slot.generation}`;
    this.owners.add(slot.owner);
    const worker = new Worker(pollerEntry().href);
    slot.worker = worker;
    slot.alive = true;
    slot.lastBeat = Date.now();
    let stoppedResolve: () => void = () => {};
    slot.stopped = new Promise((r) => (stoppedResolve = r));
    worker.addEventListener("message", (ev: MessageEvent) => {
      const message = ev.data as WorkerMessage;
      // A beat carries the loop's last round, so a loop stuck on an await counts as hung too.
      if (message.type === "beat") slot.lastBeat = message.at ?? Date.now();
      else if (message.type === "upstream")
        this.options.observe?.upstream(message.providerId, message.step, message.outcome, message.ms);
      else if (message.type === "settled") this.options.observe?.settled(message.event, message.costMicro);
      else if (message.type === "job") this.options.observe?.job(message.family, message.state);
      else if (message.type === "started") slot.lastBeat = Date.now();
      else if (message.type === "error")
        log.warn("video worker failed to start", { owner: slot.owner, message: message.message });
    });
    worker.addEventListener("error", (ev) => {
      log.warn("video worker error", { owner: slot.owner, message: (ev as ErrorEvent).message });
      if (slot.worker === worker) this.crashed(slot);
    });
    worker.addEventListener("close", () => {
      stoppedResolve();
      if (slot.worker === worker && !this.stopping) this.crashed(slot);
    });
    const start: WorkerStart = {
      type: "start",
      dbUrl: this.options.dbUrl!,
      owner: slot.owner,
      slots: SLOTS_PER_POLLER,
      tickMs: this.tickMs,
      runtime: this.options.runtime,
      logLevel: this.options.logLevel ?? process.env.LOG_LEVEL ?? "info",
    };
    worker.postMessage(start);
  }

  /** A worker died or hung: terminate it and start a new one after a backoff. */
  private crashed(slot: Slot): void {
    if (this.stopping || !slot.alive) return;
    slot.alive = false;
    const old = slot.worker;
    slot.worker = null;
    old?.terminate();
    slot.restarts++;
    const delay = Math.min(MAX_RESTART_DELAY_MS, 250 * 2 ** Math.min(7, slot.restarts - 1));
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = null;
      if (!this.stopping) this.spawn(slot);
    }, delay);
  }

  private async stopWorker(slot: Slot): Promise<void> {
    if (slot.restartTimer) clearTimeout(slot.restartTimer);
    const worker = slot.worker;
    if (!worker || !slot.alive) return;
    slot.alive = false;
    worker.postMessage({ type: "stop" });
    const timedOut = await Promise.race([slot.stopped!.then(() => false), Bun.sleep(STOP_GRACE_MS).then(() => true)]);
    if (timedOut) worker.terminate();
  }
}

/**
 * The worker entry: next to this file when run from source; inside the single binary the
 * entry points keep their path under src/ (`/$bunfs/root/jobs/...`), while this module is
 * bundled into the main entry at the root.
 */
function pollerEntry(): URL {
  return Bun.isStandaloneExecutable
    ? new URL("./jobs/video-poller.worker.ts", import.meta.url)
    : new URL("./video-poller.worker.ts", import.meta.url);
}
