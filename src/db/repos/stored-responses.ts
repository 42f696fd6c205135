/**
 * Stored Responses-API answers (RESPONSES_STORE=on). Every read is scoped to the key that made
 * the response (within its account) and skips expired rows, so another key's id, another
 * account's and an expired one look alike: unknown. Saving is one statement: the context
 * (kept once per account and content), the response and its output items land together or not
 * at all, and only while the account's live stored bytes stay within its quota.
 */
import { sha256Hex } from "../../lib/secrets";
import type { Database } from "../client";

export interface StoredChain {
  /** The input items that led to the response (references and earlier turns expanded). */
  context: unknown[];
  /** Its output items. */
  output: unknown[];
}

export interface SaveInput {
  userId: string;
  keyId: string;
  id: string;
  response: { output: { id?: string }[] } & Record<string, unknown>;
  context: unknown[];
}

/** The limits a save is held to (RESPONSES_STORE_MAX_RESPONSE_KB, RESPONSES_STORE_ACCOUNT_MB). */
export interface StoreLimits {
  /** Bytes of one response's JSON plus its context's. */
  rowBytes: number;
  /** Live stored bytes of one account (responses plus their distinct contexts). */
  accountBytes: number;
}

/** What became of a save: kept, or why nothing was. */
export type SaveOutcome = "stored" | "response_too_large" | "account_quota";

const LIVE = "expires_at > now()";

export class StoredResponseRepo {
  constructor(
    private db: Database,
    private days: number,
    private limits: StoreLimits = { rowBytes: Number.MAX_SAFE_INTEGER, accountBytes: Number.MAX_SAFE_INTEGER },
  ) {}

  /** The account's live stored bytes: its responses and the contexts they name. */
  async usedBytes(userId: string): Promise<number> {
    const rows = await this.db.query<{ b: unknown }>(
      `select (coalesce((select sum(bytes) from stored_responses where user_id = $1 and ${LIVE}), 0)
             + coalesce((select sum(bytes) from stored_response_contexts where user_id = $1 and ${LIVE}), 0))::text as b`,
      [userId],
    );
    return Number(rows[0]?.b ?? 0);
  }

  /**
   * Why a response whose context is `context` cannot be kept, known before the call: the
   * context alone is over the per-response limit, or it no longer fits in the account's quota
   * (counted whole even when already kept: an estimate, the save decides exactly). Null: try.
   */
  async refusal(userId: string, context: unknown[]): Promise<Exclude<SaveOutcome, "stored"> | null> {
    const bytes = Buffer.byteLength(JSON.stringify(context));
    if (bytes > this.limits.rowBytes) return "response_too_large";
    return (await this.usedBytes(userId)) + bytes > this.limits.accountBytes ? "account_quota" : null;
  }

  /**
   * Keeps a response. A context already kept for the account (same items, same hash) is not
   * written again, only its expiry moved; the bytes it would add count against the quota only
   * when it is new. Concurrent saves of one account may each pass the check: the quota is
   * exceeded by at most one response per call in flight.
   */
  async save(s: SaveInput): Promise<SaveOutcome> {
    const response = JSON.stringify(s.response);
    const context = JSON.stringify(s.context);
    const responseBytes = Buffer.byteLength(response);
    const contextBytes = Buffer.byteLength(context);
    if (responseBytes + contextBytes > this.limits.rowBytes) return "response_too_large";
    const rows = await this.db.query<{ stored: number }>(
      `with known as (
         select 1 from stored_response_contexts where user_id = $1 and hash = $5 and ${LIVE}),
       fits as (
         select 1 where (select coalesce(sum(bytes), 0) from stored_responses where user_id = $1 and ${LIVE})
                      + (select coalesce(sum(bytes), 0) from stored_response_contexts where user_id = $1 and ${LIVE})
                      + $7::bigint + case when exists (select 1 from known) then 0 else $8::bigint end
                     <= $9::bigint),
       c as (
         insert into stored_response_contexts (user_id, hash, context, bytes, expires_at)
         select $1, $5, $4::jsonb, $8::int, now() + make_interval(days => $6) from fits
         on conflict (user_id, hash) do update set expires_at = greatest(stored_response_contexts.expires_at, excluded.expires_at)
         returning hash),
       r as (
         insert into stored_responses (user_id, id, key_id, response, context_hash, bytes, expires_at)
         select $1, $2, $10::uuid, $3::jsonb, c.hash, $7::int, now() + make_interval(days => $6) from c
         on conflict do nothing returning user_id, id),
       i as (
         insert into stored_response_items (user_id, id, response_id, item)
         select r.user_id, x->>'id', r.id, x from r, jsonb_array_elements($3::jsonb->'output') x
          where x->>'id' is not null
         on conflict do nothing)
       select (select count(*) from fits)::int as stored`,
      [
        s.userId,
        s.id,
        response,
        context,
        sha256Hex(context),
        this.days,
        responseBytes,
        contextBytes,
        this.limits.accountBytes,
        s.keyId,
      ],
    );
    return rows[0]?.stored ? "stored" : "account_quota";
  }

  /** The response object as answered; null when unknown, expired or another account's. */
  async get(userId: string, keyId: string, id: string): Promise<Record<string, unknown> | null> {
    const rows = await this.db.query<{ response: unknown }>(
      `select response from stored_responses where user_id = $1 and id = $2 and key_id = $3 and ${LIVE}`,
      [userId, id, keyId],
    );
    return rows[0] ? (json(rows[0].response) as Record<string, unknown>) : null;
  }

  /** What a `previous_response_id` continues from; null when unknown. */
  async chain(userId: string, keyId: string, id: string): Promise<StoredChain | null> {
    const rows = await this.db.query<{ context: unknown; output: unknown }>(
      `select c.context, r.response->'output' as output
         from stored_responses r
         join stored_response_contexts c on c.user_id = r.user_id and c.hash = r.context_hash
        where r.user_id = $1 and r.id = $2 and r.key_id = $3 and r.${LIVE}`,
      [userId, id, keyId],
    );
    const r = rows[0];
    return r ? { context: json(r.context) as unknown[], output: (json(r.output) as unknown[] | null) ?? [] } : null;
  }

  /** Output items by id (those found: unknown ids are simply missing from the map). */
  async items(userId: string, keyId: string, ids: string[]): Promise<Map<string, unknown>> {
    if (!ids.length) return new Map();
    const rows = await this.db.query<{ id: string; item: unknown }>(
      `select i.id, i.item from stored_response_items i
         join stored_responses r on r.user_id = i.user_id and r.id = i.response_id
        where i.user_id = $1 and i.id = any($2::text[]) and r.key_id = $3 and r.${LIVE}`,
      [userId, ids, keyId],
    );
    return new Map(rows.map((r) => [r.id, json(r.item)]));
  }

  /**
   * Deletes one response (its items go with it) and its context when no other response of the
   * account names it; false when there was none to delete.
   */
  async delete(userId: string, keyId: string, id: string): Promise<boolean> {
    const rows = await this.db.query<{ id: string }>(
      `with d as (
         delete from stored_responses where user_id = $1 and id = $2 and key_id = $3 and ${LIVE}
         returning id, context_hash),
       c as (
         delete from stored_response_contexts c using d
          where c.user_id = $1 and c.hash = d.context_hash
            and not exists (select 1 from stored_responses r
                             where r.user_id = $1 and r.context_hash = d.context_hash and r.id <> d.id))
       select id from d`,
      [userId, id, keyId],
    );
    return rows.length > 0;
  }

  /** Deletes expired responses and contexts (a context outlives every response naming it). */
  async purgeExpired(batch = 1000): Promise<number> {
    const rows = await this.db.query<{ id: string }>(
      `delete from stored_responses where (user_id, id) in (
         select user_id, id from stored_responses where expires_at <= now() limit $1)
       returning id`,
      [batch],
    );
    const contexts = await this.db.query<{ hash: string }>(
      `delete from stored_response_contexts where (user_id, hash) in (
         select user_id, hash from stored_response_contexts where expires_at <= now() limit $1)
       returning hash`,
      [batch],
    );
    return rows.length + contexts.length;
  }
}

/** postgres.js parses jsonb; a driver that hands back text gets it parsed here. */
function json(v: unknown): unknown {
  return typeof v === "string" ? JSON.parse(v) : v;
}
