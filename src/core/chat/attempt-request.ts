/**
 * What one upstream attempt of a chat call sends: the request for the candidate's offering and
 * the call context (endpoint, credential, deadlines, trace, where dropped settings are noted).
 */
import type { CallContext } from "../model/provider";
import type { AttemptRecord } from "../model/trace";
import { withoutReasoning, type ChatRequest } from "../model/types";
import type { Candidate } from "../routing/candidates";
import type { CallWarning } from "../upstream/warnings";
import type { ChatPlan } from "./plan";
import type { ChatDeps } from "./ports";
import { speaksResponses } from "./responses-native";
import { noteWarnings } from "./warnings";

/** The request `c` gets: its upstream model id, max_tokens within the offering's limit. */
export function upstreamRequest(plan: ChatPlan, c: Candidate, base = plan.upstream): ChatRequest {
  // A max_tokens above the offering's output limit would be refused upstream; cap it instead.
  const max = c.offering.maxOutput;
  const maxTokens = max && base.max_tokens > max ? max : base.max_tokens;
  const req: ChatRequest = { ...base, model: c.offering.upstreamId, max_tokens: maxTokens };
  // The client's own Responses body goes only where the Responses API is spoken; elsewhere the translation.
  if (req.responses && !speaksResponses(c.provider)) delete req.responses;
  return plan.reasoningHint && c.offering.capabilities.reasoning === false ? withoutReasoning(req) : req;
}

/** The context of one attempt of `plan` on `c`. */
export function attemptContext(
  d: ChatDeps,
  plan: ChatPlan,
  c: Candidate,
  signal: AbortSignal | undefined,
  attempt?: AttemptRecord,
): CallContext {
  const ep = d.upstreamFor(c.provider, plan.caller.principal);
  return new AttemptContext(plan, c, ep, signal, d.firstByteTimeoutMs, d.idleTimeoutMs, attempt?.traceparent);
}

/** One upstream attempt's context: an object whose `warn` is a method, not a closure per attempt. */
class AttemptContext implements CallContext {
  readonly providerId: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly forwardServiceTier: boolean | undefined;

  constructor(
    private readonly plan: ChatPlan,
    c: Candidate,
    ep: { baseUrl: string; apiKey: string },
    readonly signal: AbortSignal | undefined,
    readonly firstByteTimeoutMs: number,
    readonly idleTimeoutMs: number,
    readonly traceparent: string | undefined,
  ) {
    this.providerId = c.provider.id;
    this.baseUrl = ep.baseUrl;
    this.apiKey = ep.apiKey;
    this.forwardServiceTier = c.provider.serviceTier;
  }

  warn(warnings: CallWarning[]): void {
    noteWarnings(this.plan, this.providerId, warnings);
  }
}
