/**
 * The response cache: answers stored per API key, found again by an exact request hash or,
 * for the semantic mode, by embedding similarity within a (key, model, parameters) group.
 *
 * No foreign key to api_keys: entries live at most the cache TTL and the sweeper deletes
 * them; a deleted key's entries are never looked up again (lookups are by key id).
 */
import { sql } from "drizzle-orm";
import { bigint, index, jsonb, pgTable, real, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import type { StoredAnswer } from "../../core/cache/types";

export const responseCache = pgTable(
  "response_cache",
  {
    id: uuid("id").primaryKey().default(sql`gen_random_uuid()`),
    keyId: uuid("key_id").notNull(),
    /** SHA-256 of the normalized request (model, messages, answer-changing parameters). */
    requestHash: text("request_hash").notNull(),
    /** The requested model id, as the client sent it (after vendor-prefix normalization). */
    model: text("model").notNull(),
    /** SHA-256 of everything but the user turn: the semantic grouping. */
    paramHash: text("param_hash").notNull(),
    /** Embedding of the user turn; null for entries stored in `exact` mode or multi-turn. */
    embedding: real("embedding").array(),
    answer: jsonb("answer").$type<StoredAnswer>().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    hitCount: bigint("hit_count", { mode: "number" }).notNull().default(0),
    lastHitAt: timestamp("last_hit_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("response_cache_key_request_uq").on(t.keyId, t.requestHash),
    index("response_cache_semantic_idx").on(t.keyId, t.model, t.paramHash, t.createdAt),
    index("response_cache_expires_idx").on(t.expiresAt),
  ],
);
