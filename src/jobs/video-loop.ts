/**
 * One poller: a loop that keeps up to `slots` jobs in flight, claiming more as slots free up,
 * and sleeps a tick when nothing is due. It runs inside each Bun worker (PostgreSQL) or on the
 * main thread (PGlite). Each job step is the core `advanceJob` use-case.
 */
import { advanceJob, type PollerDeps } from "../core/video/poller";

export class PollLoop {
  private running = false;
  private inflight = new Set<Promise<void>>();
  private wakeUp: (() => void) | null = null;
  /** A wake-up that came while the loop was busy: the next sleep returns at once. */
  private woken = false;
  private done: Promise<void> | null = null;
  /** Time of the last finished round (a heartbeat for the supervisor). */
  lastBeat = Date.now();

  constructor(
    private deps: PollerDeps,
    readonly owner: string,
    private slots: number,
    private tickMs: number,
    private onError: (error: unknown) => void = () => {},
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.done = this.run();
  }

  /** Runs a round now instead of at the next tick (a job was just accepted). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops claiming and waits for the jobs in flight to finish their step. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.done;
    await Promise.allSettled([...this.inflight]);
  }

  private async run(): Promise<void> {
    while (this.running) {
      let claimed = 0;
      const free = this.slots - this.inflight.size;
      if (free > 0) {
        try {
          const jobs = await this.deps.jobs.claimDue(this.owner, this.deps.claimMs, free);
          claimed = jobs.length;
          for (const job of jobs) {
            const step: Promise<void> = advanceJob(this.deps, this.owner, job)
              .catch((error) => this.onError(error))
              .finally(() => {
                this.inflight.delete(step);
                this.wake();
              });
            this.inflight.add(step);
          }
        } catch (error) {
          this.onError(error);
        }
      }
      this.lastBeat = Date.now();
      // Claimed a full batch with room left: go again at once; otherwise wait for a tick,
      // a finished job or a wake-up.
      if (this.running && (claimed === 0 || this.inflight.size >= this.slots)) await this.sleep(this.tickMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        this.woken = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }
}
