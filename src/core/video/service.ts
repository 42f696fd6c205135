/**
 * The video use-cases of the request path: submit (validate → idempotency claim → hold →
 * upstream task → 202), read, cancel, and the content lookup of Family G.
 *
 * Every 4xx of submit (422 schema, 400 family rule, 400 BYOK, 403 charge_amount_krw, 400
 * model) is decided before the Idempotency-Key claim and before the hold: a rejected request
 * moves no money and leaves no record. The upstream task is created inside the request, once
 * (media generation is never retried); if that fails the hold is released, the job is marked
 * failed and the client gets the upstream error (502/429) with no job id to poll.
 */
import { SYSTEM_LIFECYCLE, withoutRetired, type LifecyclePort } from "../catalog/lifecycle";
import type { KeyPrincipal } from "../auth/principal";

/** Who asks for a job: the API key that submitted it, or its account (the dashboard). */
export type JobOwner = { keyId: string } | { userId: string };
import { holdOrThrow, type JobLedger } from "../billing/ledger";
import { resolveModelFor } from "../catalog/resolve";
import { checkAllowed } from "../routing/allowed-models";
import { getProvider, type CatalogProvider, type CatalogSnapshot } from "../catalog/types";
import { asUpstreamError } from "../upstream/error";
import { upstreamClientError, upstreamRateLimited } from "../upstream/client-error";
import { logUpstreamFailure } from "../upstream/words";
import { GatewayError, invalid, text } from "../errors";
import { microToKrwRounded } from "../../lib/money";
import { sha256Hex } from "../../lib/secrets";
import { applyFamilyRules } from "./constraints";
import { observed, type IdempotencyStore, type VideoJobStore, type VideoObserver } from "./ports";
import type { HealthGate, HealthTicket } from "../health/tracker";
import { priceVideo } from "./pricing";
import type { VideoEndpoint, VideoProvider } from "./provider";
import { checkGeneralRules, DEFAULT_VIDEO_MODEL, type ReferenceUrl, type VideoSubmitBody } from "./schema";
import { isFamilyG, type JobError, type VideoJobRecord, type VideoJobView } from "./types";
import { swallowed } from "../../lib/log";

export const IDEMPOTENCY_KEY_MAX = 128;
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

export interface VideoServiceDeps {
  catalog: () => CatalogSnapshot;
  /** The process's one ledger (its view for holds the job store closes). */
  ledger: JobLedger;
  jobs: VideoJobStore;
  idempotency: IdempotencyStore;
  providerFor(protocol: string): VideoProvider | undefined;
  endpointFor(provider: CatalogProvider): VideoEndpoint;
  /** Whether this deployment may call a provider (src/upstreams.ts); unset: every provider. */
  available?(provider: CatalogProvider): boolean;
  /** The day and the simulated offerings: a retired video model is refused (catalog/lifecycle.ts). */
  lifecycle?: LifecyclePort;
  /** Deadline of the upstream create-task call. */
  submitTimeoutMs: number;
  /** Delay before a new job's first poll. */
  firstPollDelayMs: number;
  /** A job not finished after this fails with `generation_timeout`. */
  jobTimeoutMs: number;
  now?: () => number;
  /** Called after a job was accepted (wakes an idle poller). */
  onAccepted?: (jobId: string) => void;
  /**
   * True when a reference URL's host is (or resolves to) a private, loopback or link-local
   * address; such a request is a 422. Unset: every HTTP(S) host is accepted.
   */
  hostRefused?: (url: string) => Promise<boolean>;
  /** Sees each upstream submit (metrics). */
  observe?: VideoObserver;
  /** Circuit breaking: a submit to a provider whose circuit is open is 429 before any state changes. */
  health?: HealthGate;
}

export interface SubmitResult {
  status: number;
  body: VideoJobView;
  /** True when this is an Idempotency-Key replay of an earlier response. */
  replayed: boolean;
}

export class VideoService {
  constructor(private deps: VideoServiceDeps) {}

  private usable(snapshot: CatalogSnapshot, providerId: string): boolean {
    const provider = getProvider(snapshot, providerId);
    return !!provider && (this.deps.available?.(provider) ?? true);
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  async submit(principal: KeyPrincipal, body: VideoSubmitBody, idempotencyKey: string | null): Promise<SubmitResult> {
    if (principal.kind === "byok") {
      throw new GatewayError(
        "byok_not_supported",
        text(
          "동영상 생성은 BYOK 키를 지원하지 않습니다. 일반 API 키를 사용하세요.",
          "Video generation does not take BYOK keys. Use an ordinary API key.",
        ),
      );
    }
    const charge = body.charge_amount_krw ?? null;
    if (charge !== null && principal.kind !== "delegated") throw new GatewayError("charge_amount_not_allowed");
    const refs = checkGeneralRules(body);

    const snapshot = this.deps.catalog();
    const resolved = resolveModelFor(snapshot, body.model ?? DEFAULT_VIDEO_MODEL, "video");
    const resolution = withoutRetired(resolved, this.deps.lifecycle ?? SYSTEM_LIFECYCLE);
    if (resolution.kind !== "leaf")
      throw new GatewayError(
        "model_not_found",
        text("동영상 요청에는 동영상 모델 id를 지정하세요.", "A video request needs a video model id."),
      );
    const model = resolution.model;
    checkAllowed(snapshot, principal, resolution);
    const priced = resolution.offerings.filter((candidate) => candidate.videoPricing !== null);
    // Unconfigured providers are no candidates: never simulated outside demo mode, never charged.
    const offering = priced.find((candidate) => this.usable(snapshot, candidate.providerId));
    if (priced.length && !offering) {
      const providers = priced.map((candidate) => candidate.providerId);
      throw new GatewayError(
        "provider_not_configured",
        text(
          `'${model.id}' 모델의 제공자(${providers.join(", ")})가 이 배포에 설정되지 않았습니다.`,
          `The provider of '${model.id}' (${providers.join(", ")}) is not configured on this deployment.`,
        ),
        { providers },
      );
    }
    const provider = offering && getProvider(snapshot, offering.providerId);
    const adapter = provider && this.deps.providerFor(provider.protocol);
    if (!offering || !provider || !adapter || !model.family)
      throw new GatewayError(
        "service_unavailable",
        text(
          `'${model.id}' 모델을 제공할 수 있는 제공자가 없습니다.`,
          `No provider can serve the model '${model.id}'.`,
        ),
      );

    const request = applyFamilyRules(model.id, model.family, offering.videoPricing!, {
      prompt: body.prompt,
      durationSeconds: body.duration_seconds,
      resolution: body.resolution,
      generateAudio: body.generate_audio,
      images: refs.images,
      videos: refs.videos,
      audios: refs.audios,
    });
    const price = priceVideo(offering.videoPricing!, request, charge);
    await this.checkHosts(refs.all);

    const ticket = this.admitted(provider.id, model.id, principal.user.id);
    // Valid: from here on, state changes. First the Idempotency-Key, then the money.
    if (idempotencyKey !== null) {
      const claim = await this.deps.idempotency.claim(
        principal.keyId,
        idempotencyKey,
        bodyHash(body),
        IDEMPOTENCY_WINDOW_MS,
        this.deps.submitTimeoutMs + 60_000,
      );
      if (claim.kind !== "claimed") ticket?.end("neutral"); // no upstream call after all
      if (claim.kind === "replay") return { status: claim.status, body: claim.body as VideoJobView, replayed: true };
      if (claim.kind === "in_progress") throw new GatewayError("idempotency_in_progress");
      if (claim.kind === "mismatch") throw new GatewayError("idempotency_key_reused");
    }
    const forget = async () => {
      ticket?.end("neutral"); // a no-op after the submit reported its outcome
      if (idempotencyKey !== null) await this.deps.idempotency.abandon(principal.keyId, idempotencyKey).catch(() => {});
    };

    const jobId = crypto.randomUUID();
    const now = this.now();
    const deadline = now + this.deps.jobTimeoutMs;
    try {
      // The hold lives as long as the job may (plus a margin), so the chat hold sweeper never
      // releases it under a running job; the poller settles or releases it.
      await holdOrThrow(this.deps.ledger, {
        id: jobId,
        userId: principal.user.id,
        keyId: principal.keyId,
        amountMicro: price.holdMicro,
        tokens: 0,
        ttlSeconds: Math.ceil(this.deps.jobTimeoutMs / 1000) + 3600,
      });
    } catch (e) {
      await forget();
      throw e;
    }

    let job: VideoJobRecord;
    try {
      job = await this.deps.jobs.insert({
        id: jobId,
        userId: principal.user.id,
        keyId: principal.keyId,
        model: model.id,
        family: model.family,
        providerId: provider.id,
        protocol: provider.protocol,
        upstreamModel: offering.upstreamId,
        request,
        billing: price.billing,
        holdMicro: price.holdMicro,
        priceMicro: price.priceMicro,
        krwPer1kTokens: price.krwPer1kTokens,
        // Not polled before the upstream accepted it; if this process dies before that, the
        // poller finds it due after the submit deadline and fails it as lost.
        nextPollAt: new Date(now + this.deps.submitTimeoutMs + 30_000),
        deadlineAt: new Date(deadline),
      });
    } catch (e) {
      await this.deps.ledger.release(jobId, null).catch(swallowed("video hold release", { job_id: jobId }));
      await forget();
      throw e;
    }

    let task: string;
    const submission = { jobId, upstreamModel: offering.upstreamId, family: model.family, request };
    const t0 = performance.now();
    try {
      task = await observed(this.deps.observe, provider.id, "submit", () =>
        adapter.submit(submission, { endpoint: this.deps.endpointFor(provider), timeoutMs: this.deps.submitTimeoutMs }),
      );
      ticket?.end("ok", performance.now() - t0);
    } catch (e) {
      const err = asUpstreamError(e);
      ticket?.end(err.kind === "rejected" ? "neutral" : "failed");
      const error: JobError = {
        code: "submit_failed",
        message: `업스트림에 작업을 제출하지 못했습니다 (${err.kind}${err.status ? ` ${err.status}` : ""}).`,
      };
      await this.deps.jobs
        .finish(jobId, null, { status: "failed", error }, { kind: "release", event: null })
        .catch(() => this.deps.ledger.release(jobId, null))
        .catch(swallowed("video hold release after a failed submit", { job_id: jobId }));
      await forget();
      logUpstreamFailure(err, { job_id: jobId, provider: provider.id, model: model.id, step: "submit" });
      this.deps.observe?.job(model.family, "failed");
      throw upstreamClientError(err, [provider.id]);
    }

    job = (await this.deps.jobs.markSubmitted(jobId, task, new Date(this.now() + this.deps.firstPollDelayMs))) ?? job;
    const view = toJobView(job, null);
    if (idempotencyKey !== null) await this.deps.idempotency.complete(principal.keyId, idempotencyKey, 202, view);
    this.deps.onAccepted?.(jobId);
    this.deps.observe?.job(model.family, "accepted");
    return { status: 202, body: view, replayed: false };
  }

  /**
   * The submit's pass through the provider's circuit (null without circuit breaking); an open
   * circuit is 429 with Retry-After, as a rate-limited provider is, before any claim or hold.
   */
  private admitted(providerId: string, modelId: string, account: string): HealthTicket | null {
    const gate = this.deps.health?.admit(providerId, modelId, account);
    if (!gate) return null;
    if (gate.allowed) return gate.ticket;
    throw upstreamRateLimited(gate.retryAfterMs, [{ provider: providerId, model: modelId, error: "circuit_open" }]);
  }

  /** 422 for the first reference URL whose host is not public (all looked up at once). */
  private async checkHosts(refs: ReferenceUrl[]): Promise<void> {
    const refused = this.deps.hostRefused;
    if (!refused) return;
    const verdicts = await Promise.all(refs.map((ref) => refused(ref.url)));
    const first = verdicts.indexOf(true);
    if (first >= 0)
      throw invalid(
        refs[first]!.loc,
        text(
          "URL 호스트가 사설, 루프백 또는 링크 로컬 주소입니다.",
          "URL host is a private, loopback or link-local address",
        ),
        "url_not_allowed",
      );
  }

  /**
   * The caller's job, or 404 for a missing job and for any other key's (docs/decisions.md #8).
   * The dashboard (an account, not a key) sees every job of its account.
   */
  async get(owner: JobOwner, jobId: string): Promise<VideoJobRecord> {
    const job = await this.deps.jobs.get(jobId);
    if (!job || ("keyId" in owner ? job.keyId !== owner.keyId : job.userId !== owner.userId))
      throw new GatewayError("not_found", text("작업을 찾을 수 없습니다.", "Job not found."));
    return job;
  }

  /** Cancels a processing job: status `canceled`, hold released in full (docs/decisions.md #17). 409 when final. */
  async cancel(owner: JobOwner, jobId: string): Promise<VideoJobRecord> {
    const job = await this.get(owner, jobId);
    if (job.status !== "processing") throw alreadyFinal(job);
    const error: JobError = { code: "canceled", message: "요청에 따라 작업이 취소되었습니다." };
    const done = await this.deps.jobs.finish(
      jobId,
      null,
      { status: "canceled", error },
      { kind: "release", event: null },
    );
    if (!done) throw alreadyFinal((await this.deps.jobs.get(jobId)) ?? job);
    this.deps.observe?.job(job.family, "canceled");
    return done;
  }

  /**
   * The stored result of a Family G job, for `/content`: 404 for another key's job and for
   * jobs without gateway-served content, 409 while processing, 410 after the retention.
   */
  async content(
    owner: JobOwner,
    jobId: string,
  ): Promise<{ job: VideoJobRecord; storageKey: string; size: number; contentType: string }> {
    const job = await this.get(owner, jobId);
    if (!isFamilyG(job.family))
      throw new GatewayError(
        "not_found",
        text("이 작업의 결과는 result_url에서 직접 받으세요.", "Fetch this job's result from its result_url."),
      );
    if (job.status === "processing") throw new GatewayError("job_not_ready");
    if (job.status !== "succeeded" || !job.storageKey || job.contentSize === null)
      throw new GatewayError("not_found", text("이 작업에는 결과 파일이 없습니다.", "This job has no result file."));
    if (job.contentDeletedAt || (job.contentExpiresAt && job.contentExpiresAt.getTime() <= this.now()))
      throw new GatewayError("content_expired");
    return { job, storageKey: job.storageKey, size: job.contentSize, contentType: job.contentType ?? "video/mp4" };
  }
}

/** The job object. `origin` makes a Family G content path absolute (null keeps it relative). */
export function toJobView(job: VideoJobRecord, origin: string | null): VideoJobView {
  const absolute = (url: string | null) =>
    url !== null && origin !== null && url.startsWith("/") ? origin + url : url;
  return {
    job_id: job.id,
    status: job.status,
    model: job.model,
    result_url: absolute(job.resultUrl),
    cost: job.costMicro === null ? null : { krw: microToKrwRounded(job.costMicro) },
    error: job.error,
    assets: job.assets.map((asset) => ({ type: asset.type, url: absolute(asset.url)! })),
    created_at: job.createdAt.toISOString(),
  };
}

/** SHA-256 of the body as canonical JSON (keys sorted), so key order does not matter. */
export function bodyHash(body: unknown): string {
  return sha256Hex(canonicalJson(body));
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

function alreadyFinal(job: VideoJobRecord): GatewayError {
  return new GatewayError(
    "conflict",
    text(`이미 끝난 작업입니다 (상태: ${job.status}).`, `The job has already ended (status: ${job.status}).`),
  );
}
