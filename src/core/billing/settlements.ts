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

/** Hears how settles went: the metrics' token and cost counters, and the settle wait. */
export interface SettleMeter {
  /** A charge that landed (the ledger closed its hold now), with its usage event. */
  landed(event: UsageEvent, costMicro: bigint): void;
  /** How long one attempt waited for the ledger, in seconds. */
  waited?(seconds: number): void;
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

/**
 * One settle in flight. Before the answer, the answer waits on `answered`, let go when the
 * settle ends or at `at` (maxWaitMs), whichever is first. One object per call carries what a
 * chain of then, finally and their closures carried before (docs/decisions.md #64).
 */
class Settling {
  /** Ends once the settle landed or gave up (quiesce waits on it). */
  landed: Promise<void> = SETTLED;
  done = false;
  private resolve: (() => void) | null = null;

  constructor(
    readonly call: SettleCall,
    readonly at: number,
    readonly of: Set<Settling>,
  ) {}

  /** The promise the answer waits for. */
  answered(): Promise<void> {
    const { promise, resolve } = Promise.withResolvers<void>();
    this.resolve = resolve;
    return promise;
  }

  letGo(): void {
    if (this.done) return;
    this.done = true;
    this.resolve?.();
  }
}

const SETTLED = Promise.resolve();

/** How often the answers waiting past their bound are let go: the bound is maxWaitMs plus up to this. */
const WATCH_MS = 100;

export class Settlements {
  private byUser = new Map<string, Set<Settling>>();
  private count = 0;
  /**
   * The answers waiting, in the order they started (so by deadline): one timer for all of them
   * lets go those past `maxWaitMs`, rather than a timer, a race and an async wrapper per call.
   */
  private waits: Settling[] = [];
  private watch: ReturnType<typeof setInterval> | null = null;

  constructor(
    private ledger: Pick<Ledger, "settle">,
    private onGiveUp: (call: SettleCall, error: unknown) => void = () => {},
    private mode: SettleMode = "before_answer",
    private maxWaitMs = 5000,
    /** Told once of each charge that landed, and of each attempt's wait. */
    private meter?: SettleMeter,
  ) {}

  /**
   * Starts the settle; never throws. The promise is what the answer waits for: at once in
   * `behind_answer` mode, else until the settle landed (or gave up, or `maxWaitMs` passed).
   */
  start(call: SettleCall): Promise<void> {
    let set = this.byUser.get(call.userId);
    if (!set) this.byUser.set(call.userId, (set = new Set()));
    const behind = this.mode === "behind_answer";
    const s = new Settling(call, behind ? Infinity : performance.now() + this.maxWaitMs, set);
    set.add(s);
    this.count++;
    if (behind) {
      // Started by a timer, on a later turn of the event loop than the answer's own write (an
      // immediate ran before the server flushed the answer and delayed it by the statement's cost).
      s.landed = new Promise<void>((r) => setTimeout(r, 0)).then(() => this.run(s));
      return SETTLED;
    }
    // Before the answer, at once: the answer is waiting for it.
    const answered = s.answered();
    s.landed = this.run(s);
    this.waits.push(s);
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
      w.letGo();
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
    const sets = userId === undefined ? [...this.byUser.values()] : [this.byUser.get(userId) ?? new Set<Settling>()];
    const waiting = sets.flatMap((set) => [...set].map((s) => s.landed));
    if (waiting.length) await within(Promise.all(waiting), maxWaitMs);
  }

  /** Settles with retries, then lets the answer go and forgets the settle: never throws. */
  private async run(s: Settling): Promise<void> {
    const c = s.call;
    try {
      for (let attempt = 0; ; attempt++) {
        const started = performance.now();
        try {
          const closed = await this.ledger.settle(c.id, c.costMicro, c.tokens, c.event);
          this.meter?.waited?.((performance.now() - started) / 1000);
          if (closed && c.event) this.meter?.landed(c.event, c.costMicro);
          return;
        } catch (e) {
          const wait = RETRY_MS[attempt];
          if (wait === undefined) return this.onGiveUp(c, e);
          await new Promise((r) => setTimeout(r, wait));
        }
      }
    } finally {
      s.of.delete(s);
      this.count--;
      if (!s.of.size && this.byUser.get(c.userId) === s.of) this.byUser.delete(c.userId);
      s.letGo();
    }
  }
}
