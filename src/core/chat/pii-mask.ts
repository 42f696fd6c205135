/**
 * PII masking for a whole chat request, with one mapping shared by every message so the same
 * value reads as the same placeholder everywhere (system prompt, history, tool results), and
 * by the client's own Anthropic body when it rides along (pii-native.ts): the translation and
 * the native body carry the same placeholders, and the body is still sent as the client's.
 *
 * What is masked: string contents of every role, `text` parts, and string values inside
 * tool-call arguments (JSON parsed, string values masked, keys and numbers left alone, then
 * re-serialised compactly; arguments that are not JSON are masked as plain text). Not
 * masked: image parts (URLs and data URLs), message `name`, tool-call ids and function names.
 *
 * Nothing is copied unless something was found: the caller gets its own array back and a null
 * mapping, so the zero-copy path stays zero-copy.
 */
import { findPii } from "../../lib/pii/detect";
import { PiiMasker } from "../../lib/pii/mask";
import { PiiStreamUnmasker, unmask } from "../../lib/pii/unmask";
import type { ChatMessage, ContentPart, NativeAnthropic, NativeResponses, ToolCall } from "../model/types";
import { maskResponsesBody, responsesTexts } from "./pii-responses";
import { anthropicTexts, gluedTextHasPii, mapCow, mapJsonStrings, maskAnthropicBody } from "./pii-native";

/** Masks `messages`; `mapping` is null (and `messages` the same array) when nothing was found. */
export function maskMessages(
  messages: ChatMessage[],
  masker = new PiiMasker(),
): {
  messages: ChatMessage[];
  mapping: Map<string, string> | null;
} {
  // Placeholder-shaped text anywhere in the request is reserved before any is handed out.
  for (const m of messages) {
    if (typeof m.content === "string") masker.reserve(m.content);
    else if (Array.isArray(m.content)) for (const p of m.content) if (p.type === "text") masker.reserve(p.text);
    for (const c of m.tool_calls ?? []) masker.reserve(c.function.arguments);
  }
  let out: ChatMessage[] | null = null;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const masked = maskMessage(m, masker);
    if (masked !== m) (out ??= messages.slice())[i] = masked;
  }
  return out ? { messages: out, mapping: masker.mapping } : { messages, mapping: null };
}

/**
 * Masks a request: its messages and, when the client's own Anthropic body rides along, that
 * body in place with the same mapping (pii-native.ts), so it is still what goes to Claude.
 * Nothing found: the very same request and a null mapping; the body's texts are not walked
 * then (they are the texts the messages hold), but for an assistant turn of several text
 * blocks, which the translation glues together (gluedTextHasPii). A placeholder-shaped text
 * only the body holds (a block the translation leaves out) is reserved too: the rare request
 * that has one is masked again with it reserved.
 */
export function maskRequest<
  R extends { messages: ChatMessage[]; anthropic?: NativeAnthropic; responses?: NativeResponses },
>(req: R): { request: R; mapping: Map<string, string> | null } {
  let masker = new PiiMasker();
  let masked = maskMessages(req.messages, masker);
  if (req.responses) return maskWithResponses(req, req.responses, masker, masked);
  const native = req.anthropic;
  if (!native)
    return masked.mapping
      ? { request: { ...req, messages: masked.messages }, mapping: masked.mapping }
      : { request: req, mapping: null };
  if (!masked.mapping && !gluedTextHasPii(native.body)) return { request: req, mapping: null };
  ({ masker, masked } = reserveNative(anthropicTexts(native.body), req.messages, masker, masked));
  const body = maskAnthropicBody(native.body, masker);
  // A value the translation's glued text hid from its scan is hidden there by its placeholder too.
  const messages = hideValues(masked.messages, masker.mapping);
  return { request: { ...req, messages, anthropic: { ...native, body } }, mapping: masker.mapping };
}

/**
 * The client's own Responses body masked with the messages' mapping (pii-responses.ts). Its
 * texts are the texts the translated messages hold, so the messages' scan decides: nothing
 * found, nothing changes. A placeholder-shaped text the body holds is reserved first, as above.
 */
function maskWithResponses<R extends { messages: ChatMessage[]; responses?: NativeResponses }>(
  req: R,
  native: NativeResponses,
  first: PiiMasker,
  firstMasked: { messages: ChatMessage[]; mapping: Map<string, string> | null },
): { request: R; mapping: Map<string, string> | null } {
  if (!firstMasked.mapping) return { request: req, mapping: null };
  const { masker, masked } = reserveNative(responsesTexts(native.body), req.messages, first, firstMasked);
  const body = maskResponsesBody(native.body, masker, (args) => maskArguments(args, masker));
  return { request: { ...req, messages: masked.messages, responses: { body } }, mapping: masker.mapping };
}

/** `messages` with every mapped value left in a content or text part replaced by its placeholder. */
function hideValues(messages: ChatMessage[], mapping: Map<string, string>): ChatMessage[] {
  const hide = (t: string) => {
    for (const [p, v] of mapping) if (t.includes(v)) t = t.replaceAll(v, p);
    return t;
  };
  return mapCow(messages, (m) => {
    if (typeof m.content === "string") {
      const content = hide(m.content);
      return content === m.content ? m : { ...m, content };
    }
    if (!Array.isArray(m.content)) return m;
    const content = mapCow(m.content, (p) => {
      if (p.type !== "text") return p;
      const text = hide(p.text);
      return text === p.text ? p : { ...p, text };
    });
    return content === m.content ? m : { ...m, content };
  });
}

/** A placeholder as the masker hands them out. */
const SHAPE = /\[[A-Z]+_\d+\]/g;

function maskMessage(m: ChatMessage, masker: PiiMasker): ChatMessage {
  let content = m.content;
  if (typeof content === "string") content = masker.mask(content);
  else if (Array.isArray(content)) content = maskParts(content, masker);
  const toolCalls = m.tool_calls ? maskToolCalls(m.tool_calls, masker) : m.tool_calls;
  if (content === m.content && toolCalls === m.tool_calls) return m;
  const copy: ChatMessage = { ...m, content };
  if (toolCalls) copy.tool_calls = toolCalls;
  return copy;
}

function maskParts(parts: ContentPart[], masker: PiiMasker): ContentPart[] {
  let out: ContentPart[] | null = null;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p.type !== "text") continue;
    const text = masker.mask(p.text);
    if (text !== p.text) (out ??= parts.slice())[i] = { ...p, text };
  }
  return out ?? parts;
}

function maskToolCalls(calls: ToolCall[], masker: PiiMasker): ToolCall[] {
  let out: ToolCall[] | null = null;
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i]!;
    const args = maskArguments(c.function.arguments, masker);
    if (args !== c.function.arguments)
      (out ??= calls.slice())[i] = { ...c, function: { ...c.function, arguments: args } };
  }
  return out ?? calls;
}

/** The arguments JSON with its string values masked; the same string when nothing was found. */
export function maskArguments(args: string, masker: PiiMasker): string {
  // The common case: one scan, no parse. Only valid without escapes: in `"call\n010-…"`
  // the raw text glues the number to the `n` of `\n`, the parsed string does not.
  if (!args.includes("\\") && findPii(args).length === 0) return args;
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    return masker.mask(args);
  }
  const masked = mapJsonStrings(value, (t) => masker.mask(t));
  return masked === value ? args : JSON.stringify(masked);
}

/**
 * The chat service's PII port (`maskRequest`, `unmask`, `streamUnmasker`), for the composition root.
 * Note that answers can carry placeholders in tool-call arguments too, not only in content.
 */
export const piiMasking = {
  maskRequest,
  unmask,
  streamUnmasker: (mapping: Map<string, string>) => new PiiStreamUnmasker(mapping),
};

/**
 * The native body's texts reserved in the masker, so no placeholder handed out collides with
 * one the client wrote. When one already did (a placeholder-shaped text only the body holds),
 * the messages are masked again by a fresh masker with every text reserved first.
 */
function reserveNative(
  texts: string[],
  messages: ChatMessage[],
  masker: PiiMasker,
  masked: { messages: ChatMessage[]; mapping: Map<string, string> | null },
): { masker: PiiMasker; masked: { messages: ChatMessage[]; mapping: Map<string, string> | null } } {
  const taken = masker.mapping;
  if (texts.some((t) => t.includes("[") && [...t.matchAll(SHAPE)].some((m) => taken.has(m[0])))) {
    const fresh = new PiiMasker();
    for (const t of texts) fresh.reserve(t);
    return { masker: fresh, masked: maskMessages(messages, fresh) };
  }
  for (const t of texts) masker.reserve(t);
  return { masker, masked };
}
