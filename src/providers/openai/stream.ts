/**
 * OpenAI Chat Completions SSE → canonical StreamEvents.
 *
 * A complete stream is: content chunks, a chunk with `finish_reason`, (with include_usage) a
 * usage chunk with `choices: []`, then `data: [DONE]`. Events are emitted in that order:
 * text / tool_call deltas, `finish` when the finish chunk arrives, `usage` (if the upstream
 * reported any) at `[DONE]`. Ending without `[DONE]`, or `[DONE]` without a finish reason,
 * throws `truncated`; a payload with an `error` key throws the classified error.
 */
import type { FinishReason, StreamEvent, Usage } from "../../core/model/types";
import type { SseEvent } from "../../lib/sse";
import { truncatedError } from "../common/errors";
import { parseStreamJson } from "../common/http";
import { endQuietlyWhenComplete } from "../common/stream";
import { classifyOpenAIStreamError } from "./errors";
import { mapOpenAIFinishReason, mapOpenAIUsage } from "./response";
import type { OpenAIWireChunk } from "./wire";

interface OpenAIStreamState {
  finish?: FinishReason;
  usage?: Usage;
  done: boolean;
}

/** Translates decoded SSE events into StreamEvents; owns the stream state. */
export async function* readOpenAIChatStream(
  events: AsyncIterable<SseEvent>,
): AsyncGenerator<StreamEvent, void, undefined> {
  const state: OpenAIStreamState = { done: false };
  for await (const ev of endQuietlyWhenComplete(events, () => state.done)) {
    if (state.done) continue; // nothing after [DONE] matters
    if (ev.data === "[DONE]") {
      if (state.finish === undefined) throw truncatedError("a finish_reason");
      state.done = true;
      if (state.usage) yield { type: "usage", usage: state.usage };
      continue;
    }
    const chunk = parseStreamJson(ev.data) as OpenAIWireChunk;
    if (chunk.error !== undefined && chunk.error !== null) throw classifyOpenAIStreamError(chunk);
    if (chunk.usage) state.usage = mapOpenAIUsage(chunk.usage);
    const choice = chunk.choices?.[0];
    if (!choice) continue; // the usage chunk has choices: []
    const delta = choice.delta;
    if (delta?.content) yield { type: "text", text: delta.content };
    for (const tc of delta?.tool_calls ?? []) {
      const out: StreamEvent = { type: "tool_call", index: tc.index ?? 0 };
      if (tc.id !== undefined) out.id = tc.id;
      if (tc.function?.name !== undefined) out.name = tc.function.name;
      if (tc.function?.arguments !== undefined) out.arguments = tc.function.arguments;
      yield out;
    }
    if (choice.finish_reason) {
      state.finish = mapOpenAIFinishReason(choice.finish_reason);
      yield { type: "finish", reason: state.finish };
    }
  }
  if (!state.done) throw truncatedError("data: [DONE]");
}
