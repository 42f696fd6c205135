/**
 * A chat call's money after its hold: the usage event, the settle (or the release of a failed
 * call), a stream's bill at its end (partial, continued, or a replayed cascade/parallel answer's
 * summed cost), and the response-cache write of an answer that was charged. Every path settles
 * or releases the call's hold exactly once.
 */
import { GatewayError } from "../errors";
import { getModel, type CatalogSnapshot } from "../catalog/types";
import type { UsageEvent } from "../billing/ledger";
import { callPrice } from "../billing/call-price";
import { swallowed } from "../../lib/log";
import { executionHeader, type OrchestratedAnswer } from "../routing/execution";
import type { Candidate } from "../routing/candidates";
import type { ChatCaller, ChatOutcome, ChatPlan, StreamEnd } from "./plan";
import { costOf, type Cost } from "../billing/cost";
import type { CachedAnswer, ChatDeps } from "./ports";
import { streamUsageEstimate } from "./estimate";
import type { ChatResult, Usage } from "../model/types";
import type { Continuation } from "./continuation";
import { billParts, summedUsage, type PartBill } from "./continuation-bill";
import { errorName } from "./traced";
import { trailOf } from "./trail";

/** A stream's bill: its charge, its usage and, for a continued stream, each part's (continuation.ts). */
export interface StreamBill {
  cost: Cost;
  usage: Usage;
  parts?: (PartBill & { cost: Cost })[];
}

/** A failed stream's status in its usage record: 503 when the stopping process ended it, else the upstream's 502. */
const failedStatus = (plan: ChatPlan) => (plan.cut ? 503 : 502);

export class CallBill {
  constructor(private d: ChatDeps) {}

  costOf(micro: bigint): Cost {
    return costOf(micro, this.d.fxMilli);
  }

  async closeStream(plan: ChatPlan, candidate: Candidate, end: StreamEnd): Promise<StreamBill> {
    plan.ended = true;
    clearTimeout(plan.drain);
    const complete = end.ending === "complete";
    const answered = plan.policy?.outcome;
    if (answered) return this.finishOrchestrated(plan, answered, complete, end.result);
    if (plan.continuation?.continued) return this.closeContinued(plan, plan.continuation, end);
    // Only a finished stream is a latency sample: a break-off may be the client's doing.
    if (plan.opened && complete)
      this.d.policies?.observe?.(
        candidate.model.id,
        candidate.provider.id,
        true,
        plan.opened.ttftMs,
        performance.now() - plan.opened.at,
      );
    const u =
      end.usage ??
      streamUsageEstimate(
        // A relayed Messages body is billed as what it was: the client's own blocks, all of them.
        candidate.provider.protocol === "anthropic" && plan.native && plan.upstream.anthropic
          ? plan.native
          : plan.prompt,
        plan.upstream.messages,
        candidate.provider.protocol,
        candidate.offering.upstreamId,
        end,
      );
    try {
      if (end.ending === "failed" && !end.usage && !end.text && !end.toolCalls.length) {
        // No partial output: nothing to bill (spec: "Only that part is billed").
        this.d.keeper?.drop(plan.caller.requestId);
        await this.d.ledger.release(
          plan.caller.requestId,
          this.event(
            plan.caller,
            candidate.model.id,
            candidate.provider.id,
            u,
            failedStatus(plan),
            false,
            undefined,
            plan,
          ),
        );
        return { cost: this.costOf(0n), usage: u };
      }
      const cost = await this.settle(
        plan,
        candidate,
        u,
        complete ? 200 : end.ending === "client_left" ? 499 : failedStatus(plan),
      );
      if (complete && end.result)
        this.remember(plan, {
          result: end.result,
          model: candidate.model.id,
          provider: candidate.provider.id,
          cost,
          cached: false,
        });
      return { cost, usage: u };
    } catch {
      return { cost: this.costOf(0n), usage: u }; // the sweeper releases a hold we could not close
    }
  }

  /** A continued stream's end: every part at its own price, summed, settled once (continuation-bill.ts). */
  async closeContinued(plan: ChatPlan, k: Continuation, end: StreamEnd): Promise<StreamBill> {
    this.d.continued?.(k.parts[0]!.candidate.provider.id, k.last!.candidate.provider.id, end.ending);
    const complete = end.ending === "complete";
    const { bills, micro } = billParts(k, plan.prompt, end, {
      fxMilli: this.d.fxMilli,
      byok: plan.byok,
      minimum: complete,
    });
    const usage = summedUsage(bills);
    const parts = bills.map((b) => ({ ...b, cost: this.costOf(b.micro) }));
    const last = k.last!.candidate;
    const event = (status: number) =>
      this.event(plan.caller, last.model.id, last.provider.id, usage, status, false, undefined, plan);
    try {
      if (end.ending === "failed" && micro === 0n && !end.text && !end.toolCalls.length) {
        this.d.keeper?.drop(plan.caller.requestId);
        await this.d.ledger.release(plan.caller.requestId, event(failedStatus(plan)));
        return { cost: this.costOf(0n), usage, parts };
      }
      const cost = await this.charge(
        plan,
        micro + this.extrasMicro(plan),
        usage,
        event(complete ? 200 : end.ending === "client_left" ? 499 : failedStatus(plan)),
      );
      if (complete && end.result)
        this.remember(plan, {
          result: { ...end.result, usage },
          model: last.model.id,
          provider: last.provider.id,
          cost,
          cached: false,
        });
      return { cost, usage, parts };
    } catch {
      return { cost: this.costOf(0n), usage, parts };
    }
  }

  /**
   * Charges the call (Settlements decides whether the answer waits for the settle to land): its
   * tokens (call-price.ts; a success, status under 400, pays at least the minimum) and extras.
   */
  settle(plan: ChatPlan, c: Candidate, usage: Usage, status: number): Promise<Cost> {
    const terms = { fxMilli: this.d.fxMilli, byok: plan.byok, minimum: status < 400 };
    return this.charge(
      plan,
      callPrice([{ candidate: c, usage }], terms).micro + this.extrasMicro(plan),
      usage,
      this.event(plan.caller, c.model.id, c.provider.id, usage, status, false, undefined, plan),
    );
  }

  /**
   * Settles the call; resolves when the answer may leave (see Settlements: LEDGER_SETTLE). The
   * ledger charges at most the hold (and counts a charge it capped): the cost shown is capped so.
   */
  async charge(plan: ChatPlan, micro: bigint, u: Usage, event: UsageEvent): Promise<Cost> {
    this.d.keeper?.drop(plan.caller.requestId);
    const end = plan.caller.trace?.phase("settle");
    try {
      await this.d.settlements.start({
        id: plan.caller.requestId,
        userId: plan.caller.principal.user.id,
        costMicro: micro,
        tokens: u.promptTokens + u.completionTokens,
        event,
      });
    } catch (e) {
      end?.(errorName(e));
      throw e;
    }
    end?.();
    return this.costOf(micro > plan.holdMicro ? plan.holdMicro : micro);
  }

  /**
   * What a call pays beside its tokens: the gateway's web search (docs/web-search.md) and a
   * hedge's loser (docs/hedging.md, "Money"; cascade and parallel calls are never hedged).
   */
  private extrasMicro(plan: ChatPlan): bigint {
    return (plan.search?.priceMicro ?? 0n) + (plan.hedgeLoser?.micro ?? 0n);
  }

  /** A hold that travelled alongside the call was refused: nothing was held, nothing to keep. */
  refused(plan: ChatPlan, error: unknown): unknown {
    this.d.keeper?.drop(plan.caller.requestId);
    return error;
  }

  async fail(plan: ChatPlan, e: unknown): Promise<void> {
    this.d.keeper?.drop(plan.caller.requestId);
    const status = e instanceof GatewayError ? e.status : 499;
    plan.errorCode = e instanceof GatewayError ? e.errorCode : "client_closed";
    const first = plan.candidates[0]!;
    await this.d.ledger
      .release(
        plan.caller.requestId,
        this.event(
          plan.caller,
          first.model.id,
          null,
          { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
          status,
          false,
          undefined,
          plan,
        ),
      )
      // The sweeper releases the hold at its expiry: the account is held, never charged.
      .catch(swallowed("hold release after a failed call", { request_id: plan.caller.requestId }));
  }

  remember(plan: ChatPlan, outcome: ChatOutcome): void {
    if (plan.cacheMode === "off" || !this.d.cache) return;
    const { vendorBody: _, ...result } = outcome.result;
    const answer: CachedAnswer = { result, model: outcome.model, provider: outcome.provider };
    this.d.cache
      .store(plan.caller.principal.keyId, plan.cacheMode, plan.requested, plan.request, answer)
      .catch(() => {});
  }

  event(
    caller: ChatCaller,
    model: string,
    provider: string | null,
    u: Usage,
    status: number,
    cached: boolean,
    snapshot?: CatalogSnapshot,
    plan?: ChatPlan,
  ): UsageEvent {
    const maker = getModel(snapshot ?? this.d.catalog(), model)?.maker ?? null;
    const { promptTokens, completionTokens, cachedTokens, cacheWriteTokens } = u;
    const latencyMs = plan ? Math.round(performance.now() - plan.startedAt) : 0;
    const ttftMs = plan?.opened ? Math.round(plan.opened.at + plan.opened.ttftMs - plan.startedAt) : null;
    const errorCode = status < 400 ? null : (plan?.errorCode ?? (status === 499 ? "client_closed" : "upstream_error"));
    const trail = trailOf(plan?.attempts);
    if (trail) this.d.attemptTrail?.keep(caller.requestId, caller.principal.user.id, trail);
    return {
      model,
      provider,
      maker,
      modality: "text",
      app: caller.app,
      status,
      promptTokens,
      completionTokens,
      cachedTokens,
      cacheWriteTokens,
      fxMilli: this.d.fxMilli,
      latencyMs,
      cached,
      api: caller.api ?? "chat",
      streamed: plan?.streamed ?? false,
      ttftMs,
      errorCode,
      policyDecision: plan?.policy ? executionHeader(plan.policy) : null,
    };
  }

  /**
   * The end of a replayed cascade/parallel stream: the sub-calls already ran and were paid
   * upstream, so their sum is charged even when the client left during the replay.
   */
  async finishOrchestrated(
    plan: ChatPlan,
    answer: OrchestratedAnswer,
    complete: boolean,
    result?: ChatResult,
  ): Promise<{ cost: Cost; usage: Usage }> {
    try {
      const cost = await this.settleSum(plan, answer);
      if (complete && result)
        this.remember(plan, {
          result,
          model: answer.candidate.model.id,
          provider: answer.candidate.provider.id,
          cost,
          cached: false,
        });
      return { cost, usage: answer.result.usage };
    } catch {
      return { cost: this.costOf(0n), usage: answer.result.usage };
    }
  }

  /**
   * One settlement for all sub-calls: their summed cost (the minimum charge applies once). The
   * sub-calls ran and were paid upstream: a success even when the client left during the replay.
   */
  settleSum(plan: ChatPlan, a: OrchestratedAnswer): Promise<Cost> {
    const terms = { fxMilli: this.d.fxMilli, byok: plan.byok, minimum: true };
    const micro = callPrice(a.parts, terms).micro + this.extrasMicro(plan);
    const u = a.result.usage;
    return this.charge(
      plan,
      micro,
      u,
      this.event(plan.caller, a.candidate.model.id, a.candidate.provider.id, u, 200, false, undefined, plan),
    );
  }
}
