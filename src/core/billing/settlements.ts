/**
 * Settles that finish after the client has its answer. The cost is known the moment the
 * upstream reports usage (it is pure arithmetic on the catalog's prices), so the chat service
 * sends the answer with its cost and lets the settle's database round trip run behind it
 * instead of in front of it.
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
  ) {}

  /** Settles in the background; never throws. */
  start(call: SettleCall): void {
    let set = this.byUser.get(call.userId);
    if (!set) this.byUser.set(call.userId, (set = new Set()));
    const s = set;
    // Started by a timer, on a later turn of the event loop than the answer's own write (an
    // immediate ran before the server flushed the answer and delayed it by the statement's cost).
    const p: Promise<void> = new Promise<void>((r) => setTimeout(r, 0))
      .then(() => this.run(call))
      .finally(() => {
        s.delete(p);
        this.count--;
        if (!s.size && this.byUser.get(call.userId) === s) this.byUser.delete(call.userId);
      });
    s.add(p);
    this.count++;
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
    if (!waiting.length) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const limit = new Promise<void>((r) => (timer = setTimeout(r, maxWaitMs)));
    await Promise.race([Promise.all(waiting), limit]);
    clearTimeout(timer);
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
