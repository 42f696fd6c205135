/**
 * One chat call, dialect-neutral, from the client's request to its settled answer (`run`):
 * everything before the upstream call is prepare.ts (model, candidates, hold, cache, PII, web
 * search); here the upstream call with retries, fallback, hedging and routing-policy execution,
 * and the settle (or release) exactly once, for a JSON answer here and for a stream at its end
 * (answer-stream.ts).
 * Client dialects (OpenAI chat, Responses, Messages) convert in and encode out around it.
 */
import type { KeyPrincipal } from "../auth/principal";
import { callPrice } from "../billing/call-price";
import { withFallback, type AttemptCall, type AttemptOptions, type AttemptSuccess } from "./attempts";
import { hedged } from "./hedge";
import { primed } from "./primed";
import type { ChatCaller, ChatOptions, ChatOutcome, ChatPlan, OpenedStream } from "./plan";
import type { Cost } from "../billing/cost";
import type { ChatRun } from "./call-stream";
import { callWarnings } from "./warnings";
import { AnswerStream, cachedStream, leaveStream } from "./answer-stream";
import { type Candidate } from "../routing/candidates";
import { holdInputTokens } from "./estimate";
import { citationsOf } from "./web-search-step";
import type { ChatDeps } from "./ports";
import { type Protocol, type RelayDialect } from "../model/provider";
import { UpstreamError } from "../upstream/error";
import { executionHeader, type OrchestratedAnswer, type PolicyExecution } from "../routing/execution";
import { runCascade, runParallel, type SubCaller } from "../routing/orchestrate";
import { replayAnswer } from "../routing/replay";
import type { ChatRequest, ChatResult } from "../model/types";
import { unmaskAnthropicAnswer } from "./pii-native";
import { unmaskResponsesAnswer } from "./pii-responses";
import { raceHold, type HoldRace } from "./hold";
import { callSignal, ClientGate, deadlineAware } from "./call-signals";
import type { AttemptRecord } from "../model/trace";
import { trailing } from "./trail";
import { continuing, type TypedStream } from "./continuation";
import { CallBill } from "./call-bill";
import { countInput as countInputTokens, prepareCall } from "./prepare";
import { answerNotice } from "./lifecycle";
import { attemptContext, upstreamRequest } from "./attempt-request";

export type { ChatCaller, ChatOptions, ChatOutcome } from "./plan";
export type { Cost } from "../billing/cost";
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
    const prepared = await prepareCall(this.d, this.bill, caller, o);
    if (prepared.kind === "cached") {
      const lifecycle = this.notice(prepared.outcome.model, prepared.outcome.provider);
      return o.stream
        ? { kind: "stream", stream: cachedStream(prepared.outcome), decision: null, warnings: [], lifecycle }
        : { kind: "json", outcome: prepared.outcome, decision: null, warnings: [], lifecycle };
    }
    const plan = prepared.plan;
    if (!o.stream) {
      const outcome = await this.complete(plan);
      return {
        kind: "json",
        outcome,
        decision: this.decisionOf(plan),
        warnings: callWarnings(plan, outcome.provider),
        lifecycle: this.notice(outcome.model, outcome.provider),
      };
    }
    const opened = await this.openStream(plan, o.relay ?? null);
    const warnings = callWarnings(plan, opened.candidate.provider.id);
    return {
      kind: "stream",
      stream: new AnswerStream(plan, opened, this.d, this.bill),
      decision: this.decisionOf(plan),
      warnings,
      lifecycle: this.notice(opened.candidate.model.id, opened.candidate.provider.id),
    };
  }

  /** The answering model's lifecycle notice (deprecation, sunset), for the answer's headers. */
  private notice(model: string, provider: string | null) {
    return answerNotice(this.d, this.d.catalog(), model, provider);
  }

  /**
   * The input tokens of a count_tokens request (prepare.ts, countInput); nothing is held.
   * `upstream` false: the gateway's estimate only, no provider is asked.
   */
  countInput(
    p: KeyPrincipal,
    model: string,
    request: Omit<ChatRequest, "model">,
    signal?: AbortSignal,
    upstream = true,
  ): Promise<{ tokens: number; source: string }> {
    return countInputTokens(this.d, p, model, request, signal, upstream);
  }

  /** Non-streaming call: retries and fallback, then settle; on failure the hold is released. */
  private async complete(plan: ChatPlan): Promise<ChatOutcome> {
    if (plan.policy && plan.policy.kind !== "single") {
      const answer = await this.orchestrate(plan, plan.policy);
      return this.answered(plan, answer.result, answer.candidate, answer);
    }
    let race: HoldRace<AttemptSuccess<ChatResult>>;
    const signal = callSignal(plan);
    const call: AttemptCall<ChatResult> = (c, a, s) => this.chatOnce(plan, c, a, s);
    try {
      // A hold placed already (against a lease, or first) leaves nothing to race.
      race = plan.pendingHold
        ? await raceHold(plan.pendingHold, signal, (held) => this.attempts(plan, call, held))
        : { kind: "held", value: await this.attempts(plan, call, signal) };
    } catch (e) {
      const err = deadlineAware(plan, signal, e);
      await this.bill.fail(plan, err);
      throw err;
    }
    if (race.kind === "refused") throw this.bill.refused(plan, race.error);
    const { value: result, candidate } = race.value;
    return this.answered(plan, result, candidate);
  }

  /** One upstream attempt of a JSON call, timed for the latency engine when it watches. */
  private chatOnce(
    plan: ChatPlan,
    c: Candidate,
    a: AttemptRecord | undefined,
    signal: AbortSignal | undefined,
  ): Promise<ChatResult> {
    // The provider's own promise when nothing times it: no async call only to pass it on.
    if (!this.d.policies?.observe)
      return this.d
        .providerFor(c.provider.protocol as Protocol)
        .chat(upstreamRequest(plan, c), attemptContext(this.d, plan, c, signal, a));
    return this.chatTimed(plan, c, a, signal);
  }

  /** chatOnce, timed for the latency engine (timed() without its closure: every JSON call's attempt). */
  private async chatTimed(
    plan: ChatPlan,
    c: Candidate,
    a: AttemptRecord | undefined,
    signal: AbortSignal | undefined,
  ): Promise<ChatResult> {
    const provider = this.d.providerFor(c.provider.protocol as Protocol);
    const t0 = performance.now();
    try {
      const v = await provider.chat(upstreamRequest(plan, c), attemptContext(this.d, plan, c, signal, a));
      this.latency(c, t0, true);
      return v;
    } catch (e) {
      this.latency(c, t0, false, e);
      throw e;
    }
  }

  /**
   * A JSON answer's end: PII restored, settled (a policy's `orchestrated` answer at the sum of
   * its sub-calls), cited, cached.
   */
  private async answered(
    plan: ChatPlan,
    result: ChatResult,
    candidate: Candidate,
    orchestrated?: OrchestratedAnswer,
  ): Promise<ChatOutcome> {
    if (plan.mapping) {
      const m = plan.mapping;
      // The upstream's own answer is restored in place: its text and tool inputs, never its thinking.
      if (result.vendorBody)
        result.vendorBody =
          result.vendorBody.object === "response"
            ? unmaskResponsesAnswer(result.vendorBody, m)
            : unmaskAnthropicAnswer(result.vendorBody, m);
      if (result.content) result.content = this.d.pii!.unmask(result.content, m);
      // The model may echo placeholders in tool-call arguments too; restored values keep the JSON valid.
      for (const tc of result.toolCalls ?? []) tc.function.arguments = this.d.pii!.unmask(tc.function.arguments, m);
    }
    const cost = await (orchestrated
      ? this.bill.settleSum(plan, orchestrated)
      : this.bill.settle(plan, candidate, result.usage, 200));
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
  private async openStream(plan: ChatPlan, raw: RelayDialect | null): Promise<OpenedStream> {
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
    // The client's signal cuts the call only until a stream opens; a client that leaves an open
    // stream is AnswerStream.leave's business (the upstream is still read for its usage, for a while).
    const client = new ClientGate(plan.caller.signal);
    const outer = callSignal(plan, client.signal);
    // A stream that may be continued is read as typed events: the gateway may have to write its rest itself.
    const wire = plan.continuation ? null : raw;
    let race;
    try {
      race = await raceHold(plan.pendingHold, outer, (held) =>
        this.attempts(
          plan,
          (c, a, lane) => this.openOne(plan, c, a, lane, wire, plan.upstream, this.hedging(plan)),
          held,
        ),
      );
    } catch (e) {
      client.failed();
      const err = deadlineAware(plan, outer, e);
      await this.bill.fail(plan, err);
      throw err;
    }
    if (race.kind === "refused") {
      client.failed();
      throw this.bill.refused(plan, race.error);
    }
    const won = race.value.value;
    const opened =
      plan.continuation && won.kind === "typed"
        ? continuing(plan, won, (cs, requestFor, signal) => this.openContinuation(plan, cs, requestFor, signal))
        : won;
    client.opened(() => leaveStream(plan, opened, this.d.streamDrainMs ?? 0));
    plan.caller.trace?.streamOpened();
    return opened;
  }

  /** Opens one upstream stream of `base` on `c`; `prime` waits for its first content (a hedge race, a continuation). */
  private async openOne(
    plan: ChatPlan,
    c: Candidate,
    a: AttemptRecord | undefined,
    lane: AbortSignal | undefined,
    raw: RelayDialect | null,
    base: ChatPlan["upstream"],
    prime: boolean,
  ): Promise<OpenedStream> {
    const abort = new AbortController();
    const signal = lane ? AbortSignal.any([lane, abort.signal]) : abort.signal;
    const provider = this.d.providerFor(c.provider.protocol as Protocol);
    const req = upstreamRequest(plan, c, base);
    const at = performance.now();
    const attempt = a && { attempt: a };
    // A masked call is relayed too where the provider can restore its events (model/relay.ts).
    const mapping = plan.mapping;
    const relayable = !mapping || !!provider.rawRestorer;
    // The dialect the upstream answers in: the Responses API when the client's own Responses body goes.
    const dialect: RelayDialect = req.responses ? "responses" : (c.provider.protocol as Protocol);
    let opened: OpenedStream =
      raw === dialect && relayable && provider.openRawStream && provider.rawScanner
        ? {
            kind: "raw",
            candidate: c,
            body: await this.timed(
              c,
              () => provider.openRawStream!(req, attemptContext(this.d, plan, c, signal, a)),
              true,
            ),
            scanner: provider.rawScanner(req),
            ...(mapping ? { restorer: provider.rawRestorer!(mapping, req) } : undefined),
            abort,
            ...attempt,
          }
        : {
            kind: "typed",
            candidate: c,
            events: await this.timed(
              c,
              () => provider.chatStream(req, attemptContext(this.d, plan, c, signal, a)),
              true,
            ),
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
      { ...o, ...(retriesOf ? { retriesOf } : undefined) },
    );
  }

  private attemptOptions(plan: ChatPlan, signal = plan.caller.signal): AttemptOptions {
    const x = plan.policy;
    return {
      retryBaseMs: this.d.retryBaseMs,
      requestId: plan.caller.requestId,
      trace: trailing((plan.attempts ??= []), plan.caller.trace),
      signal,
      sleep: this.d.sleep,
      observe: this.d.observe,
      health: this.d.health,
      account: plan.caller.principal.user.id,
      // Fallback policies give each entry its own retries; the candidates are aligned with them.
      ...(x?.kind === "single" ? { retriesOf: (_c, i) => x.retries[i] ?? null } : undefined),
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
        const usage = { promptTokens, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
        // A part of the call, not a call: no minimum of its own.
        const terms = { fxMilli: this.d.fxMilli, byok: plan.byok, minimum: false };
        const costMicro = c ? callPrice([{ candidate: c, usage }], terms).micro : 0n;
        // The client pays it with the answer (docs/hedging.md, "Money"): the key's owner chose hedging.
        if (c) plan.hedgeLoser = { provider: c.provider.id, micro: costMicro };
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
    if (!this.d.policies?.observe) return f();
    const t0 = performance.now();
    try {
      const v = await f();
      if (!stream) this.latency(c, t0, true);
      return v;
    } catch (e) {
      this.latency(c, t0, false, e);
      throw e;
    }
  }

  /**
   * An attempt's time for the latency engine: a JSON answer's first token is its whole time; a
   * rejected request says nothing about the model's speed, failures and timeouts do. Called as
   * a method, not bound: a bound copy per attempt was garbage on every call.
   */
  private latency(c: Candidate, t0: number, ok: boolean, error?: unknown): void {
    const policies = this.d.policies;
    if (!policies?.observe) return;
    const ms = performance.now() - t0;
    if (ok) policies.observe(c.model.id, c.provider.id, true, ms, ms);
    else if (error instanceof UpstreamError && error.kind !== "rejected")
      policies.observe(c.model.id, c.provider.id, false, ms, ms);
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
              .chat({ ...request, model: c.offering.upstreamId }, attemptContext(this.d, plan, c, signal, a)),
          ),
        { ...this.attemptOptions(plan, signal), retriesOf: () => retries },
      );
      const c = won.candidate;
      // A sub-call's own price (for the policy's cost limit); the minimum applies to the sum (settleSum).
      const terms = { fxMilli: this.d.fxMilli, byok: plan.byok, minimum: false };
      const costMicro = callPrice([{ candidate: c, usage: won.value.usage }], terms).micro;
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
}
