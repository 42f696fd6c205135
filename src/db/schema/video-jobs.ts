/**
 * Video jobs and their Idempotency-Key records.
 *
 * A job row is also the poll queue: `next_poll_at` says when it is due and a claim
 * (`claim_owner`, `claim_until`) says which poller holds it, so pollers on several threads and
 * instances claim rows with `FOR UPDATE SKIP LOCKED` and never poll one job twice. The job id
 * is also the id of its credit hold (src/db/schema/ledger.ts).
 *
 * No foreign keys to users or keys: a job outlives a deleted key (its owner can no longer read
 * it, but the ledger still settles it).
 */
import { sql } from "drizzle-orm";
import { bigint, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";

export const videoJobs = pgTable(
  "video_jobs",
  {
    id: uuid("id").primaryKey(),
    userId: uuid("user_id").notNull(),
    /** The submitting API key: the only one that may read the job (docs/decisions.md #8). */
    keyId: uuid("key_id").notNull(),
    /** Short model id, catalog family row, provider, its protocol and the model's upstream id. */
    model: text("model").notNull(),
    family: text("family").notNull(),
    providerId: text("provider_id").notNull(),
    protocol: text("protocol").notNull(),
    upstreamModel: text("upstream_model").notNull(),
    /** `processing`, `succeeded`, `failed` or `canceled`. */
    status: text("status").notNull().default("processing"),
    /** The normalized request sent upstream (src/core/video/types.ts NormalizedVideoRequest). */
    request: jsonb("request").notNull(),
    /** The adapter's task reference; null until the upstream accepted the task. */
    upstreamTask: text("upstream_task"),
    /** The last status word the upstream reported (for operators). */
    upstreamStatus: text("upstream_status"),
    resultUrl: text("result_url"),
    costMicro: bigint("cost_micro", { mode: "bigint" }),
    /** `{ code, message }` when failed or canceled. */
    error: jsonb("error"),
    assets: jsonb("assets").notNull().default(sql`'[]'::jsonb`),
    /** `per_second`, `per_token` (Family G Omni) or `fixed` (charge_amount_krw). */
    billing: text("billing").notNull(),
    holdMicro: bigint("hold_micro", { mode: "bigint" }).notNull(),
    /** The charge on success for `per_second` and `fixed`; null for `per_token`. */
    priceMicro: bigint("price_micro", { mode: "bigint" }),
    /** `per_token`: KRW per 1,000 output tokens. */
    krwPer1kTokens: integer("krw_per_1k_tokens"),
    outputTokens: integer("output_tokens"),
    /** Family G: where the downloaded result lives in storage, and until when. */
    storageKey: text("storage_key"),
    contentType: text("content_type"),
    contentSize: bigint("content_size", { mode: "number" }),
    contentExpiresAt: timestamp("content_expires_at", { withTimezone: true }),
    contentDeletedAt: timestamp("content_deleted_at", { withTimezone: true }),
    pollCount: integer("poll_count").notNull().default(0),
    /** Consecutive transient failures (polling or downloading). */
    errorCount: integer("error_count").notNull().default(0),
    nextPollAt: timestamp("next_poll_at", { withTimezone: true }).notNull(),
    claimOwner: text("claim_owner"),
    claimUntil: timestamp("claim_until", { withTimezone: true }),
    /** Past this, the job fails with `generation_timeout` and its hold is released. */
    deadlineAt: timestamp("deadline_at", { withTimezone: true }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
  },
  (t) => [
    index("video_jobs_due_idx").on(t.nextPollAt).where(sql`status = 'processing'`),
    index("video_jobs_key_idx").on(t.keyId, t.createdAt),
    index("video_jobs_content_idx")
      .on(t.contentExpiresAt)
      .where(sql`storage_key IS NOT NULL AND content_deleted_at IS NULL`),
  ],
);

/** One row per (API key, Idempotency-Key): the first request's body hash and, once accepted, its response. */
export const videoIdempotency = pgTable(
  "video_idempotency",
  {
    keyId: uuid("key_id").notNull(),
    idemKey: text("idem_key").notNull(),
    bodyHash: text("body_hash").notNull(),
    /** `pending` while the first request is being accepted, then `done`. */
    state: text("state").notNull(),
    responseStatus: integer("response_status"),
    responseBody: jsonb("response_body"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.idemKey] }), index("video_idempotency_created_idx").on(t.createdAt)],
);
