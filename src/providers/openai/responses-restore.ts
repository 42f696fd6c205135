/**
 * A masked call's Responses stream (OpenAI's `/v1/responses`), relayed with its values restored
 * (core/model/relay.ts, RawRestorer). Each output text (item and content index) and each
 * function call's arguments is one channel through a PiiStreamUnmasker: a placeholder split
 * across `…delta` events comes out whole, the tail that may still grow into one is held until
 * the channel's next delta, and what a channel still holds when its `….done` event comes goes
 * out as one more delta just before it (numbered as that `done` event). The whole texts of the
 * `done` events, of `output_item.*` and of the `response` objects (`instructions` echo and output) are restored at once.
 * Reasoning items (summaries, `encrypted_content`) are never touched. Only events that change
 * are re-encoded (`event:` + `data:`); every other event is its own bytes.
 */
import type { RawRestorer } from "../../core/model/relay";
import { PiiStreamUnmasker, unmask } from "../../lib/pii/unmask";
import { responsesEventType } from "./responses";
import { restoreItem, restorePart, unmaskResponsesAnswer } from "../../core/chat/pii-responses";

type Obj = Record<string, any>;
const enc = new TextEncoder();
const encode = (data: Obj) => enc.encode(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);

export class ResponsesRawRestorer implements RawRestorer {
  private readonly channels = new Map<string, PiiStreamUnmasker>();

  constructor(private readonly mapping: ReadonlyMap<string, string>) {}

  restore(ev: Uint8Array): Uint8Array[] {
    const { type, data } = responsesEventType(ev);
    if (!type || !data) return [ev];
    const key = `${data.item_id ?? ""}:${data.output_index ?? 0}:${data.content_index ?? 0}`;
    switch (type) {
      case "response.output_text.delta":
      case "response.function_call_arguments.delta": {
        if (typeof data.delta !== "string" || !data.delta) return [ev];
        const delta = this.channel(key).push(data.delta);
        return delta === data.delta ? [ev] : delta ? [encode({ ...data, delta })] : [];
      }
      case "response.output_text.done":
      case "response.function_call_arguments.done": {
        const field = type === "response.output_text.done" ? "text" : "arguments";
        const held = this.flush(key, type.replace(/done$/, "delta"), data);
        const whole = typeof data[field] === "string" ? unmask(data[field], this.mapping) : data[field];
        return [...held, whole === data[field] ? ev : encode({ ...data, [field]: whole })];
      }
      case "response.content_part.added":
      case "response.content_part.done": {
        const part = restorePart(data.part, this.mapping);
        return [part === data.part ? ev : encode({ ...data, part })];
      }
      case "response.output_item.added":
      case "response.output_item.done": {
        const item = restoreItem(data.item, this.mapping);
        return [item === data.item ? ev : encode({ ...data, item })];
      }
      case "response.created":
      case "response.in_progress":
      case "response.completed":
      case "response.incomplete": {
        if (!data.response || typeof data.response !== "object") return [ev];
        const response = unmaskResponsesAnswer(data.response, this.mapping);
        return [response === data.response ? ev : encode({ ...data, response })];
      }
      default:
        return [ev];
    }
  }

  private channel(key: string): PiiStreamUnmasker {
    let ch = this.channels.get(key);
    if (!ch) this.channels.set(key, (ch = new PiiStreamUnmasker(this.mapping)));
    return ch;
  }

  /** What a channel still holds, as one more delta event shaped like the `done` event that closes it. */
  private flush(key: string, deltaType: string, done: Obj): Uint8Array[] {
    const ch = this.channels.get(key);
    this.channels.delete(key);
    const rest = ch?.flush();
    if (!rest) return [];
    const { text: _t, arguments: _a, logprobs: _l, ...frame } = done;
    return [
      encode({
        ...frame,
        type: deltaType,
        delta: rest,
        ...(deltaType === "response.output_text.delta" && { logprobs: [] }),
      }),
    ];
  }
}
