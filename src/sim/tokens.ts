/**
 * The simulator's tokenizer. Deliberately trivial so that anyone can predict usage numbers
 * by hand: a text of L characters (UTF-16 code units, i.e. JavaScript `length`) costs
 * ceil(L / 4) tokens. Each text is rounded up on its own, so a prompt's tokens are the sum
 * over its texts, not ceil(total / 4). docs/simulator.md states the full rule.
 */

/** Tokens of one text: ceil(length / 4); the empty string is 0. */
export function countTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Flat cost of a non-text part (image, audio, file): OpenAI's low-detail image price. */
export const NON_TEXT_PART_TOKENS = 85;

/** Tokens of a structured value (tool definition, tool arguments) through its JSON text. */
export function countJsonTokens(value: unknown): number {
  return value === undefined ? 0 : countTokens(JSON.stringify(value));
}

/**
 * Reasoning tokens a request asks for: effort names map to a fixed amount so reasoning
 * usage fields carry realistic, predictable non-zero values.
 */
export const THINKING_TOKENS_BY_EFFORT: Readonly<Record<string, number>> = {
  none: 0,
  minimal: 0,
  low: 16,
  medium: 32,
  high: 64,
  xhigh: 128,
};

/** Thinking tokens for a token budget (Anthropic `budget_tokens`, Gemini `thinkingBudget`). */
export function thinkingTokensForBudget(budget: number): number {
  if (budget < 0) return THINKING_TOKENS_BY_EFFORT.medium!; // Gemini -1 = dynamic
  return Math.min(budget, THINKING_TOKENS_BY_EFFORT.high!);
}
