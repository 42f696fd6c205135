/**
 * The poller use-case: claim due jobs for a while, ask each upstream task how it is doing,
 * and move finished jobs to their final state with their money step. The same functions run
 * in Bun workers (PostgreSQL), inline on the main thread (PGlite) and directly in tests.
 *
 * On completion the state change (conditional: still processing and still our claim) and the
 * money step (settle or release) commit together (`VideoJobStore.finish`). A cancel that wins
 * the state change has released the hold with it; the poller's finish then changes nothing.
 * Media generation is never retried: a failed task fails the job. Transport errors while
 * polling or downloading are retried with backoff until the job's deadline.
 */
import type { UsageEvent } from "../billing/ledger";
import { asUpstreamError } from "../upstream/error";
import { failureWords } from "../upstream/words";
import { observed, type ContentStore, type JobFinish, type VideoJobStore, type VideoObserver } from "./ports";
import { jobCostMicro } from "./pricing";
import type { VideoEndpoint, VideoPollOutcome, VideoProvider } from "./provider";
import { contentPath, isFamilyG, type JobError, type VideoJobRecord } from "./types";

export interface PollerDeps {
  jobs: VideoJobStore;
  content: ContentStore;
  providerFor(protocol: string): VideoProvider | undefined;
  endpointFor(providerId: string): VideoEndpoint | undefined;
  /** How long a claim is exclusive; a crashed poller's jobs come back after it. */
  claimMs: number;
  /** First backoff step; each later poll waits 1.5× longer, up to `pollMaxMs`. */
  pollInitialMs: number;
  pollMaxMs: number;
  /** Deadline of one upstream exchange (poll, or a download's first byte). */
  requestTimeoutMs: number;
  /** Family G results are kept this long, then deleted (410). */
  retentionMs: number;
  now?: () => number;
  random?: () => number;
  log?: (msg: string, fields: Record<string, unknown>) => void;
  /** Sees each upstream exchange and each settled job (metrics). */
  observe?: VideoObserver;
  /** The model's producer (the catalog's maker), for the usage event and the rankings. */
  makerOf?: (model: string) => string | null;
}

/** Delay before the next poll of a job polled `pollCount` times: 1.5^n growth, ±10 % jitter, capped. */
export function pollDelayMs(pollCount: number, initialMs: number, maxMs: number, random = Math.random): number {
  const base = Math.min(maxMs, initialMs * 1.5 ** Math.max(0, pollCount - 1));
  return Math.max(1, Math.round(base * (0.9 + 0.2 * random())));
}

/** Claims up to `limit` due jobs for `owner` and advances each; returns how many were claimed. */
export async function pollOnce(d: PollerDeps, owner: string, limit: number): Promise<number> {
  const jobs = await d.jobs.claimDue(owner, d.claimMs, limit);
  await Promise.all(
    jobs.map((job) =>
      advanceJob(d, owner, job).catch((error) => {
        // The claim stays: the job comes back once it expires.
        d.log?.("video job step failed", { job_id: job.id, error });
      }),
    ),
  );
  return jobs.length;
}

const ERRORS: Record<JobError["code"], string> = {
  generation_failed: "동영상 생성에 실패했습니다.",
  content_filtered: "안전 필터에 의해 결과가 차단되었습니다.",
  generation_expired: "업스트림 작업이 만료되었습니다.",
  generation_timeout: "제한 시간 안에 생성이 끝나지 않았습니다.",
  submit_failed: "업스트림에 작업을 제출하지 못했습니다.",
  download_failed: "결과 파일을 가져오지 못했습니다.",
  upstream_error: "업스트림이 작업 조회를 거부했습니다.",
  canceled: "요청에 따라 작업이 취소되었습니다.",
};

/** A job's error: the code's words, plus our own `detail` (never a vendor's text). */
export function jobError(code: JobError["code"], detail?: string): JobError {
  return { code, message: detail ? `${ERRORS[code]} (${detail.slice(0, 300)})` : ERRORS[code] };
}

/** One step of one claimed job. */
export async function advanceJob(d: PollerDeps, owner: string, job: VideoJobRecord): Promise<void> {
  const now = d.now?.() ?? Date.now();
  if (now >= job.deadlineAt.getTime()) return fail(d, owner, job, jobError("generation_timeout"));
  // Due but never accepted upstream: the accepting request died mid-way.
  if (!job.upstreamTask) return fail(d, owner, job, jobError("submit_failed", "작업 접수가 완료되지 않았습니다"));

  const provider = d.providerFor(job.protocol);
  const endpoint = d.endpointFor(job.providerId);
  if (!provider || !endpoint) {
    d.log?.("video provider not configured", { job_id: job.id, provider: job.providerId });
    return retryLater(d, owner, job, job.errorCount + 1, null);
  }
  const call = { endpoint, timeoutMs: d.requestTimeoutMs };

  let outcome: VideoPollOutcome;
  try {
    outcome = await observed(d.observe, job.providerId, "poll", () =>
      provider.poll(job.upstreamTask!, job.upstreamModel, call),
    );
  } catch (e) {
    const err = asUpstreamError(e);
    if (err.kind === "rejected") {
      d.log?.("video poll rejected", {
        job_id: job.id,
        provider: job.providerId,
        status: err.status,
        message: err.message,
        detail: err.detail,
      });
      return fail(d, owner, job, jobError("upstream_error", failureWords(err)));
    }
    return retryLater(d, owner, job, job.errorCount + 1, null);
  }

  if (outcome.state === "pending") return retryLater(d, owner, job, 0, outcome.upstreamStatus);
  if (outcome.state === "failed") {
    const code =
      outcome.reason === "expired"
        ? "generation_expired"
        : outcome.reason === "filtered"
          ? "content_filtered"
          : "generation_failed";
    // The vendor's task message is the operator's to read: the client gets the code's words.
    d.log?.("video task failed upstream", {
      job_id: job.id,
      provider: job.providerId,
      upstream_status: outcome.upstreamStatus,
      message: outcome.message,
    });
    return fail(d, owner, job, jobError(code), outcome.upstreamStatus);
  }

  const finish: JobFinish = {
    status: "succeeded",
    upstreamStatus: outcome.upstreamStatus,
    outputTokens: outcome.outputTokens,
  };
  if (isFamilyG(job.family)) {
    // The vendor's file needs our credential: keep a copy and serve it from /content.
    if (!provider.download) return fail(d, owner, job, jobError("download_failed", "다운로드를 지원하지 않는 제공자"));
    // One key per attempt: if our claim ran out mid-download and another poller took over,
    // the loser deletes its own copy, never the winner's.
    const key = `video/${job.id}-${crypto.randomUUID().slice(0, 8)}.mp4`;
    try {
      const file = await observed(d.observe, job.providerId, "download", () =>
        provider.download!(outcome.videoUrl, call),
      );
      const size = await d.content.put(key, file.body, file.contentType);
      finish.storageKey = key;
      finish.contentType = file.contentType;
      finish.contentSize = size;
      finish.contentExpiresAt = new Date((d.now?.() ?? Date.now()) + d.retentionMs);
    } catch (e) {
      await d.content.delete(key).catch(() => {});
      const err = asUpstreamError(e);
      if (err.kind === "rejected") {
        d.log?.("video download rejected", {
          job_id: job.id,
          provider: job.providerId,
          status: err.status,
          message: err.message,
          detail: err.detail,
        });
        return fail(d, owner, job, jobError("download_failed", failureWords(err)));
      }
      return retryLater(d, owner, job, job.errorCount + 1, outcome.upstreamStatus);
    }
    finish.resultUrl = contentPath(job.id);
  } else {
    finish.resultUrl = outcome.videoUrl;
  }
  finish.assets = [{ type: "video", url: finish.resultUrl }];
  finish.costMicro = jobCostMicro(job, outcome.outputTokens);

  const event = usageEvent(d, job, 200, now, outcome.outputTokens);
  const done = await d.jobs.finish(job.id, owner, finish, {
    kind: "settle",
    costMicro: finish.costMicro,
    tokens: outcome.outputTokens ?? 0,
    event,
  });
  if (done) {
    d.observe?.settled(event, finish.costMicro);
    d.observe?.job(job.family, "succeeded");
  }
  // Canceled (or finished elsewhere) meanwhile: the winner closed the hold; drop our copy.
  if (!done && finish.storageKey) await d.content.delete(finish.storageKey).catch(() => {});
}

async function retryLater(
  d: PollerDeps,
  owner: string,
  job: VideoJobRecord,
  errorCount: number,
  upstreamStatus: string | null,
): Promise<void> {
  const now = d.now?.() ?? Date.now();
  // Repeated transport errors back off on their own count too, so an outage is not hammered.
  const steps = Math.max(job.pollCount, errorCount + 1);
  const next = Math.min(now + pollDelayMs(steps, d.pollInitialMs, d.pollMaxMs, d.random), job.deadlineAt.getTime());
  await d.jobs.reschedule(job.id, owner, new Date(next), upstreamStatus, errorCount);
}

async function fail(
  d: PollerDeps,
  owner: string | null,
  job: VideoJobRecord,
  error: JobError,
  upstreamStatus?: string,
): Promise<void> {
  // docs/decisions.md #17: a failed or expired job is released in full.
  const event = usageEvent(d, job, 502, d.now?.() ?? Date.now(), null);
  const done = await d.jobs.finish(
    job.id,
    owner,
    { status: "failed", error, ...(upstreamStatus !== undefined && { upstreamStatus }) },
    { kind: "release", event },
  );
  if (done) d.observe?.job(job.family, "failed");
}

function usageEvent(
  d: PollerDeps,
  job: VideoJobRecord,
  status: number,
  now: number,
  outputTokens: number | null,
): UsageEvent {
  return {
    model: job.model,
    provider: job.providerId,
    maker: d.makerOf?.(job.model) ?? null,
    api: "video",
    modality: "video",
    app: null,
    status,
    promptTokens: 0,
    completionTokens: outputTokens ?? 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    fxMilli: null,
    latencyMs: Math.max(0, now - job.createdAt.getTime()),
    cached: false,
  };
}

export interface SweepDeps {
  jobs: VideoJobStore;
  content: ContentStore;
  log?: (msg: string, fields: Record<string, unknown>) => void;
}

export interface SweepResult {
  deleted: number;
  purged: number;
}

/**
 * Housekeeping, safe to run on every instance at once: deletes Family G files past their
 * retention (the endpoint then answers 410) and forgets Idempotency-Key records older than
 * the replay window.
 */
export async function sweepVideo(d: SweepDeps, windowMs: number): Promise<SweepResult> {
  let deleted = 0;
  for (const { id, storageKey } of await d.jobs.takeExpiredContent(200)) {
    try {
      await d.content.delete(storageKey);
      deleted++;
    } catch (error) {
      d.log?.("video content delete failed", { job_id: id, error });
    }
  }
  const purged = await d.jobs.purgeIdempotency(windowMs);
  return { deleted, purged };
}
