/**
 * From a decided route to what the chat service runs: each route entry becomes its provider
 * candidates (under the merged provider preferences), the limits are applied (the most a call
 * may cost trims entries or tiers; escalations were trimmed by the decision), and the hold is
 * sized for the worst case of everything that may run: one answer for single-answer routes,
 * every tier plus its judge call for cascade, every worker plus the merge for parallel.
 */
import { GatewayError, text } from "../errors";
import { resolveModel } from "../catalog/resolve";
import { withoutRetired, type LifecyclePort } from "../catalog/lifecycle";
import type { CatalogSnapshot } from "../catalog/types";
import { holdAmountMicro } from "../billing/pricing";
import type { CallPart } from "../billing/call-price";
import { buildCandidates, type Candidate, type CandidateOptions } from "./candidates";
import type { ChatResult } from "../model/types";
import { krwToMicro } from "../../lib/money";
import { JUDGE_MAX_TOKENS } from "./cascade";
import type { ResponseCheck } from "./config-schema";
import { SYNTHESIS_OVERHEAD_TOKENS } from "./parallel";
import { decisionHeader } from "./decide";
import type { PolicyRoute } from "./types";

/** A policy's deadline cut the attempts (a 502 `upstream_unavailable`). */
export const DEADLINE_MISSED = text(
  "정책의 제한 시간(deadline_ms) 안에 응답을 받지 못했습니다.",
  "No answer arrived within the policy's deadline (deadline_ms).",
);

/** One entry's candidates (a model's providers, narrowed by the preferences). */
export interface CandidateGroup {
  model: string;
  candidates: Candidate[];
  /** Retries per provider; null = the chat default. */
  retries: number | null;
}

export type PolicyExecution = {
  route: PolicyRoute;
  /** Facts for `X-Policy-Decision`; the run appends what only it knows. */
  facts: string[];
  holdMicro: bigint;
  deadlineMs: number | null;
  /** Set once a cascade or parallel run produced the answer (streams replay it). */
  outcome?: OrchestratedAnswer;
} & (
  | { kind: "single"; candidates: Candidate[]; retries: (number | null)[] }
  | {
      kind: "cascade";
      tiers: CandidateGroup[];
      judge: Candidate[] | null;
      check: ResponseCheck;
      tierWorst: bigint[];
      judgeWorst: bigint;
      maxCostMicro: bigint | null;
    }
  | { kind: "parallel"; workers: CandidateGroup[]; synthesis: Candidate[]; instructions?: string }
);

/** The answer of a multi-call run: the accepted result (usage summed over every sub-call). */
export interface OrchestratedAnswer {
  result: ChatResult;
  candidate: Candidate;
  /** Every sub-call that ran, each priced at its own provider (the settle prices the sum once). */
  parts: CallPart[];
}

export interface ExecutionInput {
  route: PolicyRoute;
  snapshot: CatalogSnapshot;
  candidateOptions: CandidateOptions;
  /** Retired entries are skipped like any other entry that cannot be called (catalog/lifecycle.ts). */
  lifecycle?: LifecyclePort;
  /** The prompt's tokens as the hold estimates them, per candidate (image parts count per provider). */
  inputTokens: number | ((c: Candidate) => number);
  maxTokens: number;
  fxMilli: bigint;
  /** BYOK calls hold nothing. */
  free: boolean;
}

export function buildExecution(x: ExecutionInput): PolicyExecution {
  const { route } = x;
  const facts = [...route.facts];
  const maxCostMicro = route.limits.max_cost_krw !== undefined ? krwToMicro(route.limits.max_cost_krw) : null;
  const deadlineMs = route.limits.deadline_ms ?? null;
  const inputOf = (c: Candidate) => (typeof x.inputTokens === "number" ? x.inputTokens : x.inputTokens(c));
  // The dearest candidate for the prompt plus `extraInput` tokens in and `maxTokens` out.
  const worst = (cs: readonly Candidate[], extraInput = 0, maxTokens = x.maxTokens) => {
    let max = 0n;
    if (x.free) return max;
    for (const c of cs) {
      const h = holdAmountMicro([c.offering.pricing!], inputOf(c) + extraInput, maxTokens, x.fxMilli);
      if (h > max) max = h;
    }
    return max;
  };
  const fits = (micro: bigint) => maxCostMicro === null || micro <= maxCostMicro;
  const overBudget = () =>
    new GatewayError(
      "policy_cost_limit_exceeded",
      text(
        `정책의 호출당 최대 비용(${route.limits.max_cost_krw} KRW) 안에서 실행할 수 있는 모델이 없습니다. max_tokens를 줄여 보세요.`,
        `No model can run within the policy's maximum cost per call (${route.limits.max_cost_krw} KRW). Try a lower max_tokens.`,
      ),
    );

  const shape = route.shape;
  let firstError: unknown = null;
  const group = (model: string, retries: number | null): CandidateGroup | null => {
    try {
      let r = resolveModel(x.snapshot, model);
      if (r.kind === "policy") return null;
      if (x.lifecycle) r = withoutRetired(r, x.lifecycle);
      return { model, candidates: buildCandidates(x.snapshot, r, x.candidateOptions), retries };
    } catch (e) {
      firstError ??= e; // the preferences or the key exclude this entry; the others may do
      return null;
    }
  };
  const noneCallable = () =>
    firstError ??
    new GatewayError(
      "invalid_policy_entry",
      text("정책에 호출 가능한 모델이 없습니다.", "The policy has no model that can be called."),
    );

  if (shape.kind === "single") {
    const groups = shape.entries.map((e) => group(e.model, e.retries)).filter((g): g is CandidateGroup => g !== null);
    if (!groups.length) throw noneCallable();
    const candidates: Candidate[] = [];
    const retries: (number | null)[] = [];
    for (const g of groups) {
      for (const c of g.candidates) {
        if (!fits(worst([c]))) continue; // too dear for the policy's cost limit
        candidates.push(c);
        retries.push(g.retries);
      }
    }
    if (!candidates.length) throw overBudget();
    facts.push(`order=${[...new Set(candidates.map((c) => c.model.id))].join(",")}`);
    return { kind: "single", route, facts, holdMicro: worst(candidates), deadlineMs, candidates, retries };
  }

  if (shape.kind === "cascade") {
    const judge = shape.judge ? group(shape.judge, null) : null;
    const judgeWorst = judge ? worst(judge.candidates, x.maxTokens + 64, JUDGE_MAX_TOKENS) : 0n;
    const tiers: CandidateGroup[] = [];
    const tierWorst: bigint[] = [];
    let sum = 0n;
    let callable = 0;
    for (const t of shape.tiers.slice(shape.start)) {
      const g = group(t.model, t.retries);
      if (!g) continue;
      callable++;
      const w = worst(g.candidates) + judgeWorst;
      if (!fits(sum + w)) break; // a dearer tier would break the limit even if every cheaper one failed
      tiers.push(g);
      tierWorst.push(w);
      sum += w;
    }
    // No tier callable at all (preferences, the key, unconfigured providers) says why; else the limit cut them.
    if (!tiers.length) throw firstError && (maxCostMicro === null || callable === 0) ? firstError : overBudget();
    return {
      kind: "cascade",
      route,
      facts,
      holdMicro: sum,
      deadlineMs,
      tiers,
      judge: judge?.candidates ?? null,
      check: shape.check,
      tierWorst,
      judgeWorst,
      maxCostMicro,
    };
  }

  const workers: CandidateGroup[] = [];
  let workersSum = 0n;
  const synth = group(shape.synthesis.model, null);
  const synthWorst = (n: number) =>
    synth
      ? worst(
          synth.candidates,
          n * (x.maxTokens + SYNTHESIS_OVERHEAD_TOKENS.perAnswer) + SYNTHESIS_OVERHEAD_TOKENS.fixed,
          x.maxTokens,
        )
      : 0n;
  for (const w of shape.workers) {
    const g = group(w.model, null);
    if (!g) continue;
    const next = workersSum + worst(g.candidates);
    if (!fits(next + synthWorst(workers.length + 1))) break;
    workers.push(g);
    workersSum = next;
  }
  if (workers.length >= 2 && synth) {
    return {
      kind: "parallel",
      route,
      facts,
      holdMicro: workersSum + synthWorst(workers.length),
      deadlineMs,
      workers,
      synthesis: synth.candidates,
      ...(shape.synthesis.instructions && { instructions: shape.synthesis.instructions }),
    };
  }
  // Not enough budget (or callable workers) to fan out: one worker answers.
  const single = shape.workers.map((w) => group(w.model, null)).filter((g): g is CandidateGroup => g !== null);
  const candidates = single.flatMap((g) => g.candidates).filter((c) => fits(worst([c])));
  if (!candidates.length) throw single.length ? overBudget() : noneCallable();
  facts.push("fanout=no", `order=${[...new Set(candidates.map((c) => c.model.id))].join(",")}`);
  return {
    kind: "single",
    route,
    facts,
    holdMicro: worst(candidates),
    deadlineMs,
    candidates,
    retries: candidates.map(() => null),
  };
}

/** The header value of an execution (after the run, it includes the run's facts). */
export function executionHeader(e: PolicyExecution): string {
  return decisionHeader(e.route, e.facts);
}
