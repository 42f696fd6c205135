/**
 * The raw relay's scanner for an Anthropic stream relayed to a Messages client
 * (core/model/relay.ts). Only the event names are looked at; `message_start` and
 * `message_delta` are parsed for the usage, mapped as the non-streaming answer's is
 * (response.ts). `message_delta` is held back (the client's copy adds the cost) and
 * `message_stop` ends the answer; an `error` event is the upstream's failure, its type kept.
 */
import type { RawScanner, RawTail, RawVerdict } from "../../core/model/relay";
import type { UpstreamError } from "../../core/upstream/error";
import { emptyUsage, type ChatResult, type ToolCall, type Usage } from "../../core/model/types";
import { eventJson } from "../../lib/sse-split";
import { classifyAnthropicStreamError } from "./errors";
import { mapAnthropicStopReason, mapAnthropicUsage } from "./response";
import type { AnthropicWireUsage } from "./wire";

const dec = new TextDecoder();

/** The `event:` name of one SSE event (Anthropic always sends it first). */
export function eventName(ev: Uint8Array): string | null {
  const m = /^event:\s?([A-Za-z_]+)/.exec(dec.decode(ev.subarray(0, 48)));
  return m ? m[1]! : null;
}

export class AnthropicRawScanner implements RawScanner {
  readonly terminator = "message_stop";
  failure: UpstreamError | null = null;
  private readonly forwarded: Uint8Array[] = [];
  /** message_start's usage, updated by message_delta's cumulative values. */
  private wireUsage: AnthropicWireUsage = {};
  private delta: Record<string, any> | null = null;
  private stop: Uint8Array | null = null;
  private errorType: string | undefined;

  scan(ev: Uint8Array): RawVerdict {
    const name = eventName(ev);
    if (name === "message_delta") {
      this.delta = eventJson(ev);
      Object.assign(this.wireUsage, this.delta?.usage);
      return "held";
    }
    if (name === "message_stop") {
      this.stop = ev;
      return "end";
    }
    if (name === "error") {
      const payload = eventJson(ev);
      this.errorType = typeof payload?.error?.type === "string" ? payload.error.type : undefined;
      this.failure = classifyAnthropicStreamError(payload ?? {});
      return "failed";
    }
    if (name === "message_start") this.wireUsage = { ...eventJson(ev)?.message?.usage };
    this.forwarded.push(ev);
    return "forward";
  }

  /** The usage once `message_delta` gave the output's (before it, the answer is not over). */
  usage(): Usage | null {
    return this.delta ? mapAnthropicUsage(this.wireUsage) : null;
  }

  result(): ChatResult {
    let content = "";
    const calls = new Map<number, ToolCall>();
    for (const ev of this.forwarded) {
      const e = eventJson(ev);
      if (e?.type === "content_block_start" && e.content_block?.type === "tool_use")
        calls.set(e.index, {
          id: e.content_block.id ?? "",
          type: "function",
          function: { name: e.content_block.name ?? "", arguments: "" },
        });
      else if (e?.type === "content_block_start" && e.content_block?.type === "text")
        content += e.content_block.text ?? "";
      else if (e?.type === "content_block_delta" && e.delta?.type === "text_delta") content += e.delta.text ?? "";
      else if (e?.type === "content_block_delta" && e.delta?.type === "input_json_delta") {
        const call = calls.get(e.index);
        if (call) call.function.arguments += e.delta.partial_json ?? "";
      }
    }
    const toolCalls = [...calls.values()];
    const r: ChatResult = {
      content: content || (toolCalls.length ? null : ""),
      finishReason: mapAnthropicStopReason(this.delta?.delta?.stop_reason),
      usage: emptyUsage(),
    };
    if (toolCalls.length) r.toolCalls = toolCalls;
    return r;
  }

  tail(): RawTail {
    return { closing: this.delta, terminal: this.stop, ...(this.errorType && { errorType: this.errorType }) };
  }
}
