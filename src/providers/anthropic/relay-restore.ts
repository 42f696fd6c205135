/**
 * A masked call's Anthropic stream, relayed with its values restored (core/model/relay.ts,
 * RawRestorer). Each content block is one text channel: its `text_delta` texts (or its
 * `input_json_delta` fragments) go through one PiiStreamUnmasker, so a placeholder split across
 * deltas — or across network chunks, which the SSE splitter has already joined into events —
 * comes out whole: the tail that may still grow into a placeholder is held back until the
 * block's next delta, and what is left of it at `content_block_stop` goes out in one more delta
 * just before the stop. Only the events that change are re-encoded (`event:` line and `data:`
 * JSON, Anthropic's framing); every other event, `thinking_delta` and `signature_delta`
 * included (the signature covers the masked thinking), is relayed as its own bytes. A delta
 * whose text is all held back is not relayed.
 */
import type { RawRestorer } from "../../core/model/relay";
import { eventJson } from "../../lib/sse-split";
import { PiiStreamUnmasker } from "../../lib/pii/unmask";
import { eventName } from "./relay";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** The delta types whose text the model wrote for the client, and the field holding it. */
const RESTORED: Record<string, "text" | "partial_json"> = { text_delta: "text", input_json_delta: "partial_json" };

function encode(name: string, data: unknown): Uint8Array {
  return enc.encode(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
}

export class AnthropicRawRestorer implements RawRestorer {
  /** Per content block index: its channel and the delta type it carries. */
  private readonly blocks = new Map<number, { channel: PiiStreamUnmasker; type: string }>();

  constructor(private readonly mapping: ReadonlyMap<string, string>) {}

  restore(ev: Uint8Array): Uint8Array[] {
    const name = eventName(ev);
    if (name === "content_block_delta") return this.delta(ev);
    if (name === "content_block_start") return this.start(ev);
    if (name === "content_block_stop") {
      const index = eventJson(ev)?.index;
      return [...this.flush(typeof index === "number" ? index : -1), ev];
    }
    // The answer's end without a block's stop: nothing held may be lost.
    if (name === "message_delta" || name === "message_stop") return [...this.flushAll(), ev];
    return [ev];
  }

  /** A text block may open with text of its own (the stream's deltas follow it). */
  private start(ev: Uint8Array): Uint8Array[] {
    if (!dec.decode(ev).includes("[")) return [ev];
    const e = eventJson(ev);
    const block = e?.content_block;
    if (block?.type !== "text" || typeof block.text !== "string" || !block.text) return [ev];
    const text = this.channel(e.index, "text_delta").push(block.text);
    return text === block.text ? [ev] : [encode("content_block_start", { ...e, content_block: { ...block, text } })];
  }

  private delta(ev: Uint8Array): Uint8Array[] {
    const e = eventJson(ev);
    const type = e?.delta?.type;
    const field = RESTORED[type];
    if (!field || typeof e.index !== "number" || typeof e.delta[field] !== "string") return [ev];
    const before: string = e.delta[field];
    const after = this.channel(e.index, type).push(before);
    if (after === before) return [ev];
    if (!after) return [];
    return [encode("content_block_delta", { ...e, delta: { ...e.delta, [field]: after } })];
  }

  private channel(index: number, type: string): PiiStreamUnmasker {
    let b = this.blocks.get(index);
    if (!b) this.blocks.set(index, (b = { channel: new PiiStreamUnmasker(this.mapping), type }));
    return b.channel;
  }

  /** What block `index` still holds, as one last delta of its type. */
  private flush(index: number): Uint8Array[] {
    const b = this.blocks.get(index);
    if (!b) return [];
    this.blocks.delete(index);
    const rest = b.channel.flush();
    if (!rest) return [];
    const field = RESTORED[b.type]!;
    return [
      encode("content_block_delta", { type: "content_block_delta", index, delta: { type: b.type, [field]: rest } }),
    ];
  }

  private flushAll(): Uint8Array[] {
    return [...this.blocks.keys()].flatMap((i) => this.flush(i));
  }
}
