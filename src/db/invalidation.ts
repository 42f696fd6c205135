/**
 * Cache invalidation across instances sharing one database: a change is applied to this
 * instance's caches at once, then broadcast with PostgreSQL NOTIFY; other instances LISTEN and
 * apply it (typically within milliseconds, well inside the one-second promise).
 *
 * A LISTEN lives on one connection. When that connection is lost, postgres.js re-listens, but
 * a re-listen that fails (the database still unreachable) is dropped silently and the
 * instance would never hear another invalidation. So the bus pings itself through the
 * database every few seconds and subscribes anew when its own pings stop arriving; and
 * whenever a subscription is re-established, everything cached is dropped (`{ t: "all" }`),
 * since invalidations sent meanwhile were missed.
 */
import type { Database } from "./client";
import { log } from "../lib/log";

export type Invalidation =
  | { t: "key"; id: string }
  | { t: "user"; id: string }
  | { t: "settings" }
  | { t: "policy"; id: string }
  /** Give back the account's leased credit room (a hold elsewhere was refused for want of it). */
  | { t: "leases"; id: string }
  /** Drop everything cached: invalidations may have been missed (the LISTEN was down). */
  | { t: "all" };

const CHANNEL = "gw_invalidate";

export class InvalidationBus {
  private handlers: ((ev: Invalidation) => void)[] = [];
  private readonly origin = crypto.randomUUID();
  private unlisten: (() => Promise<void>) | null = null;
  private watchdog: ReturnType<typeof setInterval> | null = null;
  private lastPing = 0;
  private listens = 0;
  private resubscribing = false;

  constructor(
    private db: Database,
    /** How often the bus checks its own subscription (PostgreSQL only). */
    private pingMs = 2000,
  ) {}

  on(handler: (ev: Invalidation) => void): void {
    this.handlers.push(handler);
  }

  async start(): Promise<void> {
    await this.subscribe();
    this.lastPing = Date.now();
    // PGlite is in-process: its subscription cannot be lost.
    if (this.db.kind !== "postgres") return;
    this.watchdog = setInterval(() => void this.check(), this.pingMs);
    this.watchdog.unref?.();
  }

  private async subscribe(): Promise<void> {
    this.unlisten = await this.db.listen(
      CHANNEL,
      (payload) => {
        try {
          const msg = JSON.parse(payload) as (Invalidation | { t: "ping" }) & { origin: string };
          if (msg.t === "ping") {
            if (msg.origin === this.origin) this.lastPing = Date.now();
          } else if (msg.origin !== this.origin) this.dispatch(msg);
        } catch (e) {
          log.warn("bad invalidation payload", { payload, error: e });
        }
      },
      () => {
        // The first call is the subscription itself; any later one is a reconnect.
        if (this.listens++ > 0) this.resync();
      },
    );
  }

  private resync(): void {
    this.lastPing = Date.now();
    log.info("invalidation bus listening again; caches dropped");
    this.dispatch({ t: "all" });
  }

  /** Pings itself; subscribes anew when its pings have stopped arriving. */
  private async check(): Promise<void> {
    if (this.resubscribing) return;
    if (Date.now() - this.lastPing > this.pingMs * 3) {
      this.resubscribing = true;
      try {
        await this.unlisten?.();
        this.listens = 0;
        await this.subscribe();
        this.resync();
      } catch {
        // Still unreachable: the next check tries again.
      } finally {
        this.resubscribing = false;
      }
      return;
    }
    await this.db.notify(CHANNEL, JSON.stringify({ t: "ping", origin: this.origin })).catch(() => {});
  }

  async publish(ev: Invalidation): Promise<void> {
    this.dispatch(ev);
    await this.db
      .notify(CHANNEL, JSON.stringify({ ...ev, origin: this.origin }))
      .catch((e) => log.warn("notify failed", { error: e }));
  }

  private dispatch(ev: Invalidation): void {
    for (const h of this.handlers) h(ev);
  }

  async stop(): Promise<void> {
    if (this.watchdog) clearInterval(this.watchdog);
    await this.unlisten?.();
  }
}
