/**
 * What a chat reply will be, decided once per request and independent of the wire format:
 * the text (or tool call, chosen by agent-turn.ts), how many tokens each part costs, whether
 * `max_tokens` cut it, and how a stream splits it. Every protocol encodes the same plan its
 * own way.
 */
import { ownText, type OfferedTool } from "./agent-turn.ts";
import { directiveInt, type Directives } from "./directives.ts";
import { sampleFromSchema, sampleToolArgs } from "./tool-args.ts";
import { countTokens } from "./tokens.ts";

export interface ReplyRequest {
  provider: string;
  model: string;
  /** Text of the last user message (directives included; they are stripped from the echo). */
  lastUserText: string;
  directives: Directives;
  /** The request's cap on completion tokens (thinking included), if any. */
  maxTokens?: number;
  /** Thinking/reasoning tokens the request asked for (0 = none). */
  thinkingTokens: number;
  /** Set when the reply calls a tool (forced, or the agent rule: agent-turn.ts). */
  tool?: OfferedTool;
  /** Set when the turn answers a tool result: the reply echoes that result's text. */
  toolResultText?: string;
  /**
   * Set when the request asks for a JSON answer (a response format, or a JSON-only
   * instruction in the system prompt): with a schema it must validate against, or an
   * example object the prompt showed.
   */
  json?: { schema?: unknown; example?: unknown };
}

export interface ToolCallPlan {
  name: string;
  args: unknown;
  /** `JSON.stringify(args)`, what OpenAI and Anthropic streams send in pieces. */
  argsJson: string;
}

export interface ReplyPlan {
  /** The visible text ("" for a tool call). */
  text: string;
  /** The text split for streaming (4–8 pieces, fewer for very short texts). */
  pieces: string[];
  tool?: ToolCallPlan;
  /** Tokens of the text, or of the tool call (name + arguments JSON). */
  outputTokens: number;
  thinkingTokens: number;
  /** outputTokens + thinkingTokens. */
  completionTokens: number;
  /** The cap cut the reply short: finish `length` / `max_tokens` / `MAX_TOKENS`. */
  truncated: boolean;
}

/** Reply length when no `[sim:tokens=N]` asks otherwise (the echo header may make it longer). */
const DEFAULT_REPLY_TOKENS = 20;

/** Upper bound for `[sim:tokens=N]`: a typo must not make the simulator build gigabytes. */
const MAX_REPLY_TOKENS = 100_000;

const ECHO_CHARS = 60;
const FILLER =
  "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua".split(
    " ",
  );

export function planReply(r: ReplyRequest): ReplyPlan {
  const cap = r.maxTokens !== undefined && r.maxTokens >= 0 ? r.maxTokens : Infinity;
  const thinkingTokens = Math.min(r.thinkingTokens, cap);

  if (r.tool) {
    const args = sampleToolArgs(r.tool.parameters, r.lastUserText) ?? {};
    const argsJson = JSON.stringify(args);
    // A tool call is never cut by the cap: half a JSON object would only test the tester.
    const outputTokens = countTokens(r.tool.name) + countTokens(argsJson);
    return {
      text: "",
      pieces: [],
      tool: { name: r.tool.name, args, argsJson },
      outputTokens,
      thinkingTokens,
      completionTokens: outputTokens + thinkingTokens,
      truncated: false,
    };
  }

  const head =
    r.toolResultText === undefined
      ? replyHead(r.provider, r.model, r.lastUserText)
      : replyHead(r.provider, r.model, r.toolResultText, "tail");
  if (r.json && !r.directives.has("not_json")) return planJson(r.json, head, thinkingTokens);
  const asked = directiveInt(r.directives, "tokens");
  const wanted =
    asked === undefined ? Math.max(DEFAULT_REPLY_TOKENS, countTokens(head)) : Math.min(asked, MAX_REPLY_TOKENS);
  const outputTokens = Math.min(wanted, cap - thinkingTokens);
  const text = textOfTokens(head, outputTokens);
  return {
    text,
    pieces: splitText(text, outputTokens),
    outputTokens,
    thinkingTokens,
    completionTokens: outputTokens + thinkingTokens,
    truncated: outputTokens < wanted,
  };
}

/**
 * A JSON answer: sampled from the schema, the prompt's example object, or
 * `{"answer": <reply head>}` without either. Like a tool call it is never cut by the cap
 * (half a JSON document would only test the tester).
 */
function planJson(json: { schema?: unknown; example?: unknown }, head: string, thinkingTokens: number): ReplyPlan {
  const value =
    json.schema !== undefined
      ? sampleFromSchema(json.schema, "value")
      : json.example !== undefined
        ? json.example
        : { answer: head };
  const text = JSON.stringify(value);
  const outputTokens = countTokens(text);
  return {
    text,
    pieces: splitArgs(text),
    outputTokens,
    thinkingTokens,
    completionTokens: outputTokens + thinkingTokens,
    truncated: false,
  };
}

/**
 * `Simulated reply from <provider>/<model>: <first 60 chars of the last user message>` (its
 * own text: no directives, no `<system-reminder>` blocks); for a tool result its last 60
 * characters (where a command's output ends up).
 */
function replyHead(provider: string, model: string, lastUserText: string, end: "head" | "tail" = "head"): string {
  const text = ownText(lastUserText).replace(/\s+/g, " ").trim();
  const echo = (end === "head" ? text.slice(0, ECHO_CHARS) : text.slice(-ECHO_CHARS)).trim();
  return `Simulated reply from ${provider}/${model}: ${echo}`.trimEnd();
}

/**
 * A text of exactly `tokens` tokens by the simulator's tokenizer: `head` padded with filler
 * words (or cut) to 4 × tokens characters.
 */
export function textOfTokens(head: string, tokens: number): string {
  const length = tokens * 4;
  let text = head;
  for (let i = 0; text.length < length; i++) text += ` ${FILLER[i % FILLER.length]}`;
  text = text.slice(0, length);
  // A trailing space would look like a bug in whoever concatenates the pieces.
  return text.endsWith(" ") ? `${text.slice(0, -1)}.` : text;
}

/**
 * Splits a text into 4–8 stream pieces (one per ~5 tokens; fewer for tiny texts). Cuts move
 * forward to the next space so pieces look like vendors' (" word word"); a text without
 * spaces is cut evenly.
 */
export function splitText(text: string, tokens: number, atSpaces = true): string[] {
  if (text.length === 0) return [];
  const count = Math.min(text.length, 8, Math.max(4, Math.ceil(tokens / 5)));
  const cuts: number[] = [0];
  for (let i = 1; i < count; i++) {
    let at = Math.floor((i * text.length) / count);
    if (atSpaces) {
      const space = text.indexOf(" ", at);
      if (space > 0) at = space;
    }
    if (at > cuts[cuts.length - 1]! && at < text.length) cuts.push(at);
  }
  cuts.push(text.length);
  const pieces: string[] = [];
  for (let i = 0; i + 1 < cuts.length; i++) pieces.push(text.slice(cuts[i], cuts[i + 1]));
  return pieces;
}

/** Splits tool-argument JSON into a few fragments, as vendors stream it. */
export function splitArgs(json: string): string[] {
  return splitText(json, Math.ceil(json.length / 4), false);
}
