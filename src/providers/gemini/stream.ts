/**
 * Gemini `streamGenerateContent?alt=sse` → canonical StreamEvents.
 *
 * Every chunk is a GenerateContentResponse with a cumulative `usageMetadata` (the last one
 * wins). Text parts → `text` (thought parts skipped); each `functionCall` part (complete, in
 * one chunk) → one `tool_call` event with a generated id and the full JSON arguments. The
 * stream has no end marker: it is complete when a chunk carried `finishReason` (or the prompt
 * was blocked), then `finish` and `usage` are emitted when the body ends. Ending without one
 * throws `truncated`; an `error` payload throws the classified error. A transport failure
 * after the finishReason chunk ends the stream normally.
 */
import type { StreamEvent, Usage } from "../../core/model/types";
import type { SseEvent } from "../../lib/sse";
import { truncatedError } from "../common/errors";
import { parseStreamJson } from "../common/http";
import { endQuietlyWhenComplete } from "../common/stream";
import { classifyGeminiStreamError } from "./errors";
import { mapGeminiFinishReason, mapGeminiUsage, newGeminiToolCallId } from "./response";
import type { GeminiWireResponse } from "./wire";

interface GeminiStreamState {
  toolCalls: number;
  finishReason?: string;
  blocked: boolean;
  usage?: Usage;
}

/** Translates decoded SSE events into StreamEvents; owns the stream state. */
export async function* readGeminiStream(
  events: AsyncIterable<SseEvent>,
  newId: () => string = newGeminiToolCallId,
): AsyncGenerator<StreamEvent, void, undefined> {
  const state: GeminiStreamState = { toolCalls: 0, blocked: false };
  const complete = () => state.finishReason !== undefined || state.blocked;
  for await (const ev of endQuietlyWhenComplete(events, complete)) {
    const chunk = parseStreamJson(ev.data) as GeminiWireResponse;
    if (chunk.error) throw classifyGeminiStreamError(chunk);
    if (chunk.usageMetadata) state.usage = mapGeminiUsage(chunk.usageMetadata);
    const candidate = chunk.candidates?.[0];
    if (!candidate) {
      if (chunk.promptFeedback?.blockReason) state.blocked = true;
      continue;
    }
    for (const part of candidate.content?.parts ?? []) {
      if (part.functionCall) {
        yield {
          type: "tool_call",
          index: state.toolCalls++,
          id: part.functionCall.id ?? newId(),
          name: part.functionCall.name ?? "",
          arguments: JSON.stringify(part.functionCall.args ?? {}),
        };
      } else if (part.text && part.thought !== true) {
        yield { type: "text", text: part.text };
      }
    }
    if (candidate.finishReason) state.finishReason = candidate.finishReason;
  }
  if (state.finishReason === undefined && !state.blocked) throw truncatedError("a chunk with finishReason");
  const reason =
    state.finishReason === undefined
      ? "content_filter"
      : mapGeminiFinishReason(state.finishReason, state.toolCalls > 0);
  yield { type: "finish", reason };
  if (state.usage) yield { type: "usage", usage: state.usage };
}
