/**
 * Stored Responses-API answers (RESPONSES_STORE=on). Every read is scoped to the account and
 * skips expired rows, so another account's id and an expired one look alike: unknown. Saving
 * is one statement (the response and its output items land together or not at all).
 */
import type { Database } from "../client";

export interface StoredChain {
  /** The input items that led to the response (references and earlier turns expanded). */
  context: unknown[];
  /** Its output items. */
  output: unknown[];
}

export interface SaveInput {
  userId: string;
  id: string;
  response: { output: { id?: string }[] } & Record<string, unknown>;
  context: unknown[];
}

const LIVE = "expires_at > now()";

export class StoredResponseRepo {
  constructor(
    private db: Database,
    private days: number,
  ) {}

  async save(s: SaveInput): Promise<void> {
    await this.db.query(
      `with r as (
         insert into stored_responses (user_id, id, response, context, expires_at)
         values ($1, $2, $3::jsonb, $4::jsonb, now() + make_interval(days => $5))
         on conflict do nothing returning user_id, id)
       insert into stored_response_items (user_id, id, response_id, item)
       select r.user_id, x->>'id', r.id, x from r, jsonb_array_elements($3::jsonb->'output') x
        where x->>'id' is not null
       on conflict do nothing`,
      [s.userId, s.id, JSON.stringify(s.response), JSON.stringify(s.context), this.days],
    );
  }

  /** The response object as answered; null when unknown, expired or another account's. */
  async get(userId: string, id: string): Promise<Record<string, unknown> | null> {
    const rows = await this.db.query<{ response: unknown }>(
      `select response from stored_responses where user_id = $1 and id = $2 and ${LIVE}`,
      [userId, id],
    );
    return rows[0] ? (json(rows[0].response) as Record<string, unknown>) : null;
  }

  /** What a `previous_response_id` continues from; null when unknown. */
  async chain(userId: string, id: string): Promise<StoredChain | null> {
    const rows = await this.db.query<{ context: unknown; output: unknown }>(
      `select context, response->'output' as output from stored_responses where user_id = $1 and id = $2 and ${LIVE}`,
      [userId, id],
    );
    const r = rows[0];
    return r ? { context: json(r.context) as unknown[], output: (json(r.output) as unknown[] | null) ?? [] } : null;
  }

  /** Output items by id (those found: unknown ids are simply missing from the map). */
  async items(userId: string, ids: string[]): Promise<Map<string, unknown>> {
    if (!ids.length) return new Map();
    const rows = await this.db.query<{ id: string; item: unknown }>(
      `select i.id, i.item from stored_response_items i
         join stored_responses r on r.user_id = i.user_id and r.id = i.response_id
        where i.user_id = $1 and i.id = any($2::text[]) and r.${LIVE}`,
      [userId, ids],
    );
    return new Map(rows.map((r) => [r.id, json(r.item)]));
  }

  /** Deletes one response (its items go with it); false when there was none to delete. */
  async delete(userId: string, id: string): Promise<boolean> {
    const rows = await this.db.query<{ id: string }>(
      `delete from stored_responses where user_id = $1 and id = $2 and ${LIVE} returning id`,
      [userId, id],
    );
    return rows.length > 0;
  }

  async purgeExpired(batch = 1000): Promise<number> {
    const rows = await this.db.query<{ id: string }>(
      `delete from stored_responses where (user_id, id) in (
         select user_id, id from stored_responses where expires_at <= now() limit $1)
       returning id`,
      [batch],
    );
    return rows.length;
  }
}

/** postgres.js parses jsonb; a driver that hands back text gets it parsed here. */
function json(v: unknown): unknown {
  return typeof v === "string" ? JSON.parse(v) : v;
}
