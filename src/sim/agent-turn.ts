/**
 * The simulator as an agent's partner: which tool (if any) a reply calls, and whether the
 * system prompt asks for a JSON-only answer. Decided here once, from facts each protocol
 * reads off its own wire format, so OpenAI, Anthropic and Gemini follow the same rule:
 *
 * - a forced choice calls the forced tool (as vendors do);
 * - `auto` (or no choice) with tools offered calls ONE tool on a user turn: what came after
 *   the last assistant message is the user's own message(s), no tool result. The tool is the
 *   one named by `[sim:tool=NAME]`, else the one whose name the user's own text mentions
 *   first (as a whole word, case-sensitive; `<system-reminder>` blocks an agent adds are not
 *   the user's), else the first offered; `[sim:no_tool]` answers with text instead;
 * - after a tool result (one came after the last assistant message), and with choice
 *   `none`, the reply is text, so an agent loop ends.
 */
import type { Directives } from "./directives.ts";
import { stripDirectives } from "./directives.ts";

// Claude Code wraps what it adds to a user turn (environment, tool lists, dates) this way.
const REMINDER = /<system-reminder>[\s\S]*?<\/system-reminder>/g;

/** What the user wrote: the text without directives and without an agent's reminders. */
export function ownText(text: string): string {
  const bare = stripDirectives(text);
  return bare.includes("<system-reminder>") ? bare.replace(REMINDER, "") : bare;
}

export interface OfferedTool {
  name: string;
  parameters: unknown;
}

/** How the request lets the model use its tools. */
export type ToolMode = { kind: "auto" } | { kind: "none" } | { kind: "forced"; name?: string };

export interface TurnFacts {
  tools: readonly OfferedTool[];
  mode: ToolMode;
  /** The conversation's last (non-system) message is the user's own, not a tool result. */
  endsWithUser: boolean;
  userText: string;
  directives: Directives;
}

/**
 * What the messages after the last assistant message say about this turn, from the texts the
 * user wrote there and the tool results sent there: whether it is a user turn (a tool may be
 * called), and what the text reply echoes when it answers tool results with no user text
 * beside them (the results themselves; otherwise the last user message, as always).
 */
export function turnAfterAssistant(
  userTexts: readonly string[],
  toolResults: readonly string[],
  userMessages: number,
): { endsWithUser: boolean; toolResultText?: string } {
  if (toolResults.length === 0) return { endsWithUser: userMessages > 0 };
  const wrote = userTexts.some((t) => ownText(t).trim() !== "");
  return { endsWithUser: false, toolResultText: wrote ? undefined : toolResults.join("\n") };
}

/** The tool this reply calls, or undefined for a text (or JSON) reply. */
export function chooseTool(t: TurnFacts): OfferedTool | undefined {
  if (t.tools.length === 0) return undefined;
  if (t.mode.kind === "forced") {
    const name = t.mode.name;
    return name === undefined ? t.tools[0] : t.tools.find((tool) => tool.name === name);
  }
  if (t.mode.kind === "none" || !t.endsWithUser || t.directives.has("no_tool")) return undefined;
  const asked = t.directives.get("tool");
  if (asked !== undefined) {
    const named = t.tools.find((tool) => tool.name === asked);
    if (named) return named;
  }
  return firstMentioned(t.tools, ownText(t.userText)) ?? t.tools[0];
}

/** The tool whose name appears earliest in `text` as a whole word (case-sensitive). */
function firstMentioned(tools: readonly OfferedTool[], text: string): OfferedTool | undefined {
  let best: OfferedTool | undefined;
  let bestAt = Infinity;
  for (const tool of tools) {
    const at = wordIndex(text, tool.name);
    if (at >= 0 && at < bestAt) {
      best = tool;
      bestAt = at;
    }
  }
  return best;
}

const WORD_CHAR = /[A-Za-z0-9_-]/;

function wordIndex(text: string, word: string): number {
  if (word === "") return -1;
  for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + 1)) {
    const before = at === 0 ? "" : text[at - 1]!;
    const after = text[at + word.length] ?? "";
    if (!WORD_CHAR.test(before) && !WORD_CHAR.test(after)) return at;
  }
  return -1;
}

// "Respond only with JSON", "answer in JSON matching this schema", "return valid JSON",
// "JSON only", "only output JSON": a verb of answering, then JSON within the same sentence.
const JSON_INSTRUCTION = [
  /\b(?:respond|reply|answer|output|return|produce|write|format)(?:s|ing)?\b[^.!?\n]{0,40}?\bJSON\b/i,
  /\bJSON[ -]only\b/i,
  /\bonly (?:valid )?JSON\b/i,
];

/**
 * A JSON-only instruction in the system prompt: the JSON answer asked for, with the schema
 * (or example object) the prompt gives, if any. Undefined when the prompt asks nothing.
 */
export function jsonInstruction(systemText: string): { schema?: unknown; example?: unknown } | undefined {
  if (!/json/i.test(systemText)) return undefined;
  if (!JSON_INSTRUCTION.some((re) => re.test(systemText))) return undefined;
  const given = firstJsonObject(systemText);
  if (given === undefined) return {};
  return looksLikeSchema(given) ? { schema: given } : { example: given };
}

function looksLikeSchema(value: Record<string, unknown>): boolean {
  return (
    typeof value.type === "string" ||
    typeof value.properties === "object" ||
    typeof value.$schema === "string" ||
    Array.isArray(value.anyOf) ||
    Array.isArray(value.oneOf)
  );
}

/** The first balanced `{...}` in `text` that parses as a JSON object. */
function firstJsonObject(text: string): Record<string, unknown> | undefined {
  for (let start = text.indexOf("{"); start >= 0; start = text.indexOf("{", start + 1)) {
    const end = balancedEnd(text, start);
    if (end < 0) continue;
    try {
      const value = JSON.parse(text.slice(start, end + 1));
      if (typeof value === "object" && value !== null && !Array.isArray(value)) return value;
    } catch {
      // Not JSON (prose in braces, a template): keep looking.
    }
  }
  return undefined;
}

/** Index of the `}` closing the `{` at `start` (strings respected), or -1. */
function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i;
  }
  return -1;
}
