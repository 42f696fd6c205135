/**
 * The video job store (also the poll queue) and the Idempotency-Key records, over raw SQL so
 * each step is one round trip and runs the same on PostgreSQL and PGlite.
 *
 * Claiming: `UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED)` hands each due job to one
 * poller; rows another transaction is claiming are skipped, and a row whose claim is live is
 * not due. Claim times and "due" use the database clock, so instances agree.
 */
import { eventJson } from "./ledger";
import type { Database } from "../client";
import type {
  IdempotencyClaim,
  IdempotencyStore,
  JobFinish,
  MoneyStep,
  NewVideoJob,
  VideoJobStore,
} from "../../core/video/ports";
import type { VideoJobRecord } from "../../core/video/types";

type Row = Record<string, unknown>;

const big = (v: unknown): bigint | null => (v === null || v === undefined ? null : BigInt(String(v)));
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const date = (v: unknown): Date | null =>
  v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v));
const json = <T>(v: unknown): T => (typeof v === "string" ? JSON.parse(v) : v) as T;
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

function toRecord(row: Row): VideoJobRecord {
  return {
    id: String(row.id),
    userId: String(row.user_id),
    keyId: String(row.key_id),
    model: String(row.model),
    family: row.family as VideoJobRecord["family"],
    providerId: String(row.provider_id),
    protocol: String(row.protocol),
    upstreamModel: String(row.upstream_model),
    status: row.status as VideoJobRecord["status"],
    request: json(row.request),
    upstreamTask: (row.upstream_task as string | null) ?? null,
    upstreamStatus: (row.upstream_status as string | null) ?? null,
    resultUrl: (row.result_url as string | null) ?? null,
    costMicro: big(row.cost_micro),
    error: row.error === null || row.error === undefined ? null : json(row.error),
    assets: json(row.assets) ?? [],
    billing: row.billing as VideoJobRecord["billing"],
    holdMicro: big(row.hold_micro)!,
    priceMicro: big(row.price_micro),
    krwPer1kTokens: num(row.krw_per_1k_tokens),
    outputTokens: num(row.output_tokens),
    storageKey: (row.storage_key as string | null) ?? null,
    contentType: (row.content_type as string | null) ?? null,
    contentSize: num(row.content_size),
    contentExpiresAt: date(row.content_expires_at),
    contentDeletedAt: date(row.content_deleted_at),
    pollCount: Number(row.poll_count),
    errorCount: Number(row.error_count),
    nextPollAt: date(row.next_poll_at)!,
    claimOwner: (row.claim_owner as string | null) ?? null,
    claimUntil: date(row.claim_until),
    deadlineAt: date(row.deadline_at)!,
    createdAt: date(row.created_at)!,
    finishedAt: date(row.finished_at),
  };
}

export class VideoJobRepo implements VideoJobStore, IdempotencyStore {
  constructor(private db: Database) {}

  async insert(job: NewVideoJob): Promise<VideoJobRecord> {
    const rows = await this.db.query<Row>(
      `insert into video_jobs (id, user_id, key_id, model, family, provider_id, protocol, upstream_model, request,
         billing, hold_micro, price_micro, krw_per_1k_tokens, next_poll_at, deadline_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11::bigint, $12::bigint, $13::int, $14::timestamptz, $15::timestamptz)
       returning *`,
      [
        job.id,
        job.userId,
        job.keyId,
        job.model,
        job.family,
        job.providerId,
        job.protocol,
        job.upstreamModel,
        JSON.stringify(job.request),
        job.billing,
        job.holdMicro.toString(),
        job.priceMicro === null ? null : job.priceMicro.toString(),
        job.krwPer1kTokens,
        iso(job.nextPollAt),
        iso(job.deadlineAt),
      ],
    );
    return toRecord(rows[0]!);
  }

  async markSubmitted(id: string, task: string, nextPollAt: Date): Promise<VideoJobRecord | null> {
    const rows = await this.db.query<Row>(
      `update video_jobs set upstream_task = $2, next_poll_at = $3::timestamptz, updated_at = now()
        where id = $1 and status = 'processing' returning *`,
      [id, task, iso(nextPollAt)],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async get(id: string): Promise<VideoJobRecord | null> {
    const rows = await this.db.query<Row>("select * from video_jobs where id = $1", [id]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** An account's jobs, newest first, after the job `afterId` (keyset on creation time and id). */
  async listForUser(userId: string, afterId: string | null, limit: number): Promise<VideoJobRecord[]> {
    const rows = await this.db.query<Row>(
      `select * from video_jobs j where j.user_id = $1
          and ($2::uuid is null or (j.created_at, j.id) < (select c.created_at, c.id from video_jobs c where c.id = $2::uuid and c.user_id = $1))
        order by j.created_at desc, j.id desc limit $3`,
      [userId, afterId, limit],
    );
    return rows.map(toRecord);
  }

  async claimDue(owner: string, claimMs: number, limit: number): Promise<VideoJobRecord[]> {
    const rows = await this.db.query<Row>(
      `update video_jobs set claim_owner = $1, claim_until = now() + ($2::int * interval '1 millisecond'),
           poll_count = poll_count + 1, updated_at = now()
        where id in (
          select id from video_jobs
           where status = 'processing' and next_poll_at <= now() and (claim_until is null or claim_until < now())
           order by next_poll_at
           limit $3
           for update skip locked)
        returning *`,
      [owner, Math.round(claimMs), limit],
    );
    return rows.map(toRecord);
  }

  async reschedule(
    id: string,
    owner: string,
    nextPollAt: Date,
    upstreamStatus: string | null,
    errorCount: number,
  ): Promise<boolean> {
    const rows = await this.db.query<Row>(
      `update video_jobs set next_poll_at = $3::timestamptz, upstream_status = coalesce($4, upstream_status), error_count = $5::int,
           claim_owner = null, claim_until = null, updated_at = now()
        where id = $1 and claim_owner = $2 and status = 'processing' returning id`,
      [id, owner, iso(nextPollAt), upstreamStatus, errorCount],
    );
    return rows.length > 0;
  }

  /**
   * The state change and the money step in one statement: the data-modifying CTE moves the job
   * out of `processing` (only if it still is, and still ours), and only for a row it moved
   * does the ledger function run. Both commit, or neither.
   */
  async finish(id: string, owner: string | null, final: JobFinish, money: MoneyStep): Promise<VideoJobRecord | null> {
    const rows = await this.db.query<Row>(
      `with done as (
         update video_jobs set status = $3, result_url = $4, cost_micro = $5::bigint, error = $6::jsonb, assets = $7::jsonb,
             output_tokens = $8::int, upstream_status = coalesce($9, upstream_status), storage_key = $10, content_type = $11,
             content_size = $12::bigint, content_expires_at = $13::timestamptz,
             claim_owner = null, claim_until = null, finished_at = now(), updated_at = now()
          where id = $1 and status = 'processing' and ($2::text is null or claim_owner = $2::text)
          returning *),
       money as (
         select case when $14::text = 'settle' then gw_settle(done.id, $15::bigint, $16::bigint, $17::jsonb)
                     else gw_release(done.id, $17::jsonb) end as money_result
           from done)
       select done.*, money.money_result from done, money`,
      [
        id,
        owner,
        final.status,
        final.resultUrl ?? null,
        final.costMicro === undefined || final.costMicro === null ? null : final.costMicro.toString(),
        final.error ? JSON.stringify(final.error) : null,
        JSON.stringify(final.assets ?? []),
        final.outputTokens ?? null,
        final.upstreamStatus ?? null,
        final.storageKey ?? null,
        final.contentType ?? null,
        final.contentSize ?? null,
        iso(final.contentExpiresAt),
        money.kind,
        money.kind === "settle" ? money.costMicro.toString() : null,
        money.kind === "settle" ? money.tokens : 0,
        eventJson(money.event),
      ],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /**
   * Jobs in progress by family, and how many of them are due with no poller on them (the poll
   * queue's backlog): both read through the partial index of processing jobs.
   */
  async queueStats(): Promise<{ family: string; processing: number; due: number }[]> {
    const rows = await this.db.query<{ family: string; processing: string | number; due: string | number }>(
      `select family, count(*) as processing,
              count(*) filter (where next_poll_at <= now() and (claim_until is null or claim_until < now())) as due
         from video_jobs where status = 'processing' group by family`,
    );
    return rows.map((row) => ({ family: row.family, processing: Number(row.processing), due: Number(row.due) }));
  }

  async releaseClaims(owner: string): Promise<number> {
    const rows = await this.db.query<Row>(
      `update video_jobs set claim_owner = null, claim_until = null, updated_at = now()
        where claim_owner = $1 and status = 'processing' returning id`,
      [owner],
    );
    return rows.length;
  }

  async takeExpiredContent(limit: number): Promise<{ id: string; storageKey: string }[]> {
    const rows = await this.db.query<{ id: string; storage_key: string }>(
      `update video_jobs set content_deleted_at = now(), updated_at = now()
        where id in (
          select id from video_jobs
           where storage_key is not null and content_deleted_at is null and content_expires_at < now()
           order by content_expires_at limit $1
           for update skip locked)
        returning id, storage_key`,
      [limit],
    );
    return rows.map((row) => ({ id: row.id, storageKey: row.storage_key }));
  }

  async purgeIdempotency(olderThanMs: number): Promise<number> {
    const rows = await this.db.query<Row>(
      "delete from video_idempotency where created_at < now() - ($1::bigint * interval '1 millisecond') returning key_id",
      [Math.round(olderThanMs)],
    );
    return rows.length;
  }

  // ── Idempotency-Key records ──

  async claim(
    keyId: string,
    idemKey: string,
    bodyHash: string,
    windowMs: number,
    staleMs: number,
  ): Promise<IdempotencyClaim> {
    for (let attempt = 0; attempt < 3; attempt++) {
      // Insert, or take over a record that is past the replay window or a pending one whose
      // request died; a live record is left alone and read below.
      const won = await this.db.query<Row>(
        `insert into video_idempotency (key_id, idem_key, body_hash, state) values ($1, $2, $3, 'pending')
         on conflict (key_id, idem_key) do update
           set body_hash = excluded.body_hash, state = 'pending', response_status = null, response_body = null, created_at = now()
           where video_idempotency.created_at < now() - ($4::bigint * interval '1 millisecond')
              or (video_idempotency.state = 'pending' and video_idempotency.created_at < now() - ($5::bigint * interval '1 millisecond'))
         returning key_id`,
        [keyId, idemKey, bodyHash, Math.round(windowMs), Math.round(staleMs)],
      );
      if (won.length) return { kind: "claimed" };
      const rows = await this.db.query<Row>(
        "select body_hash, state, response_status, response_body from video_idempotency where key_id = $1 and idem_key = $2",
        [keyId, idemKey],
      );
      const record = rows[0];
      if (!record) continue; // abandoned meanwhile: try again
      if (record.body_hash !== bodyHash) return { kind: "mismatch" };
      if (record.state !== "done") return { kind: "in_progress" };
      return { kind: "replay", status: Number(record.response_status), body: json(record.response_body) };
    }
    return { kind: "in_progress" };
  }

  async complete(keyId: string, idemKey: string, status: number, body: unknown): Promise<void> {
    await this.db.query(
      "update video_idempotency set state = 'done', response_status = $3::int, response_body = $4::jsonb where key_id = $1 and idem_key = $2",
      [keyId, idemKey, status, JSON.stringify(body)],
    );
  }

  async abandon(keyId: string, idemKey: string): Promise<void> {
    await this.db.query("delete from video_idempotency where key_id = $1 and idem_key = $2 and state = 'pending'", [
      keyId,
      idemKey,
    ]);
  }
}
