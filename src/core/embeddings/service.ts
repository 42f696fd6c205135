/**
 * One embeddings call: choose the candidates (4xx before any money moves), hold credits for
 * the most the input can cost, call upstream with the chat rules of retries and fallback
 * (attempts.ts), and settle the input tokens at the catalog's price, or release the hold on
 * failure, exactly once. The vectors go to a spool as they arrive (never the whole answer in
 * memory); the outcome hands it to the caller, who writes it out and closes it.
 */
import { GatewayError } from "../errors";
import type { UsageEvent } from "../billing/ledger";
import { callPrice } from "../billing/call-price";
import { getModel } from "../catalog/types";
import { withFallback } from "../chat/attempts";
import type { Candidate } from "../routing/candidates";
import { placeHold, worstHoldMicro } from "../chat/hold";
import { costOf } from "../billing/cost";
import { maxVectorBytes, type CallContext, type EmbeddingSink, type Protocol } from "../model/provider";
import { UpstreamError } from "../upstream/error";
import { Spool } from "../../lib/spool";
import type { Usage } from "../model/types";
import type { AttemptRecord } from "../model/trace";
import { embeddingCandidates } from "./candidates";
import { answerNotice } from "../chat/lifecycle";
import { chargedTokensOf, holdTokensOf } from "./estimate";
import type { EmbeddingCall, EmbeddingCaller, EmbeddingDeps, EmbeddingOutcome } from "./types";
import { swallowed } from "../../lib/log";
import type { CallWarning } from "../upstream/warnings";

const usageOf = (promptTokens: number): Usage => ({
  promptTokens,
  completionTokens: 0,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
});

export class EmbeddingService {
  constructor(private deps: EmbeddingDeps) {}

  async embed(caller: EmbeddingCaller, call: EmbeddingCall): Promise<EmbeddingOutcome> {
    const snapshot = this.deps.catalog();
    const p = caller.principal;
    caller.trace?.requested(call.model);
    const candidates = embeddingCandidates(snapshot, p, call, this.deps);
    const byok = p.kind === "byok";
    const holdTokens = holdTokensOf(call.inputs);
    const holdMicro = byok ? 0n : worstHoldMicro(candidates, () => holdTokens, 0, this.deps.fxMilli);
    const startedAt = performance.now();
    const event = (c: Candidate | null, u: Usage, status: number): UsageEvent => ({
      model: c?.model.id ?? candidates[0]!.model.id,
      provider: c?.provider.id ?? null,
      maker: getModel(snapshot, candidates[0]!.model.id)?.maker ?? null,
      modality: "embedding",
      api: "embeddings",
      app: caller.app,
      status,
      promptTokens: u.promptTokens,
      completionTokens: 0,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      fxMilli: this.deps.fxMilli,
      latencyMs: Math.round(performance.now() - startedAt),
      cached: false,
    });

    const hold = {
      id: caller.requestId,
      userId: p.user.id,
      keyId: p.keyId,
      amountMicro: holdMicro,
      tokens: holdTokens,
      ttlSeconds: this.deps.holdTtlSeconds,
    };
    const endHold = caller.trace?.phase("hold");
    try {
      await placeHold(this.deps.ledger, this.deps.settlements, hold);
      endHold?.();
    } catch (e) {
      endHold?.(e instanceof GatewayError ? e.errorCode : "error");
      throw e;
    }
    this.deps.keeper?.keep(caller.requestId);

    // What each provider's request left out, for the one that answers.
    const warned = new Map<string, CallWarning[]>();
    const ctx = (c: Candidate, a?: AttemptRecord): CallContext => ({
      ...this.ctx(caller, c, a),
      warn: (w) => warned.set(c.provider.id, w),
    });
    // The answer goes to a spool as it arrives (memory, then an unlinked temporary file), bounded
    // by what the asked numbers can take; each attempt starts it over.
    const perVector = maxVectorBytes(call.dimensions ?? candidates[0]!.model.dimensions ?? undefined);
    const spool = new Spool(
      call.inputs.length * perVector,
      () =>
        new UpstreamError(
          "transient",
          "the embeddings answer is larger than asked for",
          200,
          undefined,
          undefined,
          "bad_answer",
        ),
    );
    const sink: EmbeddingSink = { encoding: call.encoding, write: (b) => spool.write(b), end: () => spool.end() };
    let won;
    try {
      won = await withFallback(
        candidates,
        (c, a) => {
          spool.reset();
          return this.deps
            .embedderFor(c.provider.protocol as Protocol)!
            .embedTo(
              call.inputs,
              c.offering.upstreamId,
              ctx(c, a),
              { dimensions: call.dimensions, user: call.user },
              sink,
            );
        },
        {
          retryBaseMs: this.deps.retryBaseMs,
          requestId: caller.requestId,
          trace: caller.trace,
          signal: caller.signal,
          sleep: this.deps.sleep,
          observe: this.deps.observe,
        },
      );
    } catch (e) {
      spool.close();
      this.deps.keeper?.drop(caller.requestId);
      const status = e instanceof GatewayError ? e.status : 499;
      await this.deps.ledger
        .release(caller.requestId, event(null, usageOf(0), status))
        .catch(swallowed("hold release after a failed embedding call", { request_id: caller.requestId }));
      throw e;
    }

    const c = won.candidate;
    const usage = usageOf(won.value.promptTokens ?? chargedTokensOf(call.inputs));
    const micro = callPrice([{ candidate: c, usage }], { fxMilli: this.deps.fxMilli, byok, minimum: true }).micro;
    this.deps.keeper?.drop(caller.requestId);
    const endSettle = caller.trace?.phase("settle");
    try {
      await this.deps.settlements.start({
        id: caller.requestId,
        userId: p.user.id,
        costMicro: micro,
        tokens: usage.promptTokens,
        event: event(c, usage, 200),
      });
    } catch (e) {
      spool.close();
      throw e;
    }
    endSettle?.();
    const cost = costOf(micro > holdMicro ? holdMicro : micro, this.deps.fxMilli);
    caller.trace?.answered(c.model.id, c.provider.id, usage, Number(cost.micro) / 1e6, { cached: false });
    return {
      spool,
      order: won.value.order,
      model: c.model.id,
      provider: c.provider.id,
      promptTokens: usage.promptTokens,
      cost,
      warnings: warned.get(c.provider.id) ?? [],
      lifecycle: answerNotice(this.deps, snapshot, c.model.id, c.provider.id),
    };
  }

  private ctx(caller: EmbeddingCaller, c: Candidate, attempt?: AttemptRecord): CallContext {
    const ep = this.deps.upstreamFor(c.provider, caller.principal);
    return {
      providerId: c.provider.id,
      baseUrl: ep.baseUrl,
      apiKey: ep.apiKey,
      signal: caller.signal,
      firstByteTimeoutMs: this.deps.firstByteTimeoutMs,
      idleTimeoutMs: this.deps.idleTimeoutMs,
      traceparent: attempt?.traceparent,
    };
  }
}
