/**
 * One chat call, dialect-neutral, from the client's request to its settled answer (`run`):
 * resolve the model into candidates, authorize it for the key, answer from the response cache
 * when allowed, mask PII, hold credits, call upstream with retries and fallback, and settle (or
 * release) exactly once, for a JSON answer here and for a stream at its end (answer-stream.ts).
 * Client dialects (OpenAI chat, Responses, Messages) convert in and encode out around it.
 */
import { GatewayError, text } from "../errors";
import type { KeyPrincipal } from "../auth/principal";
import { resolveModel, requireModality } from "../catalog/resolve";
import type { HoldRequest, UsageEvent } from "../billing/ledger";
import { usageCostMicro } from "../billing/pricing";
import { withFallback, type AttemptCall, type AttemptOptions, type AttemptSuccess } from "./attempts";
import { hedged, wantsHedge } from "./hedge";
import { primed } from "./primed";
import { applyProMode, checkAllowed } from "./access";
import type { ChatCaller, ChatOptions, ChatOutcome, ChatPlan, Cost, OpenedStream, Prepared } from "./plan";
import type { ChatRun } from "./call-stream";
import { callWarnings } from "./warnings";
import { AnswerStream, cachedStream, leaveStream } from "./answer-stream";
import { buildCandidates, type Candidate, type ProviderPrefs } from "./candidates";
import { holdInputTokens, measurePrompt } from "./estimate";
import { citationsOf, searchBeforeCall } from "./web-search-step";
import type { CachedAnswer, ChatDeps } from "./ports";
import { type CallContext, type Protocol } from "./provider";
import { UpstreamError } from "../upstream/error";
import { buildExecution, executionHeader, type OrchestratedAnswer, type PolicyExecution } from "../routing/execution";
import { runCascade, runParallel, type SubCaller } from "../routing/orchestrate";
import { mergePrefs } from "../routing/prefs";
import { replayAnswer } from "../routing/replay";
import { withMessages, withoutReasoning, type ChatRequest, type ChatResult } from "./types";
import { afterHold, HoldRefused, placeHold, startHold, worstHoldMicro } from "./hold";
import { callSignal, ClientGate, deadlineAware } from "./call-signals";
import { pricedOptionsOf } from "./priced-options";
import { providerCount } from "./count";
import type { AttemptRecord } from "./trace";
import { Continuation, continuable, continuing, type TypedStream } from "./continuation";
import { continuationHold } from "./continuation-bill";
import { CallBill } from "./call-bill";
import { traced, tracedHold } from "./traced";
import { swallowed } from "../../lib/log";
import { noteWarnings } from "./warnings";

export type { ChatCaller, ChatOptions, ChatOutcome, Cost } from "./plan";
export type { ChatRun } from "./call-stream";

export class ChatService {
  /** The call's money after its hold: settle, release, a stream's bill (call-bill.ts). */
  private readonly bill: CallBill;
  constructor(private d: ChatDeps) {
    this.bill = new CallBill(d);
  }

  costOf(micro: bigint): Cost {
    return this.bill.costOf(micro);
  }

  /**
   * The whole call: a JSON answer, or (`options.stream`) a stream that has opened upstream, so
   * a failure of every attempt is still an ordinary JSON error. Either carries the policy
   * decision header of a routing-policy call.
   */
  async run(caller: ChatCaller, o: ChatOptions): Promise<ChatRun> {
    const prepared = await this.prepare(caller, o);
    if (prepared.kind === "cached")
      return o.stream
        ? { kind: "stream", stream: cachedStream(prepared.outcome), decision: null, warnings: [] }
        : { kind: "json", outcome: prepared.outcome, decision: null, warnings: [] };
    const plan = prepared.plan;
    if (!o.stream) {
      const outcome = await this.complete(plan);
      return { kind: "json", outcome, decision: this.decisionOf(plan), warnings: callWarnings(plan, outcome.provider) };
    }
    const opened = await this.openStream(plan, o.relay ?? null);
    const warnings = callWarnings(plan, opened.candidate.provider.id);
    return {
      kind: "stream",
      stream: new AnswerStream(plan, opened, this.d, this.bill),
      decision: this.decisionOf(plan),
      warnings,
    };
  }

  /** Everything before the upstream call. Throws the client's 4xx before any money moves. */
  private async prepare(caller: ChatCaller, o: ChatOptions): Promise<Prepared> {
    const snapshot = this.d.catalog();
    const p = caller.principal;
    caller.trace?.requested(o.model);
    let request = o.request;
    let resolution = resolveModel(snapshot, o.model);
    requireModality(snapshot, resolution, "text");
    checkAllowed(snapshot, p, resolution);

    // The cache keys an answer by the model it came from: a pro variant is its own model.
    let cacheModel = o.model;
    if (o.reasoningMode === "pro" && resolution.kind !== "policy")
      ({ resolution, request, cacheModel = o.model } = applyProMode(snapshot, p, resolution, request));

    // The hold is an upper bound of the charge: everything the request sends, per provider.
    const prompt = measurePrompt(request, o.web);
    const inputFor = (c: Candidate) => holdInputTokens(prompt, c.provider.protocol, c.offering.upstreamId);
    let candidates: Candidate[];
    let policy: PolicyExecution | null = null;
    if (resolution.kind === "policy") {
      if (!this.d.policies)
        throw new GatewayError(
          "policy_not_found",
          text(
            `라우팅 정책 '${resolution.slug}'을(를) 찾을 수 없습니다.`,
            `Routing policy '${resolution.slug}' not found.`,
          ),
        );
      const route = await this.d.policies.route({
        userId: p.user.id,
        slug: resolution.slug,
        traceId: o.traceId,
        request,
        snapshot,
      });
      policy = buildExecution({
        route,
        snapshot,
        candidateOptions: this.candidateOptions(p, request, mergePrefs(route.prefs, o.prefs)),
        inputTokens: inputFor,
        maxTokens: request.max_tokens,
        fxMilli: this.d.fxMilli,
        free: p.kind === "byok",
      });
      candidates =
        policy.kind === "single"
          ? policy.candidates
          : (policy.kind === "cascade" ? policy.tiers : policy.workers).flatMap((g) => g.candidates);
    } else {
      candidates = buildCandidates(snapshot, resolution, this.candidateOptions(p, request, o.prefs));
    }

    // Without a search engine the plugin cannot run: refused before any hold, unless optional.
    if (o.web && !this.d.search && !o.web.optional) {
      throw new GatewayError(
        "provider_not_configured",
        text(
          "웹 검색 제공자(Brave Search)가 이 배포에 설정되지 않았습니다. 웹 플러그인을 빼거나 optional: true로 보내세요.",
          "The web search provider (Brave Search) is not configured on this deployment. Leave out the web plugin or send it with optional: true.",
        ),
        { providers: ["brave"] },
      );
    }
    const byok = p.kind === "byok";
    let holdTokens = candidates.reduce((m, c) => Math.max(m, inputFor(c)), 0) + request.max_tokens;
    // A policy's hold covers its worst case: every tier, judge, worker and merge that may run.
    let holdMicro = byok
      ? 0n
      : policy
        ? policy.holdMicro
        : worstHoldMicro(candidates, inputFor, request.max_tokens, this.d.fxMilli);
    // A stream that may be continued holds for its continuation too (continuation-bill.ts).
    const continues = continuable(o.stream, o.prefs, request) && (!policy || policy.kind === "single");
    if (continues) {
      const extra = continuationHold(candidates, inputFor, request.max_tokens, this.d.fxMilli);
      if (!byok) holdMicro += extra.micro;
      holdTokens += extra.tokens;
    }
    const searchMicro = o.web && this.d.search ? (this.d.searchPriceMicro ?? 0n) : 0n;
    // A single call without web search settles once with its usage event: it may be held against a credit lease.
    const single = !o.web && (!policy || policy.kind === "single");
    const named = caller.clientChosen === true;
    const hold: HoldRequest = {
      id: caller.requestId,
      userId: p.user.id,
      keyId: p.keyId,
      amountMicro: holdMicro + searchMicro,
      tokens: holdTokens,
      ttlSeconds: this.d.holdTtlSeconds,
      leasable: single && !byok && !named,
    };
    // A call its client named claims that id in the database before anything may answer it:
    // the hold is the claim (one per id and account), so a reused id is refused (409) before
    // the cache, its embedding or a provider is asked. Such a call is never held against a
    // lease (a lease's calls are checked in memory only) nor alongside the upstream call.
    if (named) await traced(caller.trace, "hold", placeHold(this.d.ledger, this.d.settlements, hold));

    // An answer grounded in a fresh web search is neither served from nor stored in the cache.
    // A BYOK key pays nothing here, so it gets no embeddings at our cost: it matches exactly.
    const cacheMode = o.web
      ? "off"
      : p.kind === "byok" && p.responseCacheMode === "semantic"
        ? "exact"
        : p.responseCacheMode;
    // A hit is free: its usage is recorded, and a hold placed for the call goes back in full.
    const release = (e: UsageEvent) => this.d.ledger.release(caller.requestId, e);
    // Exact matching only reads the database: a hit needs no credits (unless the call claimed its id).
    const exactHit =
      cacheMode !== "off" && this.d.cache
        ? await this.d.cache.lookup(p.keyId, cacheMode, cacheModel, request, "exact")
        : null;
    if (exactHit)
      return this.cachedHit(
        caller,
        exactHit,
        named ? release : (e) => this.d.ledger.record(caller.requestId, p.user.id, p.keyId, e),
      );

    let upstream = request;
    let mapping: Map<string, string> | null = null;
    if (p.piiMaskingEnabled && this.d.pii) {
      const masked = this.d.pii.mask(request.messages);
      if (masked.mapping) {
        mapping = masked.mapping;
        upstream = withMessages(request, masked.messages);
      }
    }

    // The hold's round trip overlaps the upstream call when the ledger's last answers for this
    // key leave room for it: nothing of the answer reaches the client before the hold is placed,
    // and a refused hold aborts the call (afterHold). Otherwise the hold goes first, as does
    // every call that pays someone else first (web search) or runs several calls (cascade, parallel).
    // Matching by similarity embeds the prompt, an upstream call we pay for: only after the hold.
    const similar = cacheMode === "semantic" && this.d.cache;
    const { pending: pendingHold } = named
      ? { pending: null }
      : await tracedHold(
          caller.trace,
          startHold(this.d.ledger, this.d.settlements, hold, { overlap: single && !similar }),
        );
    const hit = similar ? await similar.lookup(p.keyId, cacheMode, cacheModel, request, "similar") : null;
    if (hit) return this.cachedHit(caller, hit, release);
    this.d.keeper?.keep(caller.requestId); // until its settle or release starts
    const hedge = wantsHedge(o.prefs, p.hedge, policy?.route.engine);
    const plan: ChatPlan = {
      caller,
      requested: cacheModel,
      candidates,
      request,
      upstream,
      mapping,
      holdMicro: hold.amountMicro,
      holdTokens,
      prompt,
      byok,
      cacheMode,
      startedAt: performance.now(),
      policy,
      search: null,
      pendingHold,
      reasoningHint: o.reasoningHint === true,
      hedge,
      ...(continues && { continuation: new Continuation() }),
    };
    if (o.web) await searchBeforeCall(plan, o.web, searchMicro, this.d.search, (err) => this.bill.fail(plan, err));
    return { kind: "plan", plan };
  }

  /**
   * The input tokens of a request (count_tokens), the model resolved and authorized for the key
   * as for a call: the first provider's own count where it offers one (count.ts), else the
   * hold's estimate, the largest over the providers that may answer (a routing policy: the
   * Anthropic estimate). `source` is the counting provider's id or `estimate`. Nothing is held.
   */
  async countInput(
    p: KeyPrincipal,
    model: string,
    request: Omit<ChatRequest, "model">,
    signal?: AbortSignal,
  ): Promise<{ tokens: number; source: string }> {
    const snapshot = this.d.catalog();
    const resolution = resolveModel(snapshot, model);
    requireModality(snapshot, resolution, "text");
    checkAllowed(snapshot, p, resolution);
    const prompt = measurePrompt(request);
    const estimate = { tokens: holdInputTokens(prompt, "anthropic", ""), source: "estimate" };
    if (resolution.kind === "policy") return estimate;
    const candidates = buildCandidates(snapshot, resolution, this.candidateOptions(p, request));
    const first = candidates[0];
    const counted = first ? await providerCount(this.d, p, first, request, signal) : null;
    if (counted !== null) return { tokens: counted, source: first!.provider.id };
    return candidates.length
      ? {
          ...estimate,
          tokens: Math.max(
            ...candidates.map((c) => holdInputTokens(prompt, c.provider.protocol, c.offering.upstreamId)),
          ),
        }
      : estimate;
  }

  /** A response-cache hit: free; `close` records it (and gives back the hold, if one was placed). */
  private async cachedHit(
    caller: ChatCaller,
    hit: CachedAnswer,
    close: (e: UsageEvent) => Promise<unknown>,
  ): Promise<Prepared> {
    await close(this.bill.event(caller, hit.model, hit.provider, hit.result.usage, 200, true)).catch(
      swallowed("cache hit's usage record", { request_id: caller.requestId }),
    );
    caller.trace?.answered(hit.model, hit.provider, hit.result.usage, 0, { cached: true });
    return {
      kind: "cached",
      outcome: {
        result: hit.result,
        model: hit.model,
        provider: hit.provider,
        cost: this.bill.costOf(0n),
        cached: true,
      },
    };
  }

  /** Non-streaming call: retries and fallback, then settle; on failure the hold is released. */
  private async complete(plan: ChatPlan): Promise<ChatOutcome> {
    if (plan.policy && plan.policy.kind !== "single") {
      const answer = await this.orchestrate(plan, plan.policy);
      return this.answered(plan, answer.result, answer.candidate, () => this.bill.settleSum(plan, answer));
    }
    let won;
    const spec = plan.pendingHold ? new AbortController() : null;
    const signal = callSignal(plan, spec);
    try {
      won = await afterHold(
        plan.pendingHold,
        spec,
        this.attempts(
          plan,
          (c, a, s) =>
            this.timed(c, () =>
              this.d
                .providerFor(c.provider.protocol as Protocol)
                .chat(this.upstreamRequest(plan, c), this.ctx(plan, c, s, a)),
            ),
          signal,
        ),
      );
    } catch (e) {
      if (e instanceof HoldRefused) throw this.bill.refused(plan, e);
      const err = deadlineAware(plan, signal, e);
      await this.bill.fail(plan, err);
      throw err;
    }
    const { value: result, candidate } = won;
    return this.answered(plan, result, candidate, () => this.bill.settle(plan, candidate, result.usage, 200));
  }

  /** A JSON answer's end: PII restored, settled (`settle`), cited, cached. */
  private async answered(
    plan: ChatPlan,
    result: ChatResult,
    candidate: Candidate,
    settle: () => Promise<Cost>,
  ): Promise<ChatOutcome> {
    if (plan.mapping) {
      const m = plan.mapping;
      delete result.vendorBody; // it still holds the placeholders
      if (result.content) result.content = this.d.pii!.unmask(result.content, m);
      // The model may echo placeholders in tool-call arguments too; restored values keep the JSON valid.
      for (const tc of result.toolCalls ?? []) tc.function.arguments = this.d.pii!.unmask(tc.function.arguments, m);
    }
    const cost = await settle();
    plan.caller.trace?.answered(candidate.model.id, candidate.provider.id, result.usage, Number(cost.micro) / 1e6, {
      cached: false,
    });
    const outcome: ChatOutcome = {
      result,
      model: candidate.model.id,
      provider: candidate.provider.id,
      cost,
      cached: false,
      ...citationsOf(plan, result.content),
    };
    this.bill.remember(plan, outcome);
    return outcome;
  }

  /**
   * Opens a stream with retries and fallback; resolves once an upstream accepted, so nothing
   * has reached the client yet and a total failure is still an ordinary JSON error.
   * `raw` names the client's dialect: an upstream speaking it (and able to) sends its raw SSE
   * bytes for relaying, unless PII must be restored; null asks for typed events always.
   */
  private async openStream(plan: ChatPlan, raw: Protocol | null): Promise<OpenedStream> {
    plan.streamed = true;
    if (plan.policy && plan.policy.kind !== "single") {
      // cascade / parallel: only an accepted answer may reach the client, so run to the end first.
      const answer = await this.orchestrate(plan, plan.policy);
      plan.caller.trace?.streamOpened();
      return {
        kind: "typed",
        candidate: answer.candidate,
        events: replayAnswer(answer.result),
        abort: new AbortController(),
      };
    }
    const spec = plan.pendingHold ? new AbortController() : null;
    // The client's signal cuts the call only until a stream opens; a client that leaves an open
    // stream is AnswerStream.leave's business (the upstream is still read for its usage, for a while).
    const client = new ClientGate(plan.caller.signal);
    const outer = callSignal(plan, spec, client.signal);
    try {
      // A stream that may be continued is read as typed events: the gateway may have to write its rest itself.
      const wire = plan.continuation ? null : raw;
      const won = await afterHold(
        plan.pendingHold,
        spec,
        this.attempts(
          plan,
          (c, a, lane) => this.openOne(plan, c, a, lane, wire, plan.upstream, this.hedging(plan)),
          outer,
        ),
      );
      const opened =
        plan.continuation && won.value.kind === "typed"
          ? continuing(plan, won.value, (cs, requestFor, signal) => this.openContinuation(plan, cs, requestFor, signal))
          : won.value;
      client.opened(() => leaveStream(plan, opened, this.d.streamDrainMs ?? 0));
      plan.caller.trace?.streamOpened();
      return opened;
    } catch (e) {
      client.failed();
      if (e instanceof HoldRefused) throw this.bill.refused(plan, e);
      const err = deadlineAware(plan, outer, e);
      await this.bill.fail(plan, err);
      throw err;
    }
  }

  /** Opens one upstream stream of `base` on `c`; `prime` waits for its first content (a hedge race, a continuation). */
  private async openOne(
    plan: ChatPlan,
    c: Candidate,
    a: AttemptRecord | undefined,
    lane: AbortSignal | undefined,
    raw: Protocol | null,
    base: ChatPlan["upstream"],
    prime: boolean,
  ): Promise<OpenedStream> {
    const abort = new AbortController();
    const signal = lane ? AbortSignal.any([lane, abort.signal]) : abort.signal;
    const provider = this.d.providerFor(c.provider.protocol as Protocol);
    const req = this.upstreamRequest(plan, c, base);
    const at = performance.now();
    const attempt = a && { attempt: a };
    let opened: OpenedStream =
      raw === c.provider.protocol && !plan.mapping && provider.openRawStream && provider.rawScanner
        ? {
            kind: "raw",
            candidate: c,
            body: await this.timed(c, () => provider.openRawStream!(req, this.ctx(plan, c, signal, a)), true),
            scanner: provider.rawScanner(),
            abort,
            ...attempt,
          }
        : {
            kind: "typed",
            candidate: c,
            events: await this.timed(c, () => provider.chatStream(req, this.ctx(plan, c, signal, a)), true),
            abort,
            ...attempt,
          };
    // A hedge race is won by the first content on the wire, not by the first headers.
    if (prime) opened = await primed(opened);
    plan.opened = { at, ttftMs: performance.now() - at };
    return opened;
  }

  /** The continuation of a broken stream: the retry and fallback loop over `candidates`, each asked its own request. */
  private openContinuation(
    plan: ChatPlan,
    candidates: Candidate[],
    requestFor: (c: Candidate) => ChatPlan["upstream"],
    signal: AbortSignal,
  ) {
    const o = this.attemptOptions(plan, signal);
    // Policies set retries per entry of the whole list.
    const retriesOf = o.retriesOf && ((c: Candidate) => o.retriesOf!(c, plan.candidates.indexOf(c)));
    return withFallback(
      candidates,
      (c, a, lane) => this.openOne(plan, c, a, lane, null, requestFor(c), true) as Promise<TypedStream>,
      { ...o, ...(retriesOf && { retriesOf }) },
    );
  }

  private upstreamRequest(plan: ChatPlan, c: Candidate, base = plan.upstream): ChatRequest {
    // A max_tokens above the offering's output limit would be refused upstream; cap it instead.
    const max = c.offering.maxOutput;
    const maxTokens = max && base.max_tokens > max ? max : base.max_tokens;
    const req = { ...base, model: c.offering.upstreamId, max_tokens: maxTokens };
    return plan.reasoningHint && c.offering.capabilities.reasoning === false ? withoutReasoning(req) : req;
  }

  private ctx(plan: ChatPlan, c: Candidate, signal: AbortSignal | undefined, attempt?: AttemptRecord): CallContext {
    const ep = this.d.upstreamFor(c.provider, plan.caller.principal);
    return {
      providerId: c.provider.id,
      baseUrl: ep.baseUrl,
      apiKey: ep.apiKey,
      signal,
      firstByteTimeoutMs: this.d.firstByteTimeoutMs,
      idleTimeoutMs: this.d.idleTimeoutMs,
      forwardServiceTier: c.provider.serviceTier,
      traceparent: attempt?.traceparent,
      warn: (warnings) => noteWarnings(plan, c.provider.id, warnings),
    };
  }

  private attemptOptions(plan: ChatPlan, signal = plan.caller.signal): AttemptOptions {
    const x = plan.policy;
    return {
      retryBaseMs: this.d.retryBaseMs,
      requestId: plan.caller.requestId,
      trace: plan.caller.trace,
      signal,
      sleep: this.d.sleep,
      observe: this.d.observe,
      health: this.d.health,
      // Fallback policies give each entry its own retries; the candidates are aligned with them.
      ...(x?.kind === "single" && { retriesOf: (_c, i) => x.retries[i] ?? null }),
    };
  }

  /** Whether this call races a hedge (asked for, and a hedge port to time and count it). */
  private hedging(plan: ChatPlan): boolean {
    return plan.hedge === true && !!this.d.hedge && !plan.byok;
  }

  /** The retry and fallback loop of a single-answer call, hedged when asked (hedge.ts). */
  private attempts<T>(
    plan: ChatPlan,
    call: AttemptCall<T>,
    signal: AbortSignal | undefined,
  ): Promise<AttemptSuccess<T>> {
    const o = this.attemptOptions(plan, signal);
    const port = this.d.hedge;
    if (!port || !this.hedging(plan)) return withFallback(plan.candidates, call, o);
    return hedged(plan.candidates, call, o, {
      delayMs: port.delayMs(plan.candidates[0]!.provider.id),
      ended: (outcome, loser) => {
        // What the loser's provider may bill us: its input, estimated as the hold estimates it.
        const c = loser?.candidate;
        const promptTokens = c ? holdInputTokens(plan.prompt, c.provider.protocol, c.offering.upstreamId) : 0;
        const costMicro = c
          ? usageCostMicro(
              c.offering.pricing!,
              c.provider.caching,
              { promptTokens, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
              this.d.fxMilli,
            )
          : 0n;
        port.ended(outcome, c && { provider: c.provider.id, costMicro, waitedMs: loser!.waitedMs });
      },
    });
  }

  /** The `X-Policy-Decision` header value of a policy call (complete once the call ran); null otherwise. */
  private decisionOf(plan: ChatPlan): string | null {
    return plan.policy ? executionHeader(plan.policy) : null;
  }

  /** Times one upstream attempt for the latency engine (streams report their total at the end). */
  private async timed<T>(c: Candidate, f: () => Promise<T>, stream = false): Promise<T> {
    const observe = this.d.policies?.observe?.bind(this.d.policies);
    if (!observe) return f();
    const t0 = performance.now();
    try {
      const v = await f();
      if (!stream) observe(c.model.id, c.provider.id, true, performance.now() - t0, performance.now() - t0);
      return v;
    } catch (e) {
      // A rejected request says nothing about the model's speed; failures and timeouts do.
      if (e instanceof UpstreamError && e.kind !== "rejected")
        observe(c.model.id, c.provider.id, false, performance.now() - t0, performance.now() - t0);
      throw e;
    }
  }

  /** Runs a cascade or parallel policy: several sub-calls, each priced; on failure the hold is released. */
  private async orchestrate(
    plan: ChatPlan,
    x: Extract<PolicyExecution, { kind: "cascade" | "parallel" }>,
  ): Promise<OrchestratedAnswer> {
    const call: SubCaller = async (candidates, request, retries, signal) => {
      const won = await withFallback(
        candidates,
        (c, a) =>
          this.timed(c, () =>
            this.d
              .providerFor(c.provider.protocol as Protocol)
              .chat({ ...request, model: c.offering.upstreamId }, this.ctx(plan, c, signal, a)),
          ),
        { ...this.attemptOptions(plan, signal), retriesOf: () => retries },
      );
      const c = won.candidate;
      const costMicro = plan.byok
        ? 0n
        : usageCostMicro(c.offering.pricing!, c.provider.caching, won.value.usage, this.d.fxMilli);
      return { result: won.value, candidate: c, costMicro };
    };
    try {
      const input = { request: plan.upstream, call, signal: plan.caller.signal };
      const answer =
        x.kind === "cascade" ? await runCascade(x, input, plan.startedAt) : await runParallel(x, input, plan.startedAt);
      x.outcome = answer;
      return answer;
    } catch (e) {
      await this.bill.fail(plan, e);
      throw e;
    }
  }

  private candidateOptions(p: KeyPrincipal, request: Omit<ChatRequest, "model">, prefs?: ProviderPrefs) {
    const available = this.d.available?.bind(this.d);
    return {
      prefs,
      consent: p.user.xborderTrainingConsent,
      byokProvider: p.kind === "byok" ? p.byokProvider : null,
      latencyOf: this.d.latencyOf,
      priced: pricedOptionsOf(request),
      available,
    };
  }
}
