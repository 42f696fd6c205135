/**
 * PII masking inside a client's own Anthropic Messages body (NativeAnthropic), so a masked
 * Claude call still goes to Claude as the client sent it: only the text the client wrote is
 * rewritten, copy on write, and every other field keeps its very object (it serialises to the
 * same bytes). Masked: `system` (a string or its `text` blocks), in every message a string
 * content, `text` blocks, `tool_result` content (a string or its `text` blocks) and the string
 * values of `tool_use.input`. Never touched: `thinking` / `redacted_thinking` blocks and their
 * signatures (Anthropic checks them), ids, names, images, documents, `cache_control`, and every
 * field not named here. The answer's restoring is alike: `text` blocks and `tool_use.input`,
 * never the model's thinking (its signature covers the masked text the client sends back).
 */
import { findPii } from "../../lib/pii/detect";
import type { PiiMasker } from "../../lib/pii/mask";
import { unmask } from "../../lib/pii/unmask";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Every text of the body the masker may rewrite, for `PiiMasker.reserve` before any masking. */
export function anthropicTexts(body: Obj): string[] {
  const out: string[] = [];
  const text = (v: unknown) => typeof v === "string" && out.push(v);
  const blocks = (v: unknown) => {
    if (typeof v === "string") return void out.push(v);
    if (!Array.isArray(v)) return;
    for (const b of v) {
      if (!isObj(b)) continue;
      if (b.type === "text") text(b.text);
      else if (b.type === "tool_result") blocks(b.content);
      else if (b.type === "tool_use") jsonStrings(b.input, out);
    }
  };
  blocks(body.system);
  if (Array.isArray(body.messages)) for (const m of body.messages) if (isObj(m)) blocks(m.content);
  return out;
}

/**
 * Whether an assistant turn of several `text` blocks holds a finding in one of them: the
 * translation joins such blocks with nothing between them, which can glue a value to the next
 * block's first character ("…5678" + "9 items") so that the joined text holds none. Only these
 * texts can hide a finding from the translation's scan; the other joins put a line break
 * between texts, which never hides one. Walks the body without copying it.
 */
export function gluedTextHasPii(body: Obj): boolean {
  if (!Array.isArray(body.messages)) return false;
  for (const m of body.messages) {
    if (!isObj(m) || m.role !== "assistant" || !Array.isArray(m.content)) continue;
    const texts = m.content.filter((b): b is Obj => isObj(b) && b.type === "text" && typeof b.text === "string");
    if (texts.length > 1 && texts.some((b) => findPii(b.text as string).length > 0)) return true;
  }
  return false;
}

function jsonStrings(v: unknown, out: string[]): void {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const x of v) jsonStrings(x, out);
  else if (isObj(v)) for (const x of Object.values(v)) jsonStrings(x, out);
}

/** `body` with the client's texts masked; the very same object when nothing changed. */
export function maskAnthropicBody(body: Obj, masker: PiiMasker): Obj {
  const mask = (s: string) => masker.mask(s);
  let out: Obj | null = null;
  const system = maskContent(body.system, mask);
  if (system !== body.system) (out ??= { ...body }).system = system;
  if (Array.isArray(body.messages)) {
    const messages = mapCow(body.messages, (m) => {
      if (!isObj(m)) return m;
      const content = maskContent(m.content, mask);
      return content === m.content ? m : { ...m, content };
    });
    if (messages !== body.messages) (out ??= { ...body }).messages = messages;
  }
  return out ?? body;
}

/** An Anthropic answer with its `text` blocks and `tool_use.input` restored (thinking left as written). */
export function unmaskAnthropicAnswer(body: Obj, mapping: ReadonlyMap<string, string>): Obj {
  if (!Array.isArray(body.content)) return body;
  const restore = (s: string) => unmask(s, mapping);
  const content = mapCow(body.content, (b) => {
    if (!isObj(b)) return b;
    if (b.type === "text" && typeof b.text === "string") {
      const text = restore(b.text);
      return text === b.text ? b : { ...b, text };
    }
    if (b.type === "tool_use") {
      const input = mapJsonStrings(b.input, restore);
      return input === b.input ? b : { ...b, input };
    }
    return b;
  });
  return content === body.content ? body : { ...body, content };
}

/** A string content or a block list, its client-written texts rewritten by `f`. */
function maskContent(v: unknown, f: (s: string) => string): unknown {
  if (typeof v === "string") return f(v);
  if (!Array.isArray(v)) return v;
  return mapCow(v, (b) => {
    if (!isObj(b)) return b;
    if (b.type === "text" && typeof b.text === "string") {
      const text = f(b.text);
      return text === b.text ? b : { ...b, text };
    }
    if (b.type === "tool_result") {
      const content = maskContent(b.content, f);
      return content === b.content ? b : { ...b, content };
    }
    if (b.type === "tool_use") {
      const input = mapJsonStrings(b.input, f);
      return input === b.input ? b : { ...b, input };
    }
    return b; // thinking, redacted_thinking, image, document, server tools: as sent
  });
}

/** String values of a JSON value rewritten (keys and numbers left alone); the same value when none changed. */
export function mapJsonStrings(v: unknown, f: (s: string) => string): unknown {
  if (typeof v === "string") return f(v);
  if (Array.isArray(v)) return mapCow(v, (x) => mapJsonStrings(x, f));
  if (isObj(v)) {
    let out: Obj | null = null;
    for (const [k, x] of Object.entries(v)) {
      const m = mapJsonStrings(x, f);
      if (m !== x) (out ??= { ...v })[k] = m;
    }
    return out ?? v;
  }
  return v;
}

/** `xs` mapped, copied only once an element changed; the same array otherwise. */
export function mapCow<T>(xs: T[], f: (x: T) => T): T[] {
  let out: T[] | null = null;
  for (let i = 0; i < xs.length; i++) {
    const m = f(xs[i]!);
    if (m !== xs[i]) (out ??= xs.slice())[i] = m;
  }
  return out ?? xs;
}
