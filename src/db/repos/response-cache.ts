/**
 * Storage for the response cache (the `ResponseCacheStore` port). Raw SQL: every call is one
 * round trip on the request path. Expiry is judged by the database clock, so instances with
 * skewed clocks agree on what is live.
 */
import type { Database } from "../client";
import type { NewCacheEntry, ResponseCacheStore, StoredAnswer, StoredHit } from "../../core/cache/types";

interface HitRow {
  answer: StoredAnswer | string;
  created_at: Date | string;
}

export class ResponseCacheRepo implements ResponseCacheStore {
  constructor(private db: Database) {}

  async takeExact(keyId: string, requestHash: string): Promise<StoredHit | null> {
    const rows = await this.db.query<HitRow>(
      `update response_cache set hit_count = hit_count + 1, last_hit_at = now()
        where key_id = $1 and request_hash = $2 and expires_at > now()
        returning answer, created_at`,
      [keyId, requestHash],
    );
    return toHit(rows[0]);
  }

  async recentEmbeddings(
    keyId: string,
    model: string,
    paramHash: string,
    limit: number,
  ): Promise<{ id: string; embedding: number[] }[]> {
    // Walks response_cache_semantic_idx backwards from the newest entry of the group.
    const rows = await this.db.query<{ id: string; embedding: number[] | string }>(
      `select id, embedding from response_cache
        where key_id = $1 and model = $2 and param_hash = $3 and expires_at > now() and embedding is not null
        order by created_at desc limit $4`,
      [keyId, model, paramHash, limit],
    );
    return rows.map((r) => ({ id: r.id, embedding: parseRealArray(r.embedding) }));
  }

  async takeById(id: string): Promise<StoredHit | null> {
    const rows = await this.db.query<HitRow>(
      `update response_cache set hit_count = hit_count + 1, last_hit_at = now()
        where id = $1 and expires_at > now()
        returning answer, created_at`,
      [id],
    );
    return toHit(rows[0]);
  }

  async put(e: NewCacheEntry): Promise<void> {
    // One entry per (key, request): a newer answer replaces the old one and restarts its TTL.
    await this.db.query(
      `insert into response_cache (key_id, request_hash, model, param_hash, embedding, answer, expires_at)
       values ($1, $2, $3, $4, $5::real[], $6::jsonb, now() + make_interval(secs => $7))
       on conflict (key_id, request_hash) do update set
         model = excluded.model, param_hash = excluded.param_hash, embedding = excluded.embedding,
         answer = excluded.answer, created_at = now(), expires_at = excluded.expires_at,
         hit_count = 0, last_hit_at = null`,
      [
        e.keyId,
        e.requestHash,
        e.model,
        e.paramHash,
        e.embedding ? toRealArrayLiteral(e.embedding) : null,
        JSON.stringify(e.answer),
        e.ttlSeconds,
      ],
    );
  }

  async purgeExpired(batch: number): Promise<number> {
    const rows = await this.db.query<{ id: string }>(
      `delete from response_cache where id in (
         select id from response_cache where expires_at <= now() limit $1)
       returning id`,
      [batch],
    );
    return rows.length;
  }
}

function toHit(r: HitRow | undefined): StoredHit | null {
  if (!r) return null;
  const answer = (typeof r.answer === "string" ? JSON.parse(r.answer) : r.answer) as StoredAnswer;
  return { answer, createdAt: new Date(r.created_at) };
}

/**
 * A Postgres array literal: both drivers take it as text and the `::real[]` cast parses it,
 * which sidesteps their different JS-array serializations.
 */
function toRealArrayLiteral(v: number[]): string {
  return "{" + v.join(",") + "}";
}

/** postgres.js and PGlite return real[] as number[]; the text form is tolerated anyway. */
function parseRealArray(v: number[] | string): number[] {
  if (Array.isArray(v)) return v.map(Number);
  return v
    .replace(/^\{|\}$/g, "")
    .split(",")
    .filter(Boolean)
    .map(Number);
}
