/**
 * The settings a chat call could not send, kept per provider as each attempt's adapter reports
 * them (CallContext.warn), and read for the provider that answered: a stream's headers go out
 * before its answer exists, so they ride on the call's plan, not on a result.
 */
import type { CallWarning } from "../upstream/warnings";
import type { ChatPlan } from "./plan";

export function noteWarnings(plan: ChatPlan, providerId: string, warnings: CallWarning[]): void {
  (plan.warnings ??= new Map()).set(providerId, warnings);
}

/** The gateway's notes, then what the answering provider's request left out (none for a cached answer or an unknown provider). */
const NO_WARNINGS: readonly CallWarning[] = Object.freeze([]);

export function callWarnings(plan: ChatPlan, providerId: string | null): readonly CallWarning[] {
  const own = (providerId !== null && plan.warnings?.get(providerId)) || NO_WARNINGS;
  return plan.notes?.length ? [...plan.notes, ...own] : own;
}
