/**
 * Anthropic Messages SSE → canonical StreamEvents.
 *
 * message_start (input and cache counts, placeholder output) → content blocks (text_delta →
 * text; tool_use start → tool_call with id and name; input_json_delta → tool_call arguments;
 * thinking and signature deltas are not surfaced) → message_delta (stop_reason → `finish`;
 * its usage is cumulative: every field present replaces the earlier value) → message_stop
 * (→ `usage`, the last value of every field). `event: error` throws the classified error;
 * ending without message_stop throws `truncated`. The forced tool of a structured-output
 * request (`jsonTool`) is the answer: its input_json_delta fragments are text deltas, and its
 * `tool_use` stop is `stop` unless the caller's own tools were called too.
 */
import type { FinishReason, StreamEvent } from "../../core/model/types";
import type { SseEvent } from "../../lib/sse";
import { truncatedError } from "../common/errors";
import { parseStreamJson } from "../common/http";
import { endQuietlyWhenComplete } from "../common/stream";
import { classifyAnthropicStreamError } from "./errors";
import { mapAnthropicStopReason, mapAnthropicUsage } from "./response";
import type { AnthropicWireStreamEvent, AnthropicWireUsage } from "./wire";

interface AnthropicStreamState {
  usage: AnthropicWireUsage;
  /** content block index → tool call index (0, 1, ... in order of appearance). */
  toolIndex: Map<number, number>;
  /** Content block index of the forced JSON tool's call → whether any of its input was sent. */
  jsonBlocks: Map<number, boolean>;
  finish?: FinishReason;
  done: boolean;
}

/** Translates decoded SSE events into StreamEvents; owns the stream state. */
export async function* readAnthropicStream(
  events: AsyncIterable<SseEvent>,
  jsonTool?: string,
): AsyncGenerator<StreamEvent, void, undefined> {
  const state: AnthropicStreamState = { usage: {}, toolIndex: new Map(), jsonBlocks: new Map(), done: false };
  for await (const ev of endQuietlyWhenComplete(events, () => state.done)) {
    if (state.done) continue; // nothing after message_stop matters
    const msg = parseStreamJson(ev.data) as AnthropicWireStreamEvent;
    switch (msg.type ?? ev.event) {
      case "message_start":
        mergeAnthropicUsage(state.usage, msg.message?.usage);
        break;
      case "content_block_start": {
        const block = msg.content_block;
        if (block?.type === "tool_use" && jsonTool !== undefined && block.name === jsonTool) {
          state.jsonBlocks.set(msg.index ?? 0, false);
        } else if (block?.type === "tool_use") {
          const index = state.toolIndex.size;
          state.toolIndex.set(msg.index ?? 0, index);
          yield { type: "tool_call", index, id: block.id ?? "", name: block.name ?? "", arguments: "" };
        } else if (block?.type === "text" && block.text) {
          yield { type: "text", text: block.text };
        }
        break;
      }
      case "content_block_delta": {
        const d = msg.delta;
        if (d?.type === "text_delta" && d.text) yield { type: "text", text: d.text };
        else if (d?.type === "input_json_delta" && d.partial_json && state.jsonBlocks.has(msg.index ?? 0)) {
          state.jsonBlocks.set(msg.index ?? 0, true);
          yield { type: "text", text: d.partial_json };
        } else if (d?.type === "input_json_delta" && d.partial_json) {
          const index = state.toolIndex.get(msg.index ?? 0);
          if (index !== undefined) yield { type: "tool_call", index, arguments: d.partial_json };
        }
        break;
      }
      case "content_block_stop":
        // An empty input streams no fragment at all; the answer is still a JSON object.
        if (state.jsonBlocks.get(msg.index ?? 0) === false) {
          state.jsonBlocks.set(msg.index ?? 0, true);
          yield { type: "text", text: "{}" };
        }
        break;
      case "message_delta":
        mergeAnthropicUsage(state.usage, msg.usage);
        if (msg.delta?.stop_reason) {
          state.finish = mapAnthropicStopReason(msg.delta.stop_reason);
          if (state.finish === "tool_calls" && state.jsonBlocks.size > 0 && state.toolIndex.size === 0)
            state.finish = "stop";
          yield { type: "finish", reason: state.finish };
        }
        break;
      case "message_stop":
        state.done = true;
        if (state.finish === undefined) yield { type: "finish", reason: "stop" };
        yield { type: "usage", usage: mapAnthropicUsage(state.usage) };
        break;
      case "error":
        throw classifyAnthropicStreamError(msg);
      default:
        // ping and event types added later: nothing to do.
        break;
    }
  }
  if (!state.done) throw truncatedError("message_stop");
}

/** Takes the last value of every usage field that is present (message_delta usage is cumulative). */
function mergeAnthropicUsage(into: AnthropicWireUsage, from: AnthropicWireUsage | undefined): void {
  if (!from) return;
  if (from.input_tokens != null) into.input_tokens = from.input_tokens;
  if (from.output_tokens != null) into.output_tokens = from.output_tokens;
  if (from.cache_creation_input_tokens != null) into.cache_creation_input_tokens = from.cache_creation_input_tokens;
  if (from.cache_read_input_tokens != null) into.cache_read_input_tokens = from.cache_read_input_tokens;
  if (from.cache_creation != null) into.cache_creation = { ...from.cache_creation };
  if (from.output_tokens_details?.thinking_tokens != null) {
    into.output_tokens_details = { thinking_tokens: from.output_tokens_details.thinking_tokens };
  }
}
