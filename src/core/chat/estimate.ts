/**
 * Token estimates before the provider counts. The hold uses a conservative estimate so it
 * covers the real input almost always: about 3 characters a token for ASCII text, and one
 * token for every other character, because real tokenizers spend one or more tokens on each
 * Hangul syllable, CJK character or emoji (a flat 3 characters a token would under-hold a
 * Korean prompt about threefold). Billing a partial stream without upstream usage uses the
 * ordinary ~4 characters a token.
 */
import type { ChatMessage, FunctionTool } from "./types";

/** An image part costs roughly a fixed ~1k characters' worth. */
const IMAGE_CHARS = 1000;

/** Characters of a request, split into ASCII and other UTF-16 units. */
interface CharCount {
  ascii: number;
  other: number;
}

function addText(c: CharCount, text: string): void {
  let other = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) other++;
  c.ascii += text.length - other;
  c.other += other;
}

function countMessages(c: CharCount, messages: readonly ChatMessage[]): void {
  for (const m of messages) {
    if (typeof m.content === "string") addText(c, m.content);
    else if (Array.isArray(m.content)) {
      for (const p of m.content) {
        if (p.type === "text") addText(c, p.text);
        else c.ascii += IMAGE_CHARS;
      }
    }
    if (m.tool_calls) {
      for (const t of m.tool_calls) {
        addText(c, t.function.name);
        addText(c, t.function.arguments);
      }
    }
  }
}

/** All characters of the messages (text, images at a flat rate, tool calls). */
export function messageChars(messages: readonly ChatMessage[]): number {
  const c: CharCount = { ascii: 0, other: 0 };
  countMessages(c, messages);
  return c.ascii + c.other;
}

/** Upper-side estimate of the prompt tokens, for sizing the hold. */
export function holdInputTokens(messages: readonly ChatMessage[], tools?: readonly FunctionTool[]): number {
  const c: CharCount = { ascii: 0, other: 0 };
  countMessages(c, messages);
  if (tools) addText(c, JSON.stringify(tools));
  return Math.ceil(c.ascii / 3) + c.other + 4 * messages.length + 8;
}

/** Ordinary estimate (~4 characters a token). */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}
