/**
 * Running `cascade` and `parallel`: several sub-calls for one client call. The chat service
 * supplies `call` (one answer from a candidate group, with retries and provider fallback, and
 * what it cost) and bills the sum once, under the one hold placed for the worst case. Every
 * successful sub-call counts, including refused tiers and judge calls, because the upstream
 * charged for them; the returned usage is the sum of all of them.
 */
import { GatewayError } from "../errors";
import type { CallPart } from "../billing/call-price";
import { DEADLINE_MISSED } from "./execution";
import type { Candidate } from "./candidates";
import { emptyUsage, type ChatRequest, type ChatResult, type Usage } from "../model/types";
import { checkResponse, judgeRequest, parseVerdict } from "./cascade";
import type { OrchestratedAnswer, PolicyExecution } from "./execution";
import { synthesisRequest } from "./parallel";

export interface SubCall {
  result: ChatResult;
  candidate: Candidate;
  costMicro: bigint;
}

export type SubCaller = (
  candidates: readonly Candidate[],
  request: Omit<ChatRequest, "model">,
  retries: number | null,
  signal: AbortSignal,
) => Promise<SubCall>;

export interface RunInput {
  request: Omit<ChatRequest, "model">;
  call: SubCaller;
  /** The client's signal (disconnect). */
  signal?: AbortSignal;
}

type Cascade = Extract<PolicyExecution, { kind: "cascade" }>;
type Parallel = Extract<PolicyExecution, { kind: "parallel" }>;

/** Sums usage and price over sub-calls, and keeps each one's for the settle (call-price.ts). */
class Tally {
  micro = 0n;
  usage: Usage = emptyUsage();
  parts: CallPart[] = [];
  add(s: SubCall): void {
    this.micro += s.costMicro;
    this.parts.push({ candidate: s.candidate, usage: s.result.usage });
    const u = s.result.usage;
    this.usage.promptTokens += u.promptTokens;
    this.usage.completionTokens += u.completionTokens;
    this.usage.cachedTokens += u.cachedTokens;
    this.usage.cacheWriteTokens += u.cacheWriteTokens;
    this.usage.reasoningTokens += u.reasoningTokens;
  }
  answer(s: SubCall): OrchestratedAnswer {
    return { result: { ...s.result, usage: this.usage }, candidate: s.candidate, parts: this.parts };
  }
}

function deadlineSignal(x: PolicyExecution, startedAt: number, share = 1): AbortSignal | null {
  if (x.deadlineMs === null) return null;
  return AbortSignal.timeout(Math.max(1, Math.round(x.deadlineMs * share - (performance.now() - startedAt))));
}

function combine(...signals: (AbortSignal | null | undefined)[]): AbortSignal {
  const s = signals.filter((x): x is AbortSignal => !!x);
  return s.length === 1 ? s[0]! : AbortSignal.any(s.length ? s : [new AbortController().signal]);
}

const deadlineError = () => new GatewayError("upstream_unavailable", DEADLINE_MISSED, { retryable: true });

/**
 * Tiers from cheap to dear: the first answer that passes the response check (and the judge,
 * when configured) is accepted. An upstream failure escalates too. When every tier is refused
 * the last answer received is returned (it was paid for); only when no tier answered at all
 * does the call fail.
 */
export async function runCascade(
  x: Cascade,
  input: RunInput,
  startedAt = performance.now(),
): Promise<OrchestratedAnswer> {
  const tally = new Tally();
  const deadline = deadlineSignal(x, startedAt);
  const signal = combine(input.signal, deadline);
  const tried: string[] = [];
  const refused: string[] = [];
  let best: SubCall | null = null;
  let lastError: unknown = null;
  for (let i = 0; i < x.tiers.length; i++) {
    const tier = x.tiers[i]!;
    if (signal.aborted) break;
    // The hold covers every tier; the cost limit is checked again against what was really spent.
    if (i > 0 && x.maxCostMicro !== null && tally.micro + x.tierWorst[i]! > x.maxCostMicro) {
      x.facts.push("stopped=cost");
      break;
    }
    tried.push(tier.model);
    let sub: SubCall;
    try {
      sub = await input.call(tier.candidates, input.request, tier.retries, signal);
    } catch (e) {
      if (input.signal?.aborted) throw e;
      lastError = e;
      refused.push(`${tier.model}:error`);
      continue;
    }
    tally.add(sub);
    best = sub;
    const failure = checkResponse(sub.result, input.request, x.check);
    if (failure) {
      refused.push(`${tier.model}:${failure}`);
      continue;
    }
    if (x.judge) {
      const verdict = await judge(x.judge, input, sub.result, signal, tally);
      if (verdict === "fail") {
        refused.push(`${tier.model}:judge`);
        continue;
      }
      if (verdict !== "pass") x.facts.push(`judge=${verdict}`);
    }
    x.facts.push(`tiers=${tried.join(">")}`, `accepted=${tier.model}`);
    if (refused.length) x.facts.push(`refused=${refused.join(",")}`);
    return tally.answer(sub);
  }
  x.facts.push(`tiers=${tried.join(">")}`, "accepted=none");
  if (refused.length) x.facts.push(`refused=${refused.join(",")}`);
  if (deadline?.aborted) x.facts.push("deadline=yes");
  if (best) return tally.answer(best);
  if (input.signal?.aborted) throw input.signal.reason ?? new Error("aborted");
  if (deadline?.aborted) throw deadlineError();
  throw lastError ?? new GatewayError("upstream_unavailable");
}

/** The judge's verdict; a judge that fails or says neither word leaves the answer accepted. */
async function judge(
  candidates: readonly Candidate[],
  input: RunInput,
  answer: ChatResult,
  signal: AbortSignal,
  tally: Tally,
): Promise<"pass" | "fail" | "error" | "unclear"> {
  try {
    const j = await input.call(candidates, judgeRequest(input.request.messages, answer), null, signal);
    tally.add(j);
    return parseVerdict(j.result.content) ?? "unclear";
  } catch (e) {
    if (input.signal?.aborted) throw e;
    return "error";
  }
}

/**
 * The pool answers concurrently; the synthesis model merges the answers. Workers get two
 * thirds of the deadline, the merge the rest. One answer is returned as it is; a failed merge
 * returns the first worker's answer (in entry order).
 */
export async function runParallel(
  x: Parallel,
  input: RunInput,
  startedAt = performance.now(),
): Promise<OrchestratedAnswer> {
  const tally = new Tally();
  const workersSignal = combine(input.signal, deadlineSignal(x, startedAt, 2 / 3));
  const settled = await Promise.allSettled(
    x.workers.map((w) => input.call(w.candidates, input.request, w.retries, workersSignal)),
  );
  if (input.signal?.aborted) throw input.signal.reason ?? new Error("aborted");
  const answers: SubCall[] = [];
  let lastError: unknown = null;
  for (const s of settled) {
    if (s.status === "rejected") {
      lastError = s.reason;
      continue;
    }
    tally.add(s.value);
    if (s.value.result.content?.trim()) answers.push(s.value);
  }
  x.facts.push(`workers=${x.workers.map((w) => w.model).join(",")}`, `answered=${answers.length}`);
  if (!answers.length) {
    const any = settled.find((s) => s.status === "fulfilled");
    if (any) return tally.answer(any.value); // paid for, even if empty
    if (workersSignal.aborted && x.deadlineMs !== null) throw deadlineError();
    throw lastError ?? new GatewayError("upstream_unavailable");
  }
  if (answers.length === 1) {
    x.facts.push("synthesis=skipped");
    return tally.answer(answers[0]!);
  }
  try {
    const merged = await input.call(
      x.synthesis,
      synthesisRequest(
        input.request,
        answers.map((a) => a.result),
        x.instructions,
      ),
      null,
      combine(input.signal, deadlineSignal(x, startedAt)),
    );
    tally.add(merged);
    x.facts.push(`synthesis=${merged.candidate.model.id}`);
    return tally.answer(merged);
  } catch (e) {
    if (input.signal?.aborted) throw e;
    x.facts.push("synthesis=failed");
    return tally.answer(answers[0]!);
  }
}
