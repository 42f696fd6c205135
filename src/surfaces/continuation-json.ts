/**
 * How a continued stream's answer was assembled (`provider.continue_on_failure`), as every
 * dialect's final frame carries it: `continuation: {parts: [...]}`, one entry per upstream part
 * in order, each with its provider, its usage (`estimated` when its stream broke before the
 * provider said it), how it was asked (`via`: `prefill` or `instruction`; not on the first part)
 * and its cost before the minimum charge. Absent when the stream was not continued.
 */
import type { PartCost } from "../core/chat/call-stream";

export function continuationJson(parts: readonly PartCost[] | undefined): {
  continuation?: { parts: Record<string, unknown>[] };
} {
  if (!parts) return {};
  return {
    continuation: {
      parts: parts.map((p) => ({
        provider: p.candidate.provider.id,
        model: p.candidate.model.id,
        prompt_tokens: p.usage.promptTokens,
        completion_tokens: p.usage.completionTokens,
        estimated: p.estimated,
        ...(p.via && { via: p.via }),
        cost_krw: p.cost.krw,
        cost_usd: p.cost.usd,
      })),
    },
  };
}
