/**
 * The attempt trails of calls (drizzle/0025): written behind the call, never in its way (a
 * failed write is logged and the call's bill is unaffected), read by the activity detail.
 */
import type { Database } from "../client";
import type { TrailAttempt, TrailPort } from "../../core/chat/trail";
import { swallowed } from "../../lib/log";

export class AttemptTrailRepo implements TrailPort {
  constructor(private db: Database) {}

  keep(requestId: string, userId: string, attempts: TrailAttempt[]): void {
    this.db
      .query(
        `insert into attempt_trails (request_id, user_id, attempts) values ($1, $2, $3::jsonb)
         on conflict (request_id) do nothing`,
        [requestId, userId, JSON.stringify(attempts)],
      )
      .catch(swallowed("attempt trail"));
  }

  async of(userId: string, requestId: string): Promise<TrailAttempt[] | null> {
    const rows = await this.db.query<{ attempts: TrailAttempt[] | string }>(
      `select attempts from attempt_trails where request_id = $1 and user_id = $2`,
      [requestId, userId],
    );
    const a = rows[0]?.attempts;
    return a === undefined ? null : typeof a === "string" ? JSON.parse(a) : a;
  }
}
