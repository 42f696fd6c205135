/** Writes OpenAI `chat.completion.chunk` SSE events for streams the gateway composes itself. */
import type { Cost } from "../../core/billing/cost";
import type { FinishReason, Usage } from "../../core/model/types";
import { costJson, usageJson } from "./chat-from-core";
import { streamError } from "../sse-stream";

const enc = new TextEncoder();
export { DONE, KEEPALIVE } from "../sse-stream";

export class ChunkEncoder {
  constructor(
    private id: string,
    private created: number,
    private model: string,
    private provider: string | null,
  ) {}

  private frame(choices: unknown[], extra?: Record<string, unknown>): Uint8Array {
    const obj = {
      id: this.id,
      object: "chat.completion.chunk",
      created: this.created,
      model: this.model,
      provider: this.provider,
      choices,
      ...extra,
    };
    return enc.encode(`data: ${JSON.stringify(obj)}\n\n`);
  }

  delta(delta: Record<string, unknown>, finish: FinishReason | null = null): Uint8Array {
    return this.frame([{ index: 0, delta, logprobs: null, finish_reason: finish }]);
  }

  /** The final event of the specification: `choices: []`, `usage` and `cost`. */
  usage(u: Usage, cost: Cost, cached = false, extra?: Record<string, unknown>): Uint8Array {
    return this.frame([], {
      usage: usageJson(u),
      cost: costJson(cost),
      ...(cached ? { cached: true } : undefined),
      ...extra,
    });
  }
}

/** The mid-stream failure event (docs/decisions.md #6). */
export function errorEvent(message: string, partial: string, code?: string): Uint8Array {
  return enc.encode(`data: ${JSON.stringify({ error: streamError(message, partial, code) })}\n\n`);
}
