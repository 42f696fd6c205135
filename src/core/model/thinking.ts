/**
 * Anthropic's thinking budgets by reasoning effort: the Anthropic adapter turns an effort into a
 * budget with it, and the Messages dialect a client's budget back into an effort.
 */
import type { ReasoningEffort } from "./types";

/** The smallest budget Anthropic accepts. */
export const ANTHROPIC_MIN_THINKING_BUDGET = 1024;

/** reasoning_effort → thinking.budget_tokens before the max_tokens cap; `none` → no thinking. */
export const ANTHROPIC_THINKING_BUDGETS: Record<Exclude<ReasoningEffort, "none">, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 24576,
  max: 32000,
};
