/**
 * Cache invalidation across instances sharing one database: a change is applied to this
 * instance's caches at once, then broadcast with PostgreSQL NOTIFY; other instances LISTEN and
 * apply it (typically within milliseconds, well inside the one-second promise).
 */
import type { Database } from "./client";
import { log } from "../lib/log";

export type Invalidation =
  | { t: "key"; id: string }
  | { t: "user"; id: string }
  | { t: "settings" }
  | { t: "policy"; id: string };

const CHANNEL = "gw_invalidate";

export class InvalidationBus {
  private handlers: ((ev: Invalidation) => void)[] = [];
  private readonly origin = crypto.randomUUID();
  private unlisten: (() => Promise<void>) | null = null;

  constructor(private db: Database) {}

  on(handler: (ev: Invalidation) => void): void {
    this.handlers.push(handler);
  }

  async start(): Promise<void> {
    this.unlisten = await this.db.listen(CHANNEL, (payload) => {
      try {
        const msg = JSON.parse(payload) as Invalidation & { origin: string };
        if (msg.origin !== this.origin) this.dispatch(msg);
      } catch (e) {
        log.warn("bad invalidation payload", { payload, error: e });
      }
    });
  }

  async publish(ev: Invalidation): Promise<void> {
    this.dispatch(ev);
    await this.db.notify(CHANNEL, JSON.stringify({ ...ev, origin: this.origin })).catch((e) => log.warn("notify failed", { error: e }));
  }

  private dispatch(ev: Invalidation): void {
    for (const h of this.handlers) h(ev);
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
  }
}
