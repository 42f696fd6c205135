/**
 * Operator settings, persisted in the database and cached in memory. Every instance
 * refreshes within 5 seconds (operator contract): at once through the invalidation bus, and
 * by a periodic reload as a safety net.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../client";
import { settings } from "../schema";

export const SETTING_DEFAULTS = {
  "routing.policies_enabled": true,
  "routing.orchestrators_enabled": false,
} as const satisfies Record<string, boolean>;

export type SettingsObject = Record<string, unknown> & { [K in keyof typeof SETTING_DEFAULTS]: boolean };

export class SettingsStore {
  private current: SettingsObject = { ...SETTING_DEFAULTS };
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private db: Database) {}

  async load(): Promise<SettingsObject> {
    const rows = await this.db.orm.select().from(settings);
    const next: Record<string, unknown> = { ...SETTING_DEFAULTS };
    for (const r of rows) next[r.key] = r.value;
    this.current = next as SettingsObject;
    return this.current;
  }

  get(): SettingsObject {
    return this.current;
  }

  async patch(values: Record<string, unknown>): Promise<SettingsObject> {
    for (const [key, value] of Object.entries(values)) {
      await this.db.orm
        .insert(settings)
        .values({ key, value })
        .onConflictDoUpdate({ target: settings.key, set: { value, updatedAt: sql`now()` } });
    }
    return this.load();
  }

  startRefresh(intervalMs = 5000): void {
    this.timer = setInterval(() => this.load().catch(() => {}), intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
