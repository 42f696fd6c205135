/**
 * PII masking inside a client's own Responses body (NativeResponses), so a masked call to
 * OpenAI's Responses API still goes as the client sent it: only the text the client wrote is
 * rewritten, copy on write (every other field keeps its very object, so it serialises to the
 * same bytes). Masked: `instructions`, a string `input`, in every message item a string content
 * and its `input_text` / `output_text` parts, `function_call_output.output` (a string or its
 * text parts) and a `function_call`'s `arguments`. Never touched: `reasoning` items (summaries
 * and `encrypted_content`: OpenAI decrypts them as they were), ids, call ids, names, images,
 * files, tools and every field not named here. The answer is restored alike: message texts and
 * function-call arguments, never reasoning.
 */
import type { PiiMasker } from "../../lib/pii/mask";
import { unmask } from "../../lib/pii/unmask";
import { mapCow } from "./pii-native";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const TEXT_PARTS = new Set(["input_text", "output_text", "text"]);

/** Every text of the body the masker may rewrite, for `PiiMasker.reserve` before any masking. */
export function responsesTexts(body: Obj): string[] {
  const out: string[] = [];
  rewrite(body, (s) => {
    out.push(s);
    return s;
  });
  return out;
}

/** `body` with the client's texts masked; the very same object when nothing changed. */
export function maskResponsesBody(body: Obj, masker: PiiMasker, maskArgs: (args: string) => string): Obj {
  return rewrite(body, (s) => masker.mask(s), maskArgs);
}

/** An OpenAI response object with its message texts and call arguments restored (reasoning left as it came). */
export function unmaskResponsesAnswer(body: Obj, mapping: ReadonlyMap<string, string>): Obj {
  let out: Obj | null = null;
  // The echo of the client's own instructions, as the client wrote them.
  if (typeof body.instructions === "string") {
    const instructions = unmask(body.instructions, mapping);
    if (instructions !== body.instructions) (out ??= { ...body }).instructions = instructions;
  }
  if (Array.isArray(body.output)) {
    const output = mapCow(body.output as Obj[], (it) => (isObj(it) ? restoreItem(it, mapping) : it));
    if (output !== body.output) (out ??= { ...body }).output = output;
  }
  return out ?? body;
}

/** An `output_text` part with its text restored; the same object when nothing changed. */
export function restorePart(part: unknown, mapping: ReadonlyMap<string, string>): unknown {
  const p = part as Record<string, any> | null;
  if (!p || typeof p.text !== "string") return part;
  const text = unmask(p.text, mapping);
  return text === p.text ? part : { ...p, text };
}

/** A message's texts or a function call's arguments restored; reasoning and every other item as it came. */
export function restoreItem(item: Record<string, any>, mapping: ReadonlyMap<string, string>): Record<string, any> {
  if (item?.type === "message" && Array.isArray(item.content)) {
    let changed = false;
    const content = item.content.map((p: unknown) => {
      const r = restorePart(p, mapping);
      if (r !== p) changed = true;
      return r;
    });
    return changed ? { ...item, content } : item;
  }
  if (item?.type === "function_call" && typeof item.arguments === "string") {
    const args = unmask(item.arguments, mapping);
    return args === item.arguments ? item : { ...item, arguments: args };
  }
  return item;
}

function rewrite(body: Obj, f: (s: string) => string, g: (args: string) => string = f): Obj {
  let out: Obj | null = null;
  if (typeof body.instructions === "string") {
    const instructions = f(body.instructions);
    if (instructions !== body.instructions) (out ??= { ...body }).instructions = instructions;
  }
  if (typeof body.input === "string") {
    const input = f(body.input);
    if (input !== body.input) (out ??= { ...body }).input = input;
  } else if (Array.isArray(body.input)) {
    const input = mapCow(body.input as unknown[], (it) => (isObj(it) ? rewriteItem(it, f, g) : it));
    if (input !== body.input) (out ??= { ...body }).input = input;
  }
  return out ?? body;
}

function rewriteItem(it: Obj, f: (s: string) => string, g: (args: string) => string): Obj {
  const type = it.type ?? "message";
  if (type === "message") {
    const content = rewriteContent(it.content, f);
    return content === it.content ? it : { ...it, content };
  }
  if (type === "function_call_output") {
    const output = rewriteContent(it.output, f);
    return output === it.output ? it : { ...it, output };
  }
  if (type === "function_call" && typeof it.arguments === "string") {
    const args = g(it.arguments);
    return args === it.arguments ? it : { ...it, arguments: args };
  }
  return it; // reasoning, item_reference, built-in tool calls: as sent
}

function rewriteContent(v: unknown, f: (s: string) => string): unknown {
  if (typeof v === "string") return f(v);
  if (!Array.isArray(v)) return v;
  return mapCow(v, (p) => {
    if (!isObj(p) || !TEXT_PARTS.has(p.type as string) || typeof p.text !== "string") return p;
    const text = f(p.text);
    return text === p.text ? p : { ...p, text };
  });
}
