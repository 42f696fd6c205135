/**
 * Token estimates before the provider counts. The hold uses a conservative estimate (about
 * 3 characters a token plus per-message overhead) so it covers the real input almost always;
 * billing a partial stream without upstream usage uses the ordinary ~4 characters a token.
 */
import type { ChatMessage, FunctionTool } from "./types";

export function messageChars(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages) {
    if (typeof m.content === "string") n += m.content.length;
    else if (Array.isArray(m.content)) {
      for (const p of m.content) n += p.type === "text" ? p.text.length : 1000; // an image costs roughly a fixed ~1k chars' worth
    }
    if (m.tool_calls) for (const t of m.tool_calls) n += t.function.name.length + t.function.arguments.length;
  }
  return n;
}

/** Upper-side estimate of the prompt tokens, for sizing the hold. */
export function holdInputTokens(messages: readonly ChatMessage[], tools?: readonly FunctionTool[]): number {
  const toolChars = tools ? JSON.stringify(tools).length : 0;
  return Math.ceil((messageChars(messages) + toolChars) / 3) + 4 * messages.length + 8;
}

/** Ordinary estimate (~4 characters a token). */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}
