/**
 * What the video use-cases need from storage: the job store (also the poll queue), the
 * Idempotency-Key records, and the object storage for Family G results. SQL implementations
 * live in src/db/repos/video-jobs.ts; object storage in src/lib/storage/.
 */
import type { UsageEvent } from "../billing/ledger";
import type { BillingMode, JobAsset, JobError, JobStatus, NormalizedVideoRequest, VideoJobRecord } from "./types";
import type { VideoFamily } from "../catalog/types";

export interface NewVideoJob {
  id: string;
  userId: string;
  keyId: string;
  model: string;
  family: VideoFamily;
  providerId: string;
  protocol: string;
  upstreamModel: string;
  request: NormalizedVideoRequest;
  billing: BillingMode;
  holdMicro: bigint;
  priceMicro: bigint | null;
  krwPer1kTokens: number | null;
  /** Until the upstream accepted the task the job is not polled; past this it is failed as lost. */
  nextPollAt: Date;
  deadlineAt: Date;
}

/** The final state a job moves to, once. */
export interface JobFinish {
  status: Exclude<JobStatus, "processing">;
  resultUrl?: string | null;
  costMicro?: bigint | null;
  error?: JobError | null;
  assets?: JobAsset[];
  outputTokens?: number | null;
  upstreamStatus?: string | null;
  storageKey?: string | null;
  contentType?: string | null;
  contentSize?: number | null;
  contentExpiresAt?: Date | null;
}

/**
 * The money step that commits together with a job's final state, in one statement: a job is
 * never seen succeeded with its hold still open, and a cancel racing a completion cannot both
 * release and settle (the hold closes once, with the state change that won).
 */
export type MoneyStep =
  | { kind: "settle"; costMicro: bigint; tokens: number; event: UsageEvent | null }
  | { kind: "release"; event: UsageEvent | null };

export interface VideoJobStore {
  insert(job: NewVideoJob): Promise<VideoJobRecord>;
  /** The upstream accepted the task: store its reference and make the job due at `nextPollAt`. */
  markSubmitted(id: string, task: string, nextPollAt: Date): Promise<VideoJobRecord | null>;
  get(id: string): Promise<VideoJobRecord | null>;
  /**
   * Claims up to `limit` due jobs to `owner` for `claimMs` (`FOR UPDATE SKIP LOCKED`): a job
   * under a live claim is never handed out, so one job is never polled twice at once.
   */
  claimDue(owner: string, claimMs: number, limit: number): Promise<VideoJobRecord[]>;
  /** Still pending: clears the claim and sets the next poll time. False when the claim was lost. */
  reschedule(
    id: string,
    owner: string,
    nextPollAt: Date,
    upstreamStatus: string | null,
    errorCount: number,
  ): Promise<boolean>;
  /**
   * Moves a processing job to its final state and closes its hold (`money`), atomically. With
   * `owner`, only while that owner holds the claim. Null when the job was no longer processing
   * (canceled, finished elsewhere): then no money moves either.
   */
  finish(id: string, owner: string | null, final: JobFinish, money: MoneyStep): Promise<VideoJobRecord | null>;
  /** Drops every claim of `owner` (graceful stop): its jobs are due again at once. */
  releaseClaims(owner: string): Promise<number>;
  /** Marks the files of jobs past their retention as deleted and returns their storage keys. */
  takeExpiredContent(limit: number): Promise<{ id: string; storageKey: string }[]>;
  /** Deletes Idempotency-Key records older than `olderThanMs`. */
  purgeIdempotency(olderThanMs: number): Promise<number>;
}

export type IdempotencyClaim =
  | { kind: "claimed" }
  | { kind: "replay"; status: number; body: unknown }
  | { kind: "in_progress" }
  | { kind: "mismatch" };

export interface IdempotencyStore {
  /**
   * Claims (key, idempotency key) for a request whose body hashes to `bodyHash`. A record older
   * than `windowMs` counts as absent; a pending one older than `staleMs` (its request died) is
   * taken over.
   */
  claim(keyId: string, idemKey: string, bodyHash: string, windowMs: number, staleMs: number): Promise<IdempotencyClaim>;
  complete(keyId: string, idemKey: string, status: number, body: unknown): Promise<void>;
  /** The request failed before it was accepted: forget the claim so the client may retry. */
  abandon(keyId: string, idemKey: string): Promise<void>;
}

/** A stored object, or a byte range of it. */
export interface StoredContent {
  stream(): ReadableStream<Uint8Array>;
  /** A local file slice the HTTP layer may send directly. */
  file?: Blob;
}

export interface ContentStore {
  /** Writes the whole body; returns its size in bytes. */
  put(key: string, body: ReadableStream<Uint8Array>, contentType: string): Promise<number>;
  /** Bytes `start`..`end` inclusive; null when the object is gone. */
  read(key: string, start: number, end: number): Promise<StoredContent | null>;
  delete(key: string): Promise<void>;
}

/**
 * What the video use-cases report for metrics: each upstream exchange and each charge that
 * landed. The main thread counts them; a poller worker posts them there.
 */
export interface VideoObserver {
  upstream(providerId: string, step: "submit" | "poll" | "download", outcome: string, ms: number): void;
  settled(event: UsageEvent, costMicro: bigint): void;
  /** A job entered `state` (accepted, succeeded, failed, canceled) on this instance. */
  job(family: string, state: string): void;
}

/** Times `exchange` as one upstream exchange: `ok`, or the failure's kind (`transient`, `rejected`, ...). */
export async function observed<T>(
  observer: VideoObserver | undefined,
  providerId: string,
  step: "submit" | "poll" | "download",
  exchange: () => Promise<T>,
): Promise<T> {
  if (!observer) return exchange();
  const t0 = performance.now();
  try {
    const answer = await exchange();
    observer.upstream(providerId, step, "ok", performance.now() - t0);
    return answer;
  } catch (e) {
    const kind = (e as { kind?: unknown })?.kind;
    observer.upstream(providerId, step, typeof kind === "string" ? kind : "error", performance.now() - t0);
    throw e;
  }
}
