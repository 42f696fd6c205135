/**
 * Keeps the holds of calls still running from expiring.
 *
 * The sweeper (of any instance) releases a hold past its expiry, taking it for the hold of a
 * request that died. A stream may outlive HOLD_TTL_SECONDS; its charge then found the hold
 * released and moved nothing, so the answer was delivered but never paid. Now a call is kept
 * from the moment its hold is placed until its settle or release starts: every third of the TTL
 * the expiry of every kept hold is moved to now + TTL, in one ledger statement for all of them
 * (gw_renew_holds), and this instance's sweeper renews before it sweeps. A process that dies
 * stops renewing, so its calls' holds expire and are swept as before.
 *
 * A call the process lost track of (its stream's reader failed before settling) would be kept
 * forever; it is let go after MAX_KEEP_MS, so its hold is swept in the end.
 */
import type { Ledger } from "./ledger";

/** The longest a call keeps its hold alive (HOLD_TTL_SECONDS' own maximum). */
export const MAX_KEEP_MS = 24 * 3600 * 1000;

export class HoldKeeper {
  /** Kept call ids → when they were first kept (ms since the epoch). */
  private live = new Map<string, number>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly everyMs: number;

  constructor(
    private ledger: Pick<Ledger, "renew">,
    private ttlSeconds: number,
    private onError: (e: unknown) => void = () => {},
    everyMs?: number,
  ) {
    this.everyMs = everyMs ?? Math.max(1000, Math.floor((ttlSeconds * 1000) / 3));
  }

  /** Keeps `id`'s hold alive until `drop(id)` (or MAX_KEEP_MS). */
  keep(id: string): void {
    if (!this.ledger.renew) return;
    this.live.set(id, Date.now());
    if (!this.timer) {
      this.timer = setInterval(() => void this.renewNow().catch(this.onError), this.everyMs);
      this.timer.unref?.();
    }
  }

  /** The call's settle or release started: its hold no longer needs renewing. */
  drop(id: string): void {
    if (!this.live.delete(id) || this.live.size || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Calls kept now. */
  get size(): number {
    return this.live.size;
  }

  /** Renews every kept hold now (the timer's work; the sweeper calls it before it sweeps). */
  async renewNow(): Promise<void> {
    const now = Date.now();
    const ids: string[] = [];
    for (const [id, since] of this.live) {
      if (now - since > MAX_KEEP_MS) this.drop(id);
      else ids.push(id);
    }
    if (ids.length) await this.ledger.renew!(ids, this.ttlSeconds);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.live.clear();
  }
}
