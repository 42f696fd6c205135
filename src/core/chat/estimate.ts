/**
 * Token estimates before the provider counts. The hold must be an upper bound of the charge
 * (a charge above it is capped at it, drizzle/0013), so the hold's estimate counts everything a
 * request sends, on the dear side: about 3 characters a token for ASCII text and one token for
 * every other character (real tokenizers spend one or more tokens on each Hangul syllable, CJK
 * character or emoji); every image part at the most its provider can count for one image
 * (imageTokens); tool definitions and the structured-output schema as their JSON; the tool-call
 * history (names, arguments, ids); Anthropic's tool-use system prompt; web-search results.
 * A stream the client left without its usage is billed with the same estimate of the input,
 * except that an inline image is counted at its own size (image-size.ts).
 * Billing a partial stream after an upstream failure uses the ordinary ~4 characters a token.
 */
import type { ChatMessage, ChatRequest, ToolCall, Usage } from "../model/types";
import type { WebPluginOptions } from "./web-search";
import { imageOvercount } from "./image-size";

/** What a request sends, counted once: characters (ASCII and other), messages, tools and image parts. */
export interface PromptSize {
  ascii: number;
  other: number;
  messages: number;
  tools: number;
  /** One entry per image (or other non-text) part: whether it asked for `detail: "low"`. */
  images: boolean[];
}

/** Characters a web-search result may add to the prompt (title, URL and description). */
export const SEARCH_RESULT_CHARS = 1000;

function addText(c: PromptSize, value: unknown): void {
  // Fields passed through unvalidated (tool calls) may hold anything: counted as their JSON.
  const text = typeof value === "string" ? value : value == null ? "" : (JSON.stringify(value) ?? "");
  let other = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) other++;
  c.ascii += text.length - other;
  c.other += other;
}

function addToolCalls(c: PromptSize, calls: readonly ToolCall[] | undefined): void {
  for (const t of calls ?? []) {
    addText(c, t?.id);
    addText(c, t?.function?.name);
    addText(c, t?.function?.arguments);
  }
}

function addMessages(c: PromptSize, messages: readonly ChatMessage[]): void {
  for (const m of messages) {
    c.messages++;
    addText(c, m.name);
    addText(c, m.tool_call_id);
    if (typeof m.content === "string") addText(c, m.content);
    else if (Array.isArray(m.content)) {
      for (const p of m.content) {
        if (p.type === "text") addText(c, p.text);
        else c.images.push((p as { image_url?: { detail?: string } }).image_url?.detail === "low");
      }
    }
    addToolCalls(c, m.tool_calls);
  }
}

/** Measures what `req` sends (and, with the web plugin, the search results it will carry). */
export function measurePrompt(
  req: Pick<ChatRequest, "messages" | "tools" | "response_format">,
  web?: Pick<WebPluginOptions, "maxResults" | "searchPrompt"> | null,
): PromptSize {
  const c: PromptSize = { ascii: 0, other: 0, messages: 0, tools: req.tools?.length ?? 0, images: [] };
  addMessages(c, req.messages);
  if (req.tools?.length) addText(c, JSON.stringify(req.tools));
  if (req.response_format) addText(c, JSON.stringify(req.response_format));
  // A structured output may travel as one more, forced tool (Anthropic), with its framing and
  // Anthropic's tool-use system prompt: held as such everywhere (a few tokens more elsewhere).
  const format = req.response_format?.type;
  if (format === "json_object" || format === "json_schema") c.tools++;
  if (web) {
    addText(c, web.searchPrompt);
    c.ascii += web.maxResults * SEARCH_RESULT_CHARS;
    c.messages++;
  }
  return c;
}

/** The most one PDF document can count: 100 pages (Anthropic's limit) of text and page image, ~4,600 each. */
export const DOCUMENT_MAX_TOKENS = 460_000;

/**
 * Measures a Messages client's own body, which an Anthropic upstream gets instead of the
 * translation: every string of every block at any depth (history blocks of every type —
 * thinking, server tool calls and results, search results, tool results' nested content —
 * the system prompt, tool definitions, server tools included, the output format), each image
 * as one image, each document as its text (a base64 PDF as its data, 3 characters a token,
 * at most DOCUMENT_MAX_TOKENS; a PDF by URL at that most).
 */
export function measureNative(body: Record<string, unknown>): PromptSize {
  const c: PromptSize = { ascii: 0, other: 0, messages: 0, tools: 0, images: [] };
  const walk = (v: unknown, depth: number): void => {
    if (depth > 64) return addText(c, v);
    if (typeof v === "string") return addText(c, v);
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
      return;
    }
    if (!v || typeof v !== "object") return;
    const o = v as Record<string, unknown>;
    if (o.type === "image") return void c.images.push(false);
    if (o.type === "document") return addDocument(c, o, (x) => walk(x, depth + 1));
    for (const [k, x] of Object.entries(o)) if (k !== "cache_control" && k !== "type") walk(x, depth + 1);
  };
  walk(body.system, 0);
  if (Array.isArray(body.messages))
    for (const m of body.messages) {
      c.messages++;
      walk((m as { content?: unknown })?.content, 0);
    }
  if (Array.isArray(body.tools) && body.tools.length) {
    c.tools = body.tools.length;
    addText(c, JSON.stringify(body.tools));
  }
  const format = (body.output_config as { format?: unknown } | undefined)?.format;
  if (format) {
    c.tools++;
    addText(c, JSON.stringify(format));
  }
  return c;
}

function addDocument(c: PromptSize, doc: Record<string, unknown>, walk: (v: unknown) => void): void {
  const src = (doc.source ?? {}) as Record<string, unknown>;
  addText(c, doc.title);
  addText(c, doc.context);
  if (src.type === "base64" && typeof src.data === "string")
    c.ascii += Math.min(src.data.length, DOCUMENT_MAX_TOKENS * 3);
  else if (src.type === "url" || src.type === "file") c.ascii += DOCUMENT_MAX_TOKENS * 3;
  else walk(src.type === "text" ? src.data : src.content);
}

/**
 * The most one image part can count, by the providers' documented rules. The image's size is
 * unknown before the provider reads it, so the largest the provider accepts is assumed:
 * - OpenAI tile models (GPT-4o, GPT-4.1, GPT-4 Turbo): fitted into 2048×2048, the short side
 *   scaled to 768, then 85 + 170 per 512-px tile, at most 8 tiles: 1,445 (`detail: "low"`: 85).
 *   GPT-4o mini counts 2,833 + 5,667 per tile: at most 48,169 (low: 2,833).
 *   Patch models (GPT-4.1 mini/nano, o4-mini, GPT-5): at most 1,536 32-px patches times a
 *   model multiplier of up to 2.46: 3,779, which is also what any other OpenAI-compatible model
 *   is held at.
 * - Anthropic: about width × height / 750, after scaling anything beyond ~1.15 megapixels
 *   down: at most ~1,600.
 * - Gemini: 258 per 768×768 tile (2.x), 1,120 at the default high media resolution (3.x):
 *   held at ten tiles, 2,580.
 */
export function imageTokens(protocol: string, upstreamModel: string, detail: { low: boolean }): number {
  if (protocol === "anthropic") return 1600;
  if (protocol === "gemini") return 2580;
  if (/^gpt-4o-mini/.test(upstreamModel)) return detail.low ? 2833 : 48169;
  if (/^(gpt-4o|chatgpt-4o|gpt-4-turbo|gpt-4\.1(?!-mini|-nano))/.test(upstreamModel)) return detail.low ? 85 : 1445;
  return 3779;
}

/** Anthropic adds a tool-use system prompt of up to 346 tokens when tools are sent. */
const ANTHROPIC_TOOL_PROMPT = 346;
/** Per tool definition, for the framing the JSON text does not show. */
const PER_TOOL = 16;

/** Upper-side estimate of the prompt tokens of `p` sent to one provider model, for sizing the hold. */
export function holdInputTokens(p: PromptSize, protocol: string, upstreamModel: string): number {
  let images = 0;
  for (const low of p.images) images += imageTokens(protocol, upstreamModel, { low });
  const tools = p.tools ? p.tools * PER_TOOL + (protocol === "anthropic" ? ANTHROPIC_TOOL_PROMPT : 0) : 0;
  return Math.ceil(p.ascii / 3) + p.other + 4 * p.messages + 8 + images + tools;
}

/** Upper-side estimate of output tokens received (text and tool calls), as the hold counts text. */
export function outputTokens(text: string, calls: readonly ToolCall[] = []): number {
  const c: PromptSize = { ascii: 0, other: 0, messages: 0, tools: 0, images: [] };
  addText(c, text);
  addToolCalls(c, calls);
  return Math.ceil(c.ascii / 3) + c.other;
}

/** Ordinary estimate (~4 characters a token). */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/** The text characters of the messages (what the partial-stream estimate counts). */
function textChars(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages)
    n +=
      typeof m.content === "string"
        ? m.content.length
        : Array.isArray(m.content)
          ? m.content.reduce((a, p) => a + (p.type === "text" ? (p.text?.length ?? 0) : 0), 0)
          : 0;
  return n;
}

/**
 * Usage for a stream that ended without the upstream's. The client left: the input as the hold
 * estimated it (everything sent, for the provider that answered), inline images at their own
 * size, plus the output read from the upstream until the drain ended, counted the same way. The upstream failed: the text received, at the ordinary ~4 characters a token.
 */
export function streamUsageEstimate(
  prompt: PromptSize,
  messages: readonly ChatMessage[],
  protocol: string,
  upstreamModel: string,
  end: { ending: "complete" | "failed" | "client_left"; text: string; toolCalls: readonly ToolCall[] },
): Usage {
  const none = { cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
  if (end.ending === "client_left")
    return {
      // The hold's input, but each inline image at its own size (image-size.ts), not the largest.
      promptTokens: Math.max(
        0,
        holdInputTokens(prompt, protocol, upstreamModel) - imageOvercount(messages, protocol, upstreamModel),
      ),
      completionTokens: outputTokens(end.text, end.toolCalls),
      ...none,
    };
  let out = end.text.length;
  for (const t of end.toolCalls) out += t.function.name.length + t.function.arguments.length;
  return { promptTokens: estimateTokens(textChars(messages)), completionTokens: estimateTokens(out), ...none };
}
