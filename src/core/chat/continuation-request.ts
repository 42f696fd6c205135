/**
 * The request that asks another candidate to continue a broken answer (continuation.ts): the
 * original messages, then the text already sent. An Anthropic upstream takes it as a prefill
 * (the last, assistant, turn: the model writes on from its end); the others get it as an
 * assistant turn followed by an instruction to continue it. The output budget is what the
 * first part left of the request's `max_tokens`.
 */
import type { ChatMessage, ChatRequest } from "../model/types";
import { withMessages } from "../model/types";

export type ContinuationVia = "prefill" | "instruction";

export const CONTINUE_INSTRUCTION =
  "Your previous reply was cut off. Continue it exactly from where it ends: do not repeat any of it, do not comment on it, write only the rest.";

/** Tokens the instruction and its two turns may cost at most (the hold counts them). */
export const CONTINUE_OVERHEAD_TOKENS = 64;

type Base = Omit<ChatRequest, "model">;

/**
 * A prefill where the protocol takes one: Anthropic, unless the call thinks (Anthropic refuses a
 * prefill with extended thinking). Everywhere else the instruction.
 */
export function continuationVia(protocol: string, base: Base): ContinuationVia {
  return protocol === "anthropic" && base.reasoning_effort === undefined ? "prefill" : "instruction";
}

export interface ContinuationRequest {
  request: Base;
  via: ContinuationVia;
  /**
   * The prefill lost trailing whitespace (Anthropic refuses a prefill ending in it) that the
   * client already has: the continuation's leading whitespace is dropped.
   */
  trimmedSpace: boolean;
}

/** `base` continued from `partial` (the text sent so far), for a provider of `protocol`. */
export function continuationRequest(
  base: Base,
  partial: string,
  protocol: string,
  maxTokens: number,
): ContinuationRequest {
  const via = continuationVia(protocol, base);
  const budget = { ...base, max_tokens: maxTokens };
  // Nothing was sent yet: the next candidate simply answers the request.
  if (!partial.trim()) return { request: budget, via, trimmedSpace: false };
  const sent = via === "prefill" ? partial.trimEnd() : partial;
  const turns: ChatMessage[] = [{ role: "assistant", content: sent }];
  if (via === "instruction") turns.push({ role: "user", content: CONTINUE_INSTRUCTION });
  return {
    request: withMessages(budget, [...base.messages, ...turns]),
    via,
    trimmedSpace: sent.length < partial.length,
  };
}
