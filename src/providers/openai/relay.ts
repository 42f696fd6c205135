/**
 * The raw relay's scanner for an OpenAI-compatible stream (core/model/relay.ts): each event is
 * classified by its bytes alone (`[DONE]`, an error payload, the usage chunk, or an ordinary
 * chunk, which is forwarded unparsed). The usage chunk is held back (the client's final frame
 * adds the cost to it) unless it rides on a content chunk. Usage and finish reason are mapped
 * by the non-streaming parser's own functions (response.ts), so the same answer is accounted
 * the same streamed or not; the forwarded text is rebuilt only when the bill asks for it.
 */
import type { RawScanner, RawTail, RawVerdict } from "../../core/model/relay";
import type { UpstreamError } from "../../core/upstream/error";
import { emptyUsage, type ChatResult, type FinishReason, type ToolCall, type Usage } from "../../core/model/types";
import { eventJson } from "../../lib/sse-split";
import { classifyOpenAIStreamError } from "./errors";
import { mapOpenAIFinishReason, mapOpenAIUsage } from "./response";
import type { OpenAIWireChunk } from "./wire";

const enc = new TextEncoder();
const DONE_1 = enc.encode("data: [DONE]");
const DONE_2 = enc.encode("data:[DONE]");
const ERROR_1 = enc.encode('data: {"error"');
const ERROR_2 = enc.encode('data:{"error"');
const USAGE = enc.encode('"usage"');

function startsWith(b: Uint8Array, p: Uint8Array): boolean {
  if (b.length < p.length) return false;
  for (let i = 0; i < p.length; i++) if (b[i] !== p[i]) return false;
  return true;
}

function indexOfSeq(b: Uint8Array, p: Uint8Array, from = 0): number {
  const first = p[0]!;
  for (let i = b.indexOf(first, from); i !== -1 && i <= b.length - p.length; i = b.indexOf(first, i + 1)) {
    let ok = true;
    for (let j = 1; j < p.length; j++)
      if (b[i + j] !== p[j]) {
        ok = false;
        break;
      }
    if (ok) return i;
  }
  return -1;
}

export type OpenAIEventKind = "done" | "error" | "usage" | "chunk";

/**
 * Classifies one OpenAI chat stream event by its bytes: `[DONE]`, an error payload, the
 * usage chunk (a `"usage"` key whose value is an object, not null), or an ordinary chunk.
 */
export function classifyOpenAIEvent(ev: Uint8Array): OpenAIEventKind {
  if (startsWith(ev, DONE_1) || startsWith(ev, DONE_2)) return "done";
  if (startsWith(ev, ERROR_1) || startsWith(ev, ERROR_2)) return "error";
  let i = indexOfSeq(ev, USAGE);
  while (i !== -1) {
    let j = i + USAGE.length;
    while (ev[j] === 0x20 || ev[j] === 0x09) j++;
    if (ev[j] === 0x3a) {
      j++;
      while (ev[j] === 0x20 || ev[j] === 0x09) j++;
      if (ev[j] === 0x7b) return "usage";
    }
    i = indexOfSeq(ev, USAGE, i + 1);
  }
  return "chunk";
}

export class OpenAIRawScanner implements RawScanner {
  readonly terminator = "data: [DONE]";
  failure: UpstreamError | null = null;
  private readonly forwarded: Uint8Array[] = [];
  private usageChunk: (OpenAIWireChunk & Record<string, any>) | null = null;

  scan(ev: Uint8Array): RawVerdict {
    const kind = classifyOpenAIEvent(ev);
    if (kind === "chunk") {
      this.forwarded.push(ev);
      return "forward";
    }
    if (kind === "usage") {
      this.usageChunk = eventJson(ev);
      if (!this.usageChunk?.choices?.length) return "held";
      this.forwarded.push(ev); // usage riding on a content chunk: relayed, the cost event follows
      return "forward";
    }
    if (kind === "done") return "end";
    this.failure = classifyOpenAIStreamError(eventJson(ev));
    return "failed";
  }

  usage(): Usage | null {
    return this.usageChunk ? mapOpenAIUsage(this.usageChunk.usage) : null;
  }

  result(): ChatResult {
    let content = "";
    let finish: FinishReason = "stop";
    const calls: ToolCall[] = [];
    for (const ev of this.forwarded) {
      const choice = (eventJson(ev) as OpenAIWireChunk | null)?.choices?.[0];
      if (!choice) continue;
      if (typeof choice.delta?.content === "string") content += choice.delta.content;
      for (const tc of choice.delta?.tool_calls ?? []) {
        const i = tc.index ?? 0;
        calls[i] ??= { id: tc.id ?? "", type: "function", function: { name: "", arguments: "" } };
        if (tc.id) calls[i]!.id = tc.id;
        if (tc.function?.name) calls[i]!.function.name += tc.function.name;
        if (tc.function?.arguments) calls[i]!.function.arguments += tc.function.arguments;
      }
      if (choice.finish_reason) finish = mapOpenAIFinishReason(choice.finish_reason);
    }
    const r: ChatResult = { content: content || (calls.length ? null : ""), finishReason: finish, usage: emptyUsage() };
    if (calls.length) r.toolCalls = calls.filter(Boolean);
    return r;
  }

  /** The usage chunk, and the upstream's `id` / `created` (of the usage chunk, else the first chunk). */
  tail(): RawTail {
    const first = this.usageChunk ?? (this.forwarded.length ? eventJson(this.forwarded[0]!) : null);
    return {
      closing: this.usageChunk,
      terminal: null,
      ...(typeof first?.id === "string" ? { id: first.id } : undefined),
      ...(typeof first?.created === "number" ? { created: first.created } : undefined),
    };
  }
}
