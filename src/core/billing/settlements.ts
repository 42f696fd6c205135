/**
 * The settles of answered calls, retried for about a minute on database errors. `LEDGER_SETTLE`
 * says whether the answer's last bytes wait for the settle (`before_answer`, the default: a
 * killed process has charged every answered call) or leave before it (`behind_answer`). The
 * wait is bounded (`maxWaitMs`): a database outage delays an answer, never withholds it.
 * Readers see their own charges (`quiesce`). Invariants and modes: docs/ledger.md.
 */
import type { Ledger, UsageEvent } from "./ledger";

/** Waits between attempts (ms): about a minute in all. */
const RETRY_MS = [50, 200, 500, 1000, 2000, 4000, 8000, 15_000, 30_000];

export type SettleMode = "before_answer" | "behind_answer";

/** Sees a charge that landed, with its usage event (the metrics' token and cost counters). */
export type SettleMeter = (event: UsageEvent, costMicro: bigint) => void;

function letGo(w: Wait): void {
  if (w.done) return;
  w.done = true;
  w.resolve?.();
}

/** Resolves when `p` settles or after `ms`, whichever is first. */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<void>((r) => (timer = setTimeout(r, ms)));
  await Promise.race([p, limit]);
  clearTimeout(timer);
}

export interface SettleCall {
  id: string;
  userId: string;
  costMicro: bigint;
  tokens: number;
  event: UsageEvent | null;
}

/** An answer waiting for its settle (before_answer): let go when the settle ends or at `at`. */
interface Wait {
  at: number;
  resolve?: () => void;
  done: boolean;
}

/** How often the answers waiting past their bound are let go: the bound is maxWaitMs plus up to this. */
const WATCH_MS = 100;

export class Settlements {
  private byUser = new Map<string, Set<Promise<void>>>();
  private count = 0;
  /**
   * The answers waiting, in the order they started (so by deadline): one timer for all of them
   * lets go those past `maxWaitMs`, rather than a timer, a race and an async wrapper per call.
   */
  private waits: Wait[] = [];
  private watch: ReturnType<typeof setInterval> | null = null;

  constructor(
    private ledger: Pick<Ledger, "settle">,
    private onGiveUp: (call: SettleCall, error: unknown) => void = () => {},
    private mode: SettleMode = "before_answer",
    private maxWaitMs = 5000,
    /** Told once of each charge that landed (the ledger closed its hold now), for the token and cost counters. */
    private meter?: SettleMeter,
  ) {}

  /**
   * Starts the settle; never throws. The promise is what the answer waits for: at once in
   * `behind_answer` mode, else until the settle landed (or gave up, or `maxWaitMs` passed).
   */
  start(call: SettleCall): Promise<void> {
    let set = this.byUser.get(call.userId);
    if (!set) this.byUser.set(call.userId, (set = new Set()));
    const s = set;
    // Behind the answer, started by a timer, on a later turn of the event loop than the
    // answer's own write (an immediate ran before the server flushed the answer and delayed it
    // by the statement's cost). Before the answer, at once: the answer is waiting for it.
    const behind = this.mode === "behind_answer";
    const turn = behind ? new Promise<void>((r) => setTimeout(r, 0)) : Promise.resolve();
    const wait: Wait | null = behind ? null : { at: performance.now() + this.maxWaitMs, done: false };
    const p: Promise<void> = turn
      .then(() => this.run(call))
      .finally(() => {
        s.delete(p);
        this.count--;
        if (!s.size && this.byUser.get(call.userId) === s) this.byUser.delete(call.userId);
        if (wait) letGo(wait);
      });
    s.add(p);
    this.count++;
    if (!wait) return Promise.resolve();
    const answered = new Promise<void>((r) => (wait.resolve = r));
    this.waits.push(wait);
    if (!this.watch) {
      this.watch = setInterval(() => this.letGoOverdue(), WATCH_MS);
      this.watch.unref?.(); // the waiting answers' own connections keep the process up
    }
    return answered;
  }

  /** Lets go the answers whose settle outlasted `maxWaitMs`; stops watching when none waits. */
  private letGoOverdue(): void {
    const now = performance.now();
    let i = 0;
    for (; i < this.waits.length; i++) {
      const w = this.waits[i]!;
      if (!w.done && w.at > now) break;
      letGo(w);
    }
    if (i) this.waits.splice(0, i);
    if (!this.waits.length && this.watch) {
      clearInterval(this.watch);
      this.watch = null;
    }
  }

  /** Settles in flight (all accounts). */
  get pending(): number {
    return this.count;
  }

  /** Whether the account has settles in flight on this instance. */
  pendingFor(userId: string): boolean {
    return this.byUser.has(userId);
  }

  /**
   * Resolves when the settles in flight now (of one account, or all) have landed or given up,
   * or after `maxWaitMs`, whichever is first: a database outage must not hang a reader.
   */
  async quiesce(userId?: string, maxWaitMs = 2000): Promise<void> {
    const waiting =
      userId === undefined ? [...this.byUser.values()].flatMap((s) => [...s]) : [...(this.byUser.get(userId) ?? [])];
    if (waiting.length) await within(Promise.all(waiting), maxWaitMs);
  }

  private async run(c: SettleCall): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const closed = await this.ledger.settle(c.id, c.costMicro, c.tokens, c.event);
        if (closed && c.event) this.meter?.(c.event, c.costMicro);
        return;
      } catch (e) {
        const wait = RETRY_MS[attempt];
        if (wait === undefined) return this.onGiveUp(c, e);
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }
}
