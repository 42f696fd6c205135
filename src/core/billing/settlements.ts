/**
 * The settles of answered calls. The cost is known the moment the upstream reports usage (it
 * is pure arithmetic on the catalog's prices). Two modes (`LEDGER_SETTLE`):
 * - `before_answer` (default): the answer's last bytes wait until its settle has landed, so a
 *   process killed at any moment has charged every call whose answer a client received whole
 *   (a `kill -9` between the answer and a settle behind it left that call free);
 * - `behind_answer`: the answer leaves with its cost and the settle's round trip runs behind
 *   it (lower latency; a crash loses the charges of the last few answered calls).
 * The wait is bounded (`maxWaitMs`): a database outage delays an answer, never withholds it;
 * the settle goes on retrying behind it.
 *
 * What keeps this exact:
 * - the settle is the same single atomic statement as before, and it closes the hold at most
 *   once, so a retry can never charge twice;
 * - until it lands, the call's hold (the expected maximum) still counts against the balance
 *   and every budget, so a following call can never spend money the previous one used;
 * - a settle that fails on a database error is retried with backoff (before, such a call
 *   was answered with an error and left uncharged); only after every retry failed is the
 *   hold left to the sweeper, which releases it;
 * - readers see their own charges: the account's dashboard endpoints wait for the account's
 *   settles in flight on this instance (`quiesce`), and shutdown waits for all of them.
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
    const waiting = userId === undefined ? [...this.byUser.values()].flatMap((s) => [...s]) : [...(this.byUser.get(userId) ?? [])];
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
