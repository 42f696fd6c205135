/**
 * A finished answer as typed stream events, for streaming clients of `cascade` and
 * `parallel`: the run completes first (only an accepted answer may reach the client), then
 * the answer is sent as text pieces, tool calls, the finish reason and the summed usage.
 */
import type { ChatResult, StreamEvent } from "../model/types";

const PIECE_CHARS = 64;

export async function* replayAnswer(r: ChatResult): AsyncGenerator<StreamEvent> {
  for (const piece of pieces(r.content ?? "")) yield { type: "text", text: piece };
  for (const [index, tc] of (r.toolCalls ?? []).entries()) {
    yield { type: "tool_call", index, id: tc.id, name: tc.function.name, arguments: tc.function.arguments };
  }
  yield { type: "finish", reason: r.finishReason };
  yield { type: "usage", usage: r.usage };
}

/** Cuts text into pieces of about PIECE_CHARS, never inside a surrogate pair. */
export function pieces(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    let end = Math.min(text.length, i + PIECE_CHARS);
    const code = text.charCodeAt(end - 1);
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end++; // keep a high surrogate with its low half
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}
