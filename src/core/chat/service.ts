/**
 * One chat call, dialect-neutral: resolve the model into candidates, authorize it for the key,
 * answer from the response cache when allowed, mask PII, hold credits, call upstream with
 * retries and fallback, and settle (or release) exactly once. Client dialects (OpenAI chat,
 * Responses) convert in and out around it.
 */
import { GatewayError } from "../errors";
import type { KeyPrincipal } from "../auth/principal";
import { findModel, resolveModel, requireModality, type ModelResolution } from "../catalog/resolve";
import { getModel, type CatalogSnapshot } from "../catalog/types";
import { holdOrThrow, type UsageEvent } from "../billing/ledger";
import { holdAmountMicro, usageCostMicro, withMinimumCharge } from "../billing/pricing";
import { microToKrwRounded, microToUsd } from "../../lib/money";
import { withFallback } from "./attempts";
import { buildCandidates, type Candidate, type ProviderPrefs } from "./candidates";
import { estimateTokens, holdInputTokens } from "./estimate";
import type { CachedAnswer, ChatDeps } from "./ports";
import type { CallContext, Protocol } from "./provider";
import type { ChatRequest, ChatResult, ReasoningEffort, StreamEvent, Usage } from "./types";

export interface ChatCaller {
  requestId: string;
  principal: KeyPrincipal;
  /** The calling app (X-Title / HTTP-Referer), for statistics. */
  app: string | null;
  signal?: AbortSignal;
}

export interface ChatOptions {
  model: string;
  request: Omit<ChatRequest, "model">;
  prefs?: ProviderPrefs;
  traceId?: string;
  reasoningMode?: "standard" | "pro";
  stream: boolean;
}

export interface ChatPlan {
  caller: ChatCaller;
  requested: string;
  candidates: Candidate[];
  /** The request as the client meant it (for the cache). */
  request: Omit<ChatRequest, "model">;
  /** The request as it leaves for the provider (PII masked). */
  upstream: Omit<ChatRequest, "model">;
  mapping: Map<string, string> | null;
  holdMicro: bigint;
  holdTokens: number;
  byok: boolean;
  cacheMode: "off" | "exact" | "semantic";
  startedAt: number;
}

export interface Cost {
  micro: bigint;
  usd: number;
  krw: number;
  fx_rate: number;
  markup_rate: number;
}

export interface ChatOutcome {
  result: ChatResult;
  model: string;
  provider: string | null;
  cost: Cost;
  cached: boolean;
}

export type Prepared = { kind: "cached"; outcome: ChatOutcome } | { kind: "plan"; plan: ChatPlan };

export type OpenedStream =
  | { kind: "raw"; candidate: Candidate; body: ReadableStream<Uint8Array>; abort: AbortController }
  | { kind: "typed"; candidate: Candidate; events: AsyncIterable<StreamEvent>; abort: AbortController };

export class ChatService {
  constructor(private d: ChatDeps) {}

  costOf(micro: bigint): Cost {
    return { micro, usd: microToUsd(micro, this.d.fxMilli), krw: microToKrwRounded(micro), fx_rate: Number(this.d.fxMilli) / 1000, markup_rate: 0 };
  }

  /** Everything before the upstream call. Throws the client's 4xx before any money moves. */
  async prepare(caller: ChatCaller, o: ChatOptions): Promise<Prepared> {
    const snapshot = this.d.catalog();
    const p = caller.principal;
    let request = o.request;
    let resolution = resolveModel(snapshot, o.model);
    requireModality(snapshot, resolution, "text");
    this.checkAllowed(snapshot, p, resolution);

    if (o.reasoningMode === "pro" && resolution.kind !== "policy") {
      const applied = applyProMode(snapshot, resolution, request);
      resolution = applied.resolution;
      request = applied.request;
    }

    let candidates: Candidate[];
    if (resolution.kind === "policy") {
      if (!this.d.policies) throw new GatewayError("policy_not_found", `라우팅 정책 '${resolution.slug}'을(를) 찾을 수 없습니다.`);
      const { models } = await this.d.policies.candidates({ userId: p.user.id, slug: resolution.slug, traceId: o.traceId, request, snapshot });
      candidates = models.flatMap((m) => {
        const r = resolveModel(snapshot, m);
        return r.kind === "policy" ? [] : buildCandidates(snapshot, r, this.candidateOptions(p, o.prefs));
      });
      if (!candidates.length) throw new GatewayError("policy_not_found", "정책에 호출 가능한 모델이 없습니다.");
    } else {
      candidates = buildCandidates(snapshot, resolution, this.candidateOptions(p, o.prefs));
    }

    const cacheMode = p.responseCacheMode;
    if (cacheMode !== "off" && this.d.cache) {
      const hit = await this.d.cache.lookup(p.keyId, cacheMode, o.model, request);
      if (hit) {
        await this.d.ledger.record(caller.requestId, p.user.id, p.keyId, this.event(caller, hit.model, hit.provider, hit.result.usage, 200, true, snapshot)).catch(() => {});
        return { kind: "cached", outcome: { result: hit.result, model: hit.model, provider: hit.provider, cost: this.costOf(0n), cached: true } };
      }
    }

    let upstream = request;
    let mapping: Map<string, string> | null = null;
    if (p.piiMaskingEnabled && this.d.pii) {
      const masked = this.d.pii.mask(request.messages);
      if (masked.mapping) {
        mapping = masked.mapping;
        upstream = { ...request, messages: masked.messages };
      }
    }

    const byok = p.kind === "byok";
    const inputTokens = holdInputTokens(request.messages, request.tools);
    const holdTokens = inputTokens + request.max_tokens;
    const holdMicro = byok ? 0n : holdAmountMicro(candidates.map((c) => c.offering.pricing!), inputTokens, request.max_tokens, this.d.fxMilli);
    await holdOrThrow(this.d.ledger, { id: caller.requestId, userId: p.user.id, keyId: p.keyId, amountMicro: holdMicro, tokens: holdTokens, ttlSeconds: this.d.holdTtlSeconds });
    return {
      kind: "plan",
      plan: { caller, requested: o.model, candidates, request, upstream, mapping, holdMicro, holdTokens, byok, cacheMode, startedAt: performance.now() },
    };
  }

  /** Non-streaming call: retries and fallback, then settle; on failure the hold is released. */
  async complete(plan: ChatPlan): Promise<ChatOutcome> {
    let won;
    try {
      won = await withFallback(plan.candidates, (c) => this.d.providerFor(c.provider.protocol as Protocol).chat(this.upstreamRequest(plan, c), this.ctx(plan, c, plan.caller.signal)), this.attemptOptions(plan));
    } catch (e) {
      await this.fail(plan, e);
      throw e;
    }
    const { value: result, candidate } = won;
    if (plan.mapping) {
      const m = plan.mapping;
      if (result.content) result.content = this.d.pii!.unmask(result.content, m);
      // The model may echo placeholders in tool-call arguments too; restored values keep the JSON valid.
      for (const tc of result.toolCalls ?? []) tc.function.arguments = this.d.pii!.unmask(tc.function.arguments, m);
    }
    const cost = await this.settle(plan, candidate, result.usage, 200);
    const outcome: ChatOutcome = { result, model: candidate.model.id, provider: candidate.provider.id, cost, cached: false };
    this.remember(plan, outcome);
    return outcome;
  }

  /**
   * Opens a stream with retries and fallback; resolves once an upstream accepted, so nothing
   * has reached the client yet and a total failure is still an ordinary JSON error.
   * `preferRaw` asks for the raw OpenAI-compatible bytes where the upstream speaks them and no
   * PII must be restored.
   */
  async openStream(plan: ChatPlan, preferRaw: boolean): Promise<OpenedStream> {
    try {
      const won = await withFallback(
        plan.candidates,
        async (c): Promise<OpenedStream> => {
          const abort = new AbortController();
          const signal = plan.caller.signal ? AbortSignal.any([plan.caller.signal, abort.signal]) : abort.signal;
          const provider = this.d.providerFor(c.provider.protocol as Protocol);
          const req = this.upstreamRequest(plan, c);
          if (preferRaw && !plan.mapping && provider.openRawStream) {
            return { kind: "raw", candidate: c, body: await provider.openRawStream(req, this.ctx(plan, c, signal)), abort };
          }
          return { kind: "typed", candidate: c, events: await provider.chatStream(req, this.ctx(plan, c, signal)), abort };
        },
        this.attemptOptions(plan),
      );
      return won.value;
    } catch (e) {
      await this.fail(plan, e);
      throw e;
    }
  }

  /**
   * Ends a stream that reached the client: charges the usage (or, without upstream usage,
   * an estimate of what was received) and returns the cost. Never throws.
   */
  async finishStream(plan: ChatPlan, candidate: Candidate, usage: Usage | null, receivedChars: number, complete: boolean, result?: ChatResult): Promise<{ cost: Cost; usage: Usage }> {
    const u = usage ?? { promptTokens: estimateTokens(this.promptChars(plan)), completionTokens: estimateTokens(receivedChars), cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
    try {
      if (!complete && receivedChars === 0 && !usage) {
        // No partial output: nothing to bill (spec: "Only that part is billed").
        await this.d.ledger.release(plan.caller.requestId, this.event(plan.caller, candidate.model.id, candidate.provider.id, u, 502, false, undefined, plan));
        return { cost: this.costOf(0n), usage: u };
      }
      const cost = await this.settle(plan, candidate, u, complete ? 200 : 502, complete);
      if (complete && result) this.remember(plan, { result, model: candidate.model.id, provider: candidate.provider.id, cost, cached: false });
      return { cost, usage: u };
    } catch {
      return { cost: this.costOf(0n), usage: u }; // the sweeper releases a hold we could not close
    }
  }

  private async settle(plan: ChatPlan, c: Candidate, usage: Usage, status: number, minimum = true): Promise<Cost> {
    let micro = plan.byok ? 0n : usageCostMicro(c.offering.pricing!, c.provider.caching, usage, this.d.fxMilli);
    if (!plan.byok && minimum && status < 400) micro = withMinimumCharge(micro);
    await this.d.ledger.settle(plan.caller.requestId, micro, usage.promptTokens + usage.completionTokens, this.event(plan.caller, c.model.id, c.provider.id, usage, status, false, undefined, plan));
    return this.costOf(micro);
  }

  private async fail(plan: ChatPlan, e: unknown): Promise<void> {
    const status = e instanceof GatewayError ? e.status : 499;
    const first = plan.candidates[0]!;
    await this.d.ledger
      .release(plan.caller.requestId, this.event(plan.caller, first.model.id, null, { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 }, status, false, undefined, plan))
      .catch(() => {});
  }

  private remember(plan: ChatPlan, outcome: ChatOutcome): void {
    if (plan.cacheMode === "off" || !this.d.cache) return;
    const answer: CachedAnswer = { result: outcome.result, model: outcome.model, provider: outcome.provider };
    this.d.cache.store(plan.caller.principal.keyId, plan.cacheMode, plan.requested, plan.request, answer).catch(() => {});
  }

  private event(caller: ChatCaller, model: string, provider: string | null, u: Usage, status: number, cached: boolean, snapshot?: CatalogSnapshot, plan?: ChatPlan): UsageEvent {
    const m = getModel(snapshot ?? this.d.catalog(), model);
    return {
      model,
      provider,
      maker: m?.maker ?? null,
      modality: "text",
      app: caller.app,
      status,
      promptTokens: u.promptTokens,
      completionTokens: u.completionTokens,
      cachedTokens: u.cachedTokens,
      cacheWriteTokens: u.cacheWriteTokens,
      fxMilli: this.d.fxMilli,
      latencyMs: plan ? Math.round(performance.now() - plan.startedAt) : 0,
      cached,
    };
  }

  private promptChars(plan: ChatPlan): number {
    let n = 0;
    for (const m of plan.upstream.messages) n += typeof m.content === "string" ? m.content.length : Array.isArray(m.content) ? m.content.reduce((a, p) => a + (p.type === "text" ? p.text.length : 0), 0) : 0;
    return n;
  }

  private upstreamRequest(plan: ChatPlan, c: Candidate): ChatRequest {
    return { ...plan.upstream, model: c.offering.upstreamId };
  }

  private ctx(plan: ChatPlan, c: Candidate, signal: AbortSignal | undefined): CallContext {
    const ep = this.d.upstreamFor(c.provider, plan.caller.principal);
    return {
      providerId: c.provider.id,
      baseUrl: ep.baseUrl,
      apiKey: ep.apiKey,
      signal,
      firstByteTimeoutMs: this.d.firstByteTimeoutMs,
      idleTimeoutMs: this.d.idleTimeoutMs,
      forwardServiceTier: c.provider.serviceTier,
    };
  }

  private attemptOptions(plan: ChatPlan) {
    return { retryBaseMs: this.d.retryBaseMs, signal: plan.caller.signal, sleep: this.d.sleep, observe: this.d.observe };
  }

  private candidateOptions(p: KeyPrincipal, prefs?: ProviderPrefs) {
    return { prefs, consent: p.user.xborderTrainingConsent, byokProvider: p.kind === "byok" ? p.byokProvider : null, latencyOf: this.d.latencyOf };
  }

  /** `allowed_models`: the requested id (short form; parents and policies by their own id). */
  private checkAllowed(snapshot: CatalogSnapshot, p: KeyPrincipal, r: ModelResolution): void {
    if (!p.allowedModels?.length) return;
    const allowed = new Set(p.allowedModels.map((e) => normalizeId(snapshot, e)));
    const id = r.kind === "policy" ? `orch/${r.slug}` : r.model.id;
    if (!allowed.has(id)) throw new GatewayError("model_not_allowed", `이 키로는 '${r.requested}' 모델을 호출할 수 없습니다.`);
  }
}

/** An allowlist entry in canonical form: short model id, or `orch/<slug>` for policies. */
function normalizeId(snapshot: CatalogSnapshot, entry: string): string {
  if (entry.startsWith("policy/")) return `orch/${entry.slice(7)}`;
  if (entry.startsWith("orch/")) return entry;
  const base = entry.includes("@") ? entry.slice(0, entry.lastIndexOf("@")) : entry;
  return findModel(snapshot, base)?.id ?? entry;
}

/**
 * `reasoning_mode: "pro"`: the model's documented pro variant, or its highest reasoning
 * effort; a model without a pro mode is a 400 that names the models which have one.
 */
function applyProMode(snapshot: CatalogSnapshot, r: Exclude<ModelResolution, { kind: "policy" }>, request: Omit<ChatRequest, "model">) {
  const pro = r.model.reasoningPro;
  if (!pro) {
    const supported = snapshot.models.filter((m) => m.reasoningPro && m.active && m.kind === "leaf").map((m) => m.id);
    throw new GatewayError("reasoning_mode_unsupported", `'${r.model.id}' 모델은 pro 추론 모드를 지원하지 않습니다. 지원 모델: ${supported.join(", ")}.`, { suggestions: supported });
  }
  if ("variant" in pro && pro.variant) {
    const v = resolveModel(snapshot, pro.variant);
    if (v.kind === "policy") throw new GatewayError("reasoning_mode_unsupported");
    return { resolution: v, request };
  }
  return { resolution: r, request: { ...request, reasoning_effort: (pro as { effort: ReasoningEffort }).effort } };
}
