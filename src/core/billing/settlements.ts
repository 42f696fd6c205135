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

export class Settlements {
  private byUser = new Map<string, Set<Promise<void>>>();
  private count = 0;

  constructor(
    private ledger: Pick<Ledger, "settle">,
    private onGiveUp: (call: SettleCall, error: unknown) => void = () => {},
    private mode: SettleMode = "before_answer",
    private maxWaitMs = 5000,
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
    const turn = this.mode === "behind_answer" ? new Promise<void>((r) => setTimeout(r, 0)) : Promise.resolve();
    const p: Promise<void> = turn
      .then(() => this.run(call))
      .finally(() => {
        s.delete(p);
        this.count--;
        if (!s.size && this.byUser.get(call.userId) === s) this.byUser.delete(call.userId);
      });
    s.add(p);
    this.count++;
    return this.mode === "behind_answer" ? Promise.resolve() : within(p, this.maxWaitMs);
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
        await this.ledger.settle(c.id, c.costMicro, c.tokens, c.event);
        return;
      } catch (e) {
        const wait = RETRY_MS[attempt];
        if (wait === undefined) return this.onGiveUp(c, e);
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }
}
