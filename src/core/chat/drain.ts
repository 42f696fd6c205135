/**
 * Reading a typed upstream stream (the core's StreamEvents) to its end for the call's stream
 * (answer-stream.ts), whatever dialect encodes it: PII placeholders are restored as text and
 * tool-call arguments arrive (a split placeholder is held back until it completes), tool calls
 * are accumulated by index, and any upstream error or truncation ends it with `failure` set. A
 * client that went away gets nothing more, but the read goes on (the call cuts it after a
 * while): the usage comes last, and the call is billed on it. What the stream's end does with
 * `failure` is the stream-failure rule of docs/decisions.md #6.
 */
import type { PiiPort } from "./ports";
import type { ChatResult, FinishReason, StreamEvent, ToolCall, Usage } from "../model/types";
import { emptyUsage } from "../model/types";
import { failureWords, logUpstreamFailure } from "../upstream/words";
import type { Lang } from "../errors";

export type ToolCallEvent = Extract<StreamEvent, { type: "tool_call" }>;

export interface TypedSink {
  /** Restored text, never empty. */
  text(delta: string): void;
  /** One tool-call fragment; `call` is the accumulated call after it. */
  toolCall(ev: ToolCallEvent, call: ToolCall): void;
}

export interface Drained {
  /** Every text received (delivered, unless the client left or the stream failed). */
  text: string;
  /** Tool calls by upstream index (sparse when the upstream skips indices). */
  calls: ToolCall[];
  finish: FinishReason;
  usage: Usage | null;
  /** Why the stream did not end cleanly, in the client's words; null when it did (also after the client left). */
  failure: string | null;
}

export type StreamUnmasker = ReturnType<PiiPort["streamUnmasker"]>;

/**
 * `restorer` makes one PII stream unmasker per text channel (the content, and each tool
 * call's arguments, as the masker's contract asks); null when nothing was masked.
 */
export async function drainTyped(
  events: AsyncIterable<StreamEvent>,
  restorer: (() => StreamUnmasker) | null,
  gone: () => boolean,
  sink: TypedSink,
  /** Who the stream is for (`request_id`, `provider`), in the log line of a failure. */
  logFields: Record<string, unknown>,
  /** The language of `failure`. */
  lang: Lang = "ko",
): Promise<Drained> {
  const d: Drained = { text: "", calls: [], finish: "stop", usage: null, failure: null };
  const content = restorer?.() ?? null;
  const argRestorers = new Map<number, StreamUnmasker>();
  try {
    for await (const raw of events) {
      if (raw.type === "text") {
        const out = content ? content.push(raw.text) : raw.text;
        d.text += out;
        if (out && !gone()) sink.text(out);
      } else if (raw.type === "tool_call") {
        let ev = raw;
        if (restorer && raw.arguments) {
          let r = argRestorers.get(raw.index);
          if (!r) argRestorers.set(raw.index, (r = restorer()));
          ev = { ...raw, arguments: r.push(raw.arguments) };
          // Everything held back (a possible placeholder) and nothing else to say: wait.
          if (!ev.arguments && !ev.id && !ev.name) continue;
        }
        d.calls[ev.index] ??= { id: ev.id ?? "", type: "function", function: { name: "", arguments: "" } };
        const call = d.calls[ev.index]!;
        if (ev.id) call.id = ev.id;
        if (ev.name) call.function.name += ev.name;
        if (ev.arguments) call.function.arguments += ev.arguments;
        if (!gone()) sink.toolCall(ev, call);
      } else if (raw.type === "finish") d.finish = raw.reason;
      else if (raw.type === "usage") d.usage = raw.usage;
    }
  } catch (err) {
    if (gone()) d.failure = "client disconnected";
    else {
      // The client reads our words; the provider's own message goes to the operator's log.
      logUpstreamFailure(err, logFields);
      d.failure = failureWords(err, lang);
    }
  }
  if (content) {
    const rest = content.flush();
    d.text += rest;
    if (rest && !d.failure && !gone()) sink.text(rest);
  }
  for (const [index, r] of argRestorers) {
    const rest = r.flush();
    const call = d.calls[index];
    if (!rest || !call) continue;
    call.function.arguments += rest;
    if (!d.failure && !gone()) sink.toolCall({ type: "tool_call", index, arguments: rest }, call);
  }
  return d;
}

/** The finished answer of a clean stream, for settlement and the response cache. */
export function drainedResult(d: Drained): ChatResult {
  const calls = d.calls.filter(Boolean);
  const result: ChatResult = {
    content: d.text || (calls.length ? null : ""),
    finishReason: d.finish,
    usage: d.usage ?? emptyUsage(),
  };
  if (calls.length) result.toolCalls = calls;
  return result;
}
